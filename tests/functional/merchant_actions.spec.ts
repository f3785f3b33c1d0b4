import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import AuditLog from '#core/audit_log'
import Merchant from '#merchants/models/merchant'
import { createMerchant } from '#merchants/actions/create_merchant'
import { configureMerchant } from '#merchants/actions/configure_merchant'
import { editIpWhitelist } from '#merchants/actions/edit_ip_whitelist'
import { editSettlementAccounts } from '#merchants/actions/edit_settlement_accounts'
import { whitelistFor } from '#merchants/ip_whitelist'
import { settlementAccountsOf } from '#merchants/settlement_accounts'
import type { Actor } from '#core/actor'
import { ace } from '#tests/helpers/ace'
import { byField, refusal } from '#tests/helpers/actions'
import {
  TEST_ACTOR,
  authBody,
  createTestMerchant,
  resetDatabase,
  signedPost,
} from '#tests/helpers/merchants'

const OPERATOR: Actor = {
  name: 'operator:ops@example.test',
  operatorId: 9,
  ip: '198.51.100.20',
  requestId: 'req-merchant',
}

/**
 * A command typed on a server: what the back-office would ask a second admin
 * for applies at once (a break-glass use); the back-office's four eyes are in
 * merchant_settings_four_eyes.spec.ts.
 */
const SHELL: Actor = { name: 'cli:ops' }

async function count(table: string) {
  return Number((await db.from(table).count('* as total').first()).total)
}

async function audits(action: string) {
  return AuditLog.query().where('action', action).orderBy('id')
}

test.group('create_merchant action', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.timeout(60_000)

  test('field errors name their fields; an unknown platform is not found; nothing written', async ({
    assert,
  }) => {
    await createTestMerchant() // platform "test"
    const [merchants, credentials, logs] = [
      await count('merchants'),
      await count('merchant_credentials'),
      await count('audit_logs'),
    ]

    const invalid = await refusal(
      createMerchant(
        { platform: 'test', name: '', order_prefix: 'ab', merchant_id: 'shop' },
        TEST_ACTOR
      )
    )
    assert.deepEqual(byField(invalid), {
      name: 'name is required',
      order_prefix: 'order_prefix: exactly 3 uppercase letters or digits',
      merchant_id: 'merchant_id: up to 32 letters or digits, ending with a digit',
    })
    const unknown = await refusal(createMerchant({ platform: 'nope', name: 'X' }, TEST_ACTOR))
    assert.isTrue(unknown.notFound)
    assert.deepEqual(byField(unknown), { platform: 'platform "nope" does not exist' })

    await createMerchant({ platform: 'test', name: 'A', order_prefix: 'AAA' }, TEST_ACTOR)
    const taken = await refusal(
      createMerchant({ platform: 'test', name: 'B', order_prefix: 'AAA' }, TEST_ACTOR)
    )
    assert.deepEqual(byField(taken), { order_prefix: 'order_prefix AAA is taken' })

    assert.equal(await count('merchants'), merchants + 1)
    assert.equal(await count('merchant_credentials'), credentials + 1)
    assert.equal(await count('audit_logs'), logs + 1)
  })

  test('audits the new merchant with the actor, never its credentials', async ({ assert }) => {
    await createTestMerchant()
    const created = await createMerchant(
      { platform: 'test', name: ' Shop ', order_prefix: 'SHP', merchant_id: 'SHOP42' },
      OPERATOR
    )
    assert.equal(created.merchant.name, 'Shop')
    const [entry] = await AuditLog.query()
      .where('action', 'merchant.create')
      .where('subject_id', 'SHOP42')
    assert.equal(entry.subjectType, 'merchant')
    assert.equal(entry.actor, OPERATOR.name)
    assert.equal(entry.operatorId, 9)
    assert.equal(entry.ip, '198.51.100.20')
    assert.equal(entry.requestId, 'req-merchant')
    assert.isNull(entry.beforeValues)
    assert.deepInclude(entry.afterValues!, {
      platform: 'test',
      merchant_id: 'SHOP42',
      name: 'Shop',
      order_prefix: 'SHP',
      status: 'active',
      deposit_group: null,
    })
    const text = JSON.stringify(entry.$attributes)
    assert.notInclude(text, created.credentials.token)
    assert.notInclude(text, created.credentials.secret)
  })

  test('merchant:create shows the action’s messages and exits 1', async ({ assert }) => {
    await createTestMerchant()
    const result = await ace('merchant:create', '--platform=test', '--name=X', '--prefix=ab')
    assert.equal(result.code, 1, result.output)
    assert.include(result.output, 'order_prefix: exactly 3 uppercase letters or digits')
    assert.equal(await count('merchants'), 1)
  })
})

test.group('configure_merchant action', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.timeout(60_000)

  test('every field type reports its own error, all at once; nothing written', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    const error = await refusal(
      configureMerchant(
        {
          merchant_id: who.merchantId,
          status: 'closed',
          deposit_group: 'bad group!',
          payout_route: 'nosuch',
          payment_enabled: 'maybe',
          order_ttl_seconds: 59,
          slip_upload_wait_seconds: '1.5',
          payment_fee_rate_bps: 'ten',
          withdraw_fee_flat: '1.234',
          withdraw_max: '-5',
          api_rate_limit: 0,
        },
        TEST_ACTOR
      )
    )
    assert.deepEqual(byField(error), {
      status: 'status must be active or suspended',
      deposit_group:
        'deposit_group: 1-64 letters, digits, ".", "-" or "_", starting with a letter or digit',
      payout_route: 'payout_route must be one of: sandbox, bulk_file',
      payment_enabled: 'payment_enabled must be on or off',
      order_ttl_seconds: 'order_ttl_seconds must be a whole number from 60 to 86400',
      slip_upload_wait_seconds: 'slip_upload_wait_seconds must be a whole number',
      payment_fee_rate_bps: 'payment_fee_rate_bps must be a number',
      withdraw_fee_flat:
        'withdraw_fee_flat must be a THB amount with at most 2 decimals (e.g. 20.00)',
      withdraw_max:
        'withdraw_max must be a positive THB amount with at most 2 decimals (e.g. 20.00)',
      api_rate_limit: 'api_rate_limit must be a whole number from 1 to 100000',
    })
    const unknown = await refusal(
      configureMerchant({ merchant_id: 'NOSUCH1', status: 'suspended' }, TEST_ACTOR)
    )
    assert.isTrue(unknown.notFound)
    assert.deepEqual(byField(unknown), { merchant_id: 'No merchant with merchant_id NOSUCH1' })

    const merchant = await Merchant.findByOrFail('merchant_id', who.merchantId)
    assert.equal(merchant.status, 'active')
    assert.equal(merchant.orderTtlSeconds, who.merchant.orderTtlSeconds)
    assert.lengthOf(await audits('merchant.configure'), 0)
  })

  test('minimums above maximums are refused beside the field given; nothing written', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    await configureMerchant(
      { merchant_id: who.merchantId, withdraw_max: '500.00', settlement_max: '1000.00' },
      TEST_ACTOR
    )
    const error = await refusal(
      configureMerchant(
        {
          merchant_id: who.merchantId,
          withdraw_max: '50.00',
          withdraw_min: '100.00',
          settlement_min: '2000.00',
          payment_enabled: 'off',
        },
        TEST_ACTOR
      )
    )
    assert.deepEqual(byField(error), {
      withdraw_max: 'withdraw_min 100.00 is above withdraw_max 50.00',
      settlement_min: 'settlement_min 2000.00 is above settlement_max 1000.00',
    })
    const merchant = await Merchant.findByOrFail('merchant_id', who.merchantId)
    assert.equal(merchant.withdrawMax, 500_00)
    assert.equal(merchant.settlementMin, who.merchant.settlementMin)
    assert.isTrue(merchant.paymentEnabled)
    assert.lengthOf(await audits('merchant.configure'), 1)
  })

  test('audits only the changed settings, before and after, with the comment', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    const result = await configureMerchant(
      {
        merchant_id: who.merchantId,
        status: 'suspended',
        deposit_group: 'shop-pool',
        order_ttl_seconds: '600',
        withdraw_fee_flat: '10',
        withdraw_max: '50,000.00',
        api_rate_limit: 250,
        withdraw_duplicate_check: who.merchant.withdrawDuplicateCheck, // unchanged
        comment: 'chargebacks under review',
      },
      SHELL
    )
    assert.sameMembers(result.changed, [
      'status',
      'deposit_group',
      'order_ttl_seconds',
      'withdraw_fee_flat',
      'withdraw_max',
      'api_rate_limit',
    ])
    assert.include(result.warnings.join(' '), 'the merchant is suspended')
    assert.include(result.warnings.join(' '), 'no active deposit account')

    const [entry] = await audits('merchant.configure')
    assert.equal(entry.subjectId, who.merchantId)
    assert.equal(entry.actor, SHELL.name)
    assert.equal(entry.comment, 'chargebacks under review')
    assert.deepEqual(entry.beforeValues, {
      status: 'active',
      deposit_group: null,
      order_ttl_seconds: who.merchant.orderTtlSeconds,
      withdraw_fee_flat: '0.00',
      withdraw_max: null,
      api_rate_limit: null,
    })
    assert.deepEqual(entry.afterValues, {
      status: 'suspended',
      deposit_group: 'shop-pool',
      order_ttl_seconds: 600,
      withdraw_fee_flat: '10.00',
      withdraw_max: '50000.00',
      api_rate_limit: 250,
    })
    // Suspended: the merchant API refuses the merchant.
    assert.equal((await signedPost('/balance', who, authBody(who))).status, 403)

    // "none"/"unlimited" clear; the same values again change nothing and write nothing.
    const cleared = await configureMerchant(
      {
        merchant_id: who.merchantId,
        status: 'active',
        deposit_group: 'none',
        withdraw_max: 'unlimited',
        api_rate_limit: 'none',
      },
      TEST_ACTOR
    )
    assert.sameMembers(cleared.changed, [
      'status',
      'deposit_group',
      'withdraw_max',
      'api_rate_limit',
    ])
    assert.isNull(cleared.merchant.depositGroup)
    assert.isNull(cleared.merchant.withdrawMax)
    const again = await configureMerchant(
      { merchant_id: who.merchantId, status: 'active', order_ttl_seconds: 600 },
      TEST_ACTOR
    )
    assert.deepEqual(again.changed, [])
    assert.lengthOf(await audits('merchant.configure'), 2)
    assert.equal((await signedPost('/balance', who, authBody(who))).status, 200)
  })
})

test.group('edit_ip_whitelist and edit_settlement_accounts actions', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.timeout(60_000)

  test('whitelist: a bad entry names its list and writes nothing, even beside good ones', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    const error = await refusal(
      editIpWhitelist(
        { merchant_id: who.merchantId, add: ['203.0.113.7', 'not-an-ip'], remove: ['10.0.0.0/33'] },
        TEST_ACTOR
      )
    )
    assert.deepEqual(byField(error), {
      'add.1': 'add: "not-an-ip" is not an IPv4/IPv6 address or CIDR block',
      'remove.0': 'remove: "10.0.0.0/33" is not an IPv4/IPv6 address or CIDR block',
    })
    assert.deepEqual(await whitelistFor(who.merchant.id), [])
    assert.lengthOf(await audits('merchant.ip_whitelist.edit'), 0)

    const cli = await ace('merchant:ip-whitelist', who.merchantId, '--add=not-an-ip')
    assert.equal(cli.code, 1, cli.output)
    assert.include(cli.output, 'add: "not-an-ip" is not an IPv4/IPv6 address or CIDR block')
  })

  test('whitelist: one audit row with the list before and after; no-ops write nothing', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    await editIpWhitelist({ merchant_id: who.merchantId, add: ['203.0.113.7'] }, TEST_ACTOR)
    const result = await editIpWhitelist(
      {
        merchant_id: who.merchantId,
        add: ['203.0.113.7', '198.51.100.0/24'],
        remove: ['203.0.113.7', '192.0.2.1'],
        comment: 'new office',
      },
      SHELL
    )
    assert.deepEqual(result.added, ['198.51.100.0/24'])
    assert.deepEqual(result.alreadyListed, ['203.0.113.7/32'])
    assert.deepEqual(result.removed, ['203.0.113.7/32'])
    assert.deepEqual(result.notListed, ['192.0.2.1/32'])
    assert.deepEqual(result.whitelist, ['198.51.100.0/24'])

    const rows = await audits('merchant.ip_whitelist.edit')
    assert.lengthOf(rows, 2)
    assert.deepEqual(rows[1].beforeValues, { ip_whitelist: ['203.0.113.7/32'] })
    assert.deepEqual(rows[1].afterValues, { ip_whitelist: ['198.51.100.0/24'] })
    assert.equal(rows[1].actor, SHELL.name)
    assert.equal(rows[1].comment, 'new office')

    await editIpWhitelist(
      { merchant_id: who.merchantId, add: ['198.51.100.0/24'], remove: ['192.0.2.1'] },
      TEST_ACTOR
    )
    assert.lengthOf(await audits('merchant.ip_whitelist.edit'), 2)
  })

  test('settlement accounts: bad entries and unregistered removals are refused; nothing written', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    const bad = await refusal(
      editSettlementAccounts(
        { merchant_id: who.merchantId, add: ['KBANK:1234567890', 'KBANK:12345'] },
        TEST_ACTOR
      )
    )
    assert.deepEqual(byField(bad), {
      'add.1':
        'add: "KBANK:12345" is not BANK:ACCOUNT_NO with a known bank code and 10 to 15 digits',
    })
    const missing = await refusal(
      editSettlementAccounts(
        { merchant_id: who.merchantId, add: ['SCB:1112223334'], remove: ['KBANK:1234567890'] },
        TEST_ACTOR
      )
    )
    assert.deepEqual(byField(missing), {
      remove: 'remove: KBANK:1234567890 is not a registered settlement account',
    })
    assert.deepEqual(await settlementAccountsOf(who.merchant.id), [])
    assert.lengthOf(await audits('merchant.settlement_accounts.edit'), 0)

    const cli = await ace(
      'merchant:settlement-accounts',
      who.merchantId,
      '--remove=KBANK:1234567890'
    )
    assert.equal(cli.code, 1, cli.output)
    assert.include(cli.output, 'remove: KBANK:1234567890 is not a registered settlement account')
  })

  test('settlement accounts: audited with the list before and after', async ({ assert }) => {
    const who = await createTestMerchant()
    await editSettlementAccounts(
      { merchant_id: who.merchantId, add: ['KBANK:123-4-56789-0'] },
      TEST_ACTOR
    )
    const result = await editSettlementAccounts(
      { merchant_id: who.merchantId, add: ['SCB:1112223334'], remove: ['KBANK:1234567890'] },
      SHELL
    )
    assert.deepEqual(result.settlementAccounts, ['SCB:1112223334'])
    const rows = await audits('merchant.settlement_accounts.edit')
    assert.lengthOf(rows, 2)
    assert.deepEqual(rows[0].afterValues, { settlement_accounts: ['KBANK:1234567890'] })
    assert.deepEqual(rows[1].beforeValues, { settlement_accounts: ['KBANK:1234567890'] })
    assert.deepEqual(rows[1].afterValues, { settlement_accounts: ['SCB:1112223334'] })
    assert.equal(rows[1].actor, SHELL.name)
  })
})
