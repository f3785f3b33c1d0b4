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
 * only) and prints their credentials with ready-to-paste signed requests.
 * The merchant draws its deposits from group "demo", which gets one account
 * of every kind: PromptPay QR, bank transfer, bill-payment QR and an external
 * (sandbox) provider. The credentials are kept in tmp/demo-credentials.json
 * so that every later start can print them again.
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
    const { default: Platform } = await import('#merchants/models/platform')
    const { default: Merchant } = await import('#merchants/models/merchant')
    const { createPlatform } = await import('#merchants/actions/create_platform')
    const { createMerchant } = await import('#merchants/actions/create_merchant')
    const { configureMerchant } = await import('#merchants/actions/configure_merchant')
    const { postLedgerTransaction } = await import('#ledger/ledger')
    const { adjustmentPosting } = await import('#ledger/recipes')
    const { inTransaction } = await import('#core/transaction')
    const { cliActor } = await import('#core/actor')
    const { createDepositAccount } = await import('#payments/actions/create_deposit_account')

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
      const demo = await Merchant.findBy('merchant_id', credentials.merchant_id)
      if (demo && !demo.depositGroup) {
        this.logger.warning(
          `${demo.merchantId} has no deposit group, so payment create answers 404. Seed afresh ` +
            '(drop the database and delete tmp/demo-credentials.json) to get the demo deposit ' +
            'accounts, or add them with deposit-account:create and merchant:configure.'
        )
      }
    } else {
      const actor = cliActor()
      await createPlatform(
        { code: 'demo', name: 'Demo platform', payment_page_domain: `localhost:${this.port}` },
        actor
      )
      const { merchant, credentials: issued } = await createMerchant(
        { platform: 'demo', name: 'Demo Shop', order_prefix: 'DMO', merchant_id: 'DEMO0001' },
        actor
      )
      // An opening balance so that /balance shows the ledger at work.
      await inTransaction((trx) =>
        postLedgerTransaction(
          trx,
          adjustmentPosting({
            merchantId: merchant.id,
            reference: { type: 'merchant', id: merchant.merchantId },
            amount: 1_000_000,
            description: 'demo opening balance',
          })
        )
      )
      // Every kind of deposit: QR and bill-payment QR for /payment/create, the
      // transfer account for /payment/create-transfer, all four for flex.
      for (const account of DEMO_DEPOSIT_ACCOUNTS) {
        await createDepositAccount({ deposit_group: 'demo', ...account }, actor)
      }
      // Payouts through the sandbox bank, with a 5.00 withdraw fee and a 20.00 settlement fee.
      await configureMerchant(
        {
          merchant_id: merchant.merchantId,
          deposit_group: 'demo',
          payout_route: 'sandbox',
          withdraw_fee_flat: '5.00',
          settlement_fee_flat: '20.00',
        },
        actor
      )
      credentials = { merchant_id: merchant.merchantId, ...issued }
      await mkdir(this.app.tmpPath(), { recursive: true })
      await writeFile(file, JSON.stringify(credentials, null, 2), { mode: 0o600 })
      this.logger.success(
        'Seeded the demo platform "demo" and merchant DEMO0001 (balance 10,000.00 THB)'
      )
      this.logger.success(
        `Seeded ${DEMO_DEPOSIT_ACCOUNTS.length} deposit accounts in group "demo" (PromptPay QR, transfer, bill-payment QR, sandbox provider)`
      )
    }

    printExample(credentials, this.port)
  }
}

const DEMO_DEPOSIT_ACCOUNTS = [
  {
    channel: 'qr',
    bank: 'KBANK',
    account_no: '0011234567',
    account_name: 'Demo Shop Co., Ltd.',
    promptpay_id: '0812345678',
    priority: 10,
  },
  {
    channel: 'transfer',
    bank: 'SCB',
    account_no: '4021234567',
    account_name: 'Demo Shop Co., Ltd.',
  },
  {
    channel: 'qr',
    bank: 'BBL',
    account_no: '1010123456',
    account_name: 'Demo Shop Co., Ltd.',
    biller_id: '010555012345678',
    priority: 0,
  },
  {
    channel: 'external',
    bank: 'KTB',
    account_no: '9000000001',
    account_name: 'Demo Shop (sandbox provider)',
    provider: 'sandbox',
    priority: 0,
  },
]

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

A QR payment of 100.00 THB (POST /payment/create; merchant_order_id must be new, so it comes from the date):

BODY='{"merchant_id":"${credentials.merchant_id}","token":"${credentials.token}","time":'$(date +%s)',"merchant_order_id":"DEMO'$(date +%s)'","amount":"100.00","bank":"KBANK","account_name":"Somchai Jaidee","account_no":"1234567890"}'
SIG=$(printf '%s' "$BODY" | openssl dgst -sha256 -hmac '${credentials.secret}' | sed 's/^.* //')
curl -sk https://localhost:${port}/payment/create -H 'Content-Type: application/json' -H "X-SIGNATURE: $SIG" --data-binary "$BODY"

The answer carries the PromptPay qrcode and payment_url: open payment_url in a browser for the
hosted payment page (QR and countdown). The demo platform's payment_page_domain is
localhost:${port}, already set. /payment/create-transfer and /payment/create-flex take the same body.
`)
}
