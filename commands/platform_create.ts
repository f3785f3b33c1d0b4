import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/** Ace adapter of the create-platform action (the back-office uses the same one). */
export default class PlatformCreate extends BaseCommand {
  static commandName = 'platform:create'
  static description = 'Create a platform (tenant) that merchants belong to'
  static options: CommandOptions = { startApp: true }

  @flags.string({ description: 'Short unique code, e.g. "acme"', required: true })
  declare code: string

  @flags.string({ description: 'Display name (default: the code)' })
  declare name?: string

  @flags.string({ description: 'Host of the hosted payment page, e.g. pay.example.com' })
  declare paymentPageDomain?: string

  @flags.boolean({ description: 'Print the result as one JSON object' })
  declare json?: boolean

  async run() {
    const { createPlatform } = await import('#merchants/actions/create_platform')
    const { platformSnapshot } = await import('#merchants/platform_rules')
    const { runAction } = await import('#core/cli')
    const { cliActor } = await import('#core/actor')
    await runAction(this, async () => {
      const platform = await createPlatform(
        { code: this.code, name: this.name, payment_page_domain: this.paymentPageDomain },
        cliActor()
      )
      if (this.json) console.log(JSON.stringify(platformSnapshot(platform)))
      else this.logger.success(`Platform ${platform.code} created`)
    })
  }
}
