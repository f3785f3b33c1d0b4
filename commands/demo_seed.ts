import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'
import { mkdir, readFile, writeFile } from 'node:fs/promises'

interface DemoCredentials {
  merchant_id: string
  token: string
  secret: string
}

/**
 * Seeds a demo platform and merchant into an empty database (development
 * only) and prints their credentials with a ready-to-paste signed request.
 * The credentials are kept in tmp/demo-credentials.json so that every later
 * start can print them again.
 */
export default class DemoSeed extends BaseCommand {
  static commandName = 'demo:seed'
  static description =
    'Seed a demo platform and merchant when the database is empty, and print how to call it'
  static options: CommandOptions = { startApp: true }

  @flags.number({
    description: 'Port the gateway listens on, for the printed example',
    default: 3333,
  })
  declare port: number

  async run() {
    if (this.app.inProduction) {
      this.logger.error('demo:seed does not run in production')
      this.exitCode = 1
      return
    }
    const { default: Platform } = await import('#models/platform')
    const { createPlatform, createMerchant } = await import('#services/onboarding')
    const { postLedgerTransaction } = await import('#ledger/ledger')
    const { default: db } = await import('@adonisjs/lucid/services/db')
    const { cliActor } = await import('#services/audit')

    const file = this.app.tmpPath('demo-credentials.json')
    let credentials: DemoCredentials | undefined

    if ((await Platform.query().count('* as total').first())?.$extras.total > 0) {
      credentials = await readFile(file, 'utf8').then(JSON.parse, () => undefined)
      if (!credentials) {
        this.logger.info(
          'Database already has data; no demo merchant credentials on file to print.'
        )
        return
      }
    } else {
      const actor = cliActor()
      await createPlatform(
        { code: 'demo', name: 'Demo platform', paymentPageDomain: `localhost:${this.port}` },
        actor
      )
      const { merchant, credentials: issued } = await createMerchant(
        { platformCode: 'demo', name: 'Demo Shop', orderPrefix: 'DMO', merchantId: 'DEMO0001' },
        actor
      )
      // An opening balance so that /balance shows the ledger at work.
      await db.transaction((trx) =>
        postLedgerTransaction(trx, {
          kind: 'opening_balance',
          reference: { type: 'merchant', id: merchant.merchantId },
          description: 'demo opening balance',
          legs: [
            { gateway: 'adjustments', amount: -1_000_000 },
            { merchantId: merchant.id, account: 'available', amount: 1_000_000 },
          ],
        })
      )
      credentials = { merchant_id: merchant.merchantId, ...issued }
      await mkdir(this.app.tmpPath(), { recursive: true })
      await writeFile(file, JSON.stringify(credentials, null, 2), { mode: 0o600 })
      this.logger.success(
        'Seeded the demo platform "demo" and merchant DEMO0001 (balance 10,000.00 THB)'
      )
    }

    printExample(credentials, this.port)
  }
}

function printExample(credentials: DemoCredentials, port: number) {
  console.log(`
Demo merchant credentials (development only)
  merchant_id: ${credentials.merchant_id}
  token:       ${credentials.token}
  secret:      ${credentials.secret}

Signed request (paste into a shell; -k accepts the development certificate):

BODY='{"merchant_id":"${credentials.merchant_id}","token":"${credentials.token}","time":'$(date +%s)'}'
SIG=$(printf '%s' "$BODY" | openssl dgst -sha256 -hmac '${credentials.secret}' | sed 's/^.* //')
curl -sk https://localhost:${port}/balance -H 'Content-Type: application/json' -H "X-SIGNATURE: $SIG" --data-binary "$BODY"
`)
}
