import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'
import { cliActor } from '#services/audit'

export default class PlatformCreate extends BaseCommand {
  static commandName = 'platform:create'
  static description = 'Create a platform (tenant) that merchants belong to'
  static options: CommandOptions = { startApp: true }

  @flags.string({ description: 'Short unique code, e.g. "acme"', required: true })
  declare code: string

  @flags.string({ description: 'Display name' })
  declare name?: string

  @flags.string({ description: 'Host of the hosted payment page, e.g. pay.example.com' })
  declare paymentPageDomain?: string

  @flags.boolean({ description: 'Print the result as one JSON object' })
  declare json?: boolean

  async run() {
    const { createPlatform, OnboardingError } = await import('#services/onboarding')
    try {
      const platform = await createPlatform(
        {
          code: this.code,
          name: this.name ?? this.code,
          paymentPageDomain: this.paymentPageDomain,
        },
        cliActor()
      )
      if (this.json) {
        console.log(
          JSON.stringify({
            code: platform.code,
            name: platform.name,
            payment_page_domain: platform.paymentPageDomain,
          })
        )
      } else {
        this.logger.success(`Platform ${platform.code} created`)
      }
    } catch (error) {
      if (!(error instanceof OnboardingError)) throw error
      this.logger.error(error.message)
      this.exitCode = 1
    }
  }
}
