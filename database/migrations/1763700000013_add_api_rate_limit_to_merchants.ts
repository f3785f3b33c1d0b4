import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * A merchant's own request rate limit on the merchant API, in requests per
 * second; null means the gateway default (API_RATE_LIMIT_PER_MERCHANT).
 */
export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('merchants', (table) => {
      table.integer('api_rate_limit').unsigned().nullable().after('slip_upload_wait_seconds')
    })
  }

  async down() {
    this.schema.alterTable('merchants', (table) => {
      table.dropColumn('api_rate_limit')
    })
  }
}
