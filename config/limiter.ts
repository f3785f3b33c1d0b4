import { defineConfig, stores } from '@adonisjs/limiter'

/**
 * Rate limits of the back-office (failed logins). A handful of rows in the
 * database is plenty for that volume and needs no second Redis client; the
 * merchant API's limits live in Redis (app/merchant_api/rate_limits.ts).
 */
const limiterConfig = defineConfig({
  default: 'database',
  stores: {
    database: stores.database({ tableName: 'rate_limits' }),
  },
})

export default limiterConfig

declare module '@adonisjs/limiter/types' {
  export interface LimitersList extends InferLimiters<typeof limiterConfig> {}
}
