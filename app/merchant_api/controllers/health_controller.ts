import type { HttpContext } from '@adonisjs/core/http'
import { inject } from '@adonisjs/core'
import { HealthService } from '#core/health'

@inject()
export default class HealthController {
  constructor(private health: HealthService) {}

  /** GET /health: 200 when MySQL and Redis both answer, 503 otherwise. */
  async handle({ response }: HttpContext) {
    const report = await this.health.check()
    response.status(report.healthy ? 200 : 503)
    response.header('Cache-Control', 'no-store')
    return report
  }
}
