import env from '#start/env'
import { defineConfig, drivers } from '@adonisjs/core/encryption'

/**
 * Outside production a fixed development key lets the gateway start without a
 * .env file. It protects nothing: production refuses to boot without APP_KEY
 * (see start/env.ts).
 */
const DEVELOPMENT_APP_KEY = 'development-only-key-not-secret-000000'

const appKey = env.get('APP_KEY')?.release() ?? DEVELOPMENT_APP_KEY
if (
  env.get('NODE_ENV') === 'production' &&
  (appKey.length < 32 || appKey === DEVELOPMENT_APP_KEY)
) {
  throw new Error('APP_KEY must be a private value of at least 32 characters in production')
}

const encryptionConfig = defineConfig({
  default: 'gcm',
  list: {
    gcm: drivers.aes256gcm({
      keys: [appKey],
      id: 'gcm',
    }),
  },
})

export default encryptionConfig

declare module '@adonisjs/core/types' {
  export interface EncryptorsList extends InferEncryptors<typeof encryptionConfig> {}
}
