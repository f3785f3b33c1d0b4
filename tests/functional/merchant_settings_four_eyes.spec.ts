import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Merchant from '#merchants/models/merchant'
import Platform from '#merchants/models/platform'
import ApprovalRequest from '#approvals/models/approval_request'
import { configureMerchant } from '#merchants/actions/configure_merchant'
import { configurePlatform } from '#merchants/actions/configure_platform'
import { editIpWhitelist } from '#merchants/actions/edit_ip_whitelist'
import { editSettlementAccounts } from '#merchants/actions/edit_settlement_accounts'
import { approveRequest } from '#approvals/actions/approve_request'
import { settlementAccountsOf } from '#merchants/settlement_accounts'
import type { Actor } from '#core/actor'
import { ace } from '#tests/helpers/ace'
import { refusal } from '#tests/helpers/actions'
import { assertError } from '#tests/helpers/envelope'
import { auditRows, operatorActor } from '#tests/helpers/decisions'
import {
  PAYOUT_FIELDS,
  TEST_ACTOR,
  authBody,
  createDepositAccount,
  createDepositMerchant,
  createPayoutMerchant,
  resetDatabase,
  signedPost,
  type TestMerchant,
} from '#tests/helpers/merchants'

/*
 * A merchant's money settings and the platform's payment page domain: in the
 * back-office one admin's change opens a request and moves nothing; a second
 * admin carries it out as stored; the requester cannot approve it; from the
 * server's shell it applies at once as a recorded break-glass use.
 */

async function people() {
  return {
    dave: (await operatorActor('dave@example.com', 'admin')).actor,
    erin: (await operatorActor('erin@example.com', 'admin')).actor,
    olga: (await operatorActor('olga@example.com', 'operator')).actor,
  }
}

function approve(request: ApprovalRequest, actor: Actor) {
  return approveRequest(
    { approval_request_id: request.id, comment: 'checked with the merchant' },
    actor
  )
}

let sequence = 0
function settle(who: TestMerchant, bank: string, accountNo: string, amount = '500.00') {
  sequence += 1
  return signedPost(
    '/thb-settlement/create',
    who,
    authBody(who, {
      ...PAYOUT_FIELDS,
      merchant_order_id: `S${sequence}`,
      amount,
      bank,
      account_no: accountNo,
    })
  )
}

function withdraw(who: TestMerchant) {
  sequence += 1
  return signedPost(
    '/withdraw/create',
    who,
    authBody(who, { ...PAYOUT_FIELDS, merchant_order_id: `W${sequence}` })
  )
}

async function breakGlass() {
  const audits = await db.from('audit_logs').where('action', 'break_glass.use').orderBy('id')
  const notices = await db.from('notifications').where('kind', 'break_glass').orderBy('id')
  return { audits, notices }
}

const json = (value: any) => (typeof value === 'string' ? JSON.parse(value) : value)

test.group('four eyes: settlement accounts', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.timeout(60_000)

  test('one admin registers an account: nothing changes and /thb-settlement/create to it is refused; the requester cannot approve; a second admin does, as stored', async ({
    assert,
  }) => {
    const { dave, erin } = await people()
    const who = await createPayoutMerchant(10_000_00)
    await editSettlementAccounts(
      { merchant_id: who.merchantId, add: ['SCB:1112223334'] },
      TEST_ACTOR
    )

    const asked = await editSettlementAccounts(
      { merchant_id: who.merchantId, add: ['KBANK:123-4-56789-0'], comment: 'new company account' },
      dave
    )
    const request = asked.request!
    assert.isNotNull(request)
    assert.equal(request.action, 'merchant.settlement_accounts')
    assert.equal(request.kind, 'settlement_accounts')
    assert.deepEqual(request.input, {
      merchant_id: who.merchantId,
      add: ['KBANK:1234567890'],
      comment: 'new company account',
    })
    assert.deepEqual(json(request.changeBefore), { settlement_accounts: 'SCB:1112223334' })
    assert.deepEqual(json(request.changeAfter), {
      settlement_accounts: 'SCB:1112223334, KBANK:1234567890',
    })
    assert.deepEqual(asked.settlementAccounts, ['SCB:1112223334'])
    assert.deepEqual(await settlementAccountsOf(who.merchant.id), ['SCB:1112223334'])
    // Every admin is told a sensitive request waits.
    const notices = await db.from('notifications').where('approval_request_id', request.id)
    assert.lengthOf(notices, 1)
    assert.equal(notices[0].kind, 'request')

    const refused = await settle(who, 'KBANK', '1234567890')
    assertError(assert, refused, 400, 'invalid-inputs', /KBANK 1234567890/)

    // The same admin asking again is told it waits; another one asking is refused.
    const again = await refusal(
      editSettlementAccounts({ merchant_id: who.merchantId, add: ['KBANK:1234567890'] }, dave)
    )
    assert.include(again.errors[0].message, `approval request #${request.id}`)
    const own = await refusal(approve(request, dave))
    assert.include(own.errors[0].message, 'another operator must approve it')
    assert.deepEqual(await settlementAccountsOf(who.merchant.id), ['SCB:1112223334'])

    await approve(request, erin)
    assert.equal((await request.refresh()).status, 'approved')
    assert.deepEqual(await settlementAccountsOf(who.merchant.id), [
      'SCB:1112223334',
      'KBANK:1234567890',
    ])
    const accepted = await settle(who, 'KBANK', '1234567890')
    assert.equal(accepted.status, 200, accepted.text)

    const [edit] = await auditRows('merchant.settlement_accounts.edit').then((rows) =>
      rows.filter((row) => row.actor === erin.name)
    )
    assert.deepEqual(edit.after_values, {
      settlement_accounts: ['SCB:1112223334', 'KBANK:1234567890'],
    })
    assert.include(edit.details, { approval_request_id: request.id, requested_by: dave.name })
    assert.equal(edit.comment, 'new company account')
  })

  test('removing the last account, approved, leaves every settlement refused; a merchant that never registered one settles anywhere', async ({
    assert,
  }) => {
    const { dave, erin } = await people()
    const who = await createPayoutMerchant(10_000_00)
    await editSettlementAccounts(
      { merchant_id: who.merchantId, add: ['KBANK:1234567890'] },
      TEST_ACTOR
    )
    const { request } = await editSettlementAccounts(
      { merchant_id: who.merchantId, remove: ['KBANK:1234567890'] },
      dave
    )
    assert.deepEqual(json(request!.changeAfter), {
      settlement_accounts: 'none: every settlement refused',
    })
    assert.equal((await settle(who, 'KBANK', '1234567890')).status, 200, 'still registered')
    await approve(request!, erin)
    assert.deepEqual(await settlementAccountsOf(who.merchant.id), [])

    for (const [bank, accountNo] of [
      ['KBANK', '1234567890'],
      ['BBL', '9876543210'],
    ]) {
      const refused = await settle(who, bank, accountNo)
      assertError(assert, refused, 400, 'invalid-inputs', /none is registered/)
    }
    const [row] = await db.from('merchants').where('id', who.merchant.id)
    assert.equal(Number(row.settlement_accounts_required), 1)

    const never = await createPayoutMerchant(10_000_00)
    assert.equal((await settle(never, 'BBL', '9876543210')).status, 200)
  })

  test('merchant:settlement-accounts applies at once and is recorded as a break-glass use', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(10_000_00)
    const added = await ace(
      'merchant:settlement-accounts',
      who.merchantId,
      '--add=KBANK:1234567890'
    )
    assert.equal(added.code, 0, added.output)
    assert.include(added.stdout, `${who.merchantId} settles only to: KBANK:1234567890`)
    assert.deepEqual(await settlementAccountsOf(who.merchant.id), ['KBANK:1234567890'])
    const removed = await ace(
      'merchant:settlement-accounts',
      who.merchantId,
      '--remove=KBANK:1234567890'
    )
    assert.equal(removed.code, 0, removed.output)
    assert.include(removed.stdout, 'every settlement is refused until one is')

    const { audits, notices } = await breakGlass()
    assert.lengthOf(audits, 2)
    assert.equal(json(audits[0].details).action, 'merchant.settlement_accounts')
    assert.equal(audits[0].subject_id, who.merchantId)
    assert.lengthOf(notices, 2)
    assert.include(notices[0].summary, 'KBANK:1234567890')
    assert.lengthOf(await ApprovalRequest.all(), 0)
  })
})

test.group('four eyes: payout route, fees, limits, permissions', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.timeout(60_000)

  test('a fee change waits (the old fee is charged) while the rest of the form is saved; approved, the new fee applies', async ({
    assert,
  }) => {
    const { dave, erin } = await people()
    const who = await createPayoutMerchant(10_000_00, { settlementFeeFlat: 25_00 })
    const result = await configureMerchant(
      {
        merchant_id: who.merchantId,
        settlement_fee_flat: '10',
        order_ttl_seconds: '1200',
        comment: 'new contract',
      },
      dave
    )
    assert.deepEqual(result.changed, ['order_ttl_seconds'])
    const request = result.request!
    assert.equal(request.action, 'merchant.configure')
    assert.deepEqual(request.input, {
      merchant_id: who.merchantId,
      settlement_fee_flat: 1000,
      comment: 'new contract',
    })
    assert.deepEqual(json(request.changeBefore), { settlement_fee_flat: '25.00 THB' })
    assert.deepEqual(json(request.changeAfter), { settlement_fee_flat: '10.00 THB' })
    const merchant = await Merchant.findOrFail(who.merchant.id)
    assert.equal(merchant.orderTtlSeconds, 1200)
    assert.equal(merchant.settlementFeeFlat, 25_00)

    const before = await settle(who, 'KBANK', '1234567890')
    assert.equal(before.json.data.fee, 25)
    assert.include((await refusal(approve(request, dave))).errors[0].message, 'another operator')
    await approve(request, erin)
    assert.equal((await merchant.refresh()).settlementFeeFlat, 10_00)
    const after = await settle(who, 'KBANK', '1234567890')
    assert.equal(after.json.data.fee, 10)
  })

  test('a payout route set waits (withdrawals still refused); removing it is at once; limits: narrowing at once, widening waits', async ({
    assert,
  }) => {
    const { dave, erin, olga } = await people()
    const who = await createPayoutMerchant(10_000_00)
    const cleared = await configureMerchant(
      { merchant_id: who.merchantId, payout_route: 'none' },
      dave
    )
    assert.deepEqual(cleared.changed, ['payout_route'])
    assert.isNull(cleared.request)
    assertError(assert, await withdraw(who), 404, 'not-found')

    const { request } = await configureMerchant(
      { merchant_id: who.merchantId, payout_route: 'sandbox' },
      dave
    )
    assert.deepEqual(json(request!.changeAfter), { payout_route: 'sandbox' })
    assertError(assert, await withdraw(who), 404, 'not-found')
    // An operator may not decide on a merchant's settings.
    assert.include((await refusal(approve(request!, olga))).errors[0].message, 'admin role')
    await approve(request!, erin)
    assert.equal((await withdraw(who)).status, 200)

    const narrowed = await configureMerchant(
      { merchant_id: who.merchantId, settlement_max: '1000' },
      dave
    )
    assert.deepEqual(narrowed.changed, ['settlement_max'])
    assert.isNull(narrowed.request)
    const widened = await configureMerchant(
      { merchant_id: who.merchantId, settlement_max: '100000', settlement_min: '50' },
      dave
    )
    assert.deepEqual(widened.changed, [])
    assert.deepEqual(json(widened.request!.changeAfter), {
      settlement_min: '50.00 THB',
      settlement_max: '100,000.00 THB',
    })
    assertError(assert, await settle(who, 'KBANK', '1234567890', '2000.00'), 400, 'invalid-inputs')
    await approve(widened.request!, erin)
    assert.equal((await settle(who, 'KBANK', '1234567890', '2000.00')).status, 200)
  })

  test('switching a permission off and suspending are at once; on again and activating wait', async ({
    assert,
  }) => {
    const { dave, erin } = await people()
    const who = await createPayoutMerchant(10_000_00)
    const off = await configureMerchant(
      { merchant_id: who.merchantId, withdraw_enabled: 'off', status: 'suspended' },
      dave
    )
    assert.sameMembers(off.changed, ['withdraw_enabled', 'status'])
    assert.isNull(off.request)
    const on = await configureMerchant(
      { merchant_id: who.merchantId, withdraw_enabled: 'on', status: 'active' },
      dave
    )
    assert.deepEqual(on.changed, [])
    assert.deepEqual(json(on.request!.changeAfter), { status: 'active', withdraw_enabled: 'on' })
    assert.equal((await signedPost('/balance', who, authBody(who))).status, 403)
    await approve(on.request!, erin)
    assert.equal((await signedPost('/balance', who, authBody(who))).status, 200)
    assert.equal((await withdraw(who)).status, 200)
  })

  test('merchant:configure applies a fee at once as a break-glass use; a narrowing change is not one', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(10_000_00)
    const fee = await ace('merchant:configure', who.merchantId, '--settlement-fee=12.50')
    assert.equal(fee.code, 0, fee.output)
    assert.equal((await Merchant.findOrFail(who.merchant.id)).settlementFeeFlat, 12_50)
    const narrow = await ace('merchant:configure', who.merchantId, '--withdrawals=off')
    assert.equal(narrow.code, 0, narrow.output)
    const { audits, notices } = await breakGlass()
    assert.lengthOf(audits, 1)
    assert.equal(json(audits[0].details).action, 'merchant.configure')
    assert.include(json(audits[0].details).summary, 'settlement_fee_flat 0.00 THB → 12.50 THB')
    assert.lengthOf(notices, 1)
  })
})

test.group('four eyes: IP whitelist', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.timeout(60_000)

  test('an address added to a list waits (calls from it refused); removing one of several and a first entry are at once; removing the last waits', async ({
    assert,
  }) => {
    const { dave, erin } = await people()
    const who = await createPayoutMerchant()
    const balance = (localAddress: string) =>
      signedPost('/balance', who, authBody(who), { localAddress })

    const first = await editIpWhitelist({ merchant_id: who.merchantId, add: ['127.0.0.1'] }, dave)
    assert.isNull(first.request, 'a first entry only narrows')
    assert.deepEqual(first.whitelist, ['127.0.0.1/32'])
    assertError(assert, await balance('127.0.0.5'), 403, 'ip-not-whitelisted')

    const asked = await editIpWhitelist({ merchant_id: who.merchantId, add: ['127.0.0.5'] }, dave)
    assert.deepEqual(json(asked.request!.changeAfter), {
      ip_whitelist: '127.0.0.1/32, 127.0.0.5/32',
    })
    assertError(assert, await balance('127.0.0.5'), 403, 'ip-not-whitelisted')
    assert.include((await refusal(approve(asked.request!, dave))).errors[0].message, 'another')
    await approve(asked.request!, erin)
    assert.equal((await balance('127.0.0.5')).status, 200)

    const narrowed = await editIpWhitelist(
      { merchant_id: who.merchantId, remove: ['127.0.0.1'] },
      dave
    )
    assert.isNull(narrowed.request)
    assert.deepEqual(narrowed.whitelist, ['127.0.0.5/32'])
    assertError(assert, await balance('127.0.0.1'), 403, 'ip-not-whitelisted')

    const last = await editIpWhitelist({ merchant_id: who.merchantId, remove: ['127.0.0.5'] }, dave)
    assert.deepEqual(json(last.request!.changeAfter), { ip_whitelist: 'none: every source' })
    assertError(assert, await balance('127.0.0.1'), 403, 'ip-not-whitelisted')
    await approve(last.request!, erin)
    assert.equal((await balance('127.0.0.1')).status, 200)
  })

  test('merchant:ip-whitelist adding to a list is a break-glass use', async ({ assert }) => {
    const who = await createPayoutMerchant()
    await ace('merchant:ip-whitelist', who.merchantId, '--add=203.0.113.7')
    const added = await ace('merchant:ip-whitelist', who.merchantId, '--add=198.51.100.0/24')
    assert.equal(added.code, 0, added.output)
    const { audits, notices } = await breakGlass()
    assert.lengthOf(audits, 1, 'the first entry only narrowed')
    assert.equal(json(audits[0].details).action, 'merchant.ip_whitelist')
    assert.lengthOf(notices, 1)
  })
})

test.group('four eyes: the payment page domain', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.timeout(60_000)

  test('a new domain waits (payment_url keeps the old host); approved by a second admin; removing it is at once; the command line is break-glass', async ({
    assert,
  }) => {
    const { dave, erin } = await people()
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'qr' })
    const flex = () => {
      sequence += 1
      return signedPost(
        '/payment/create-flex',
        who,
        authBody(who, {
          merchant_order_id: `F${sequence}`,
          amount: '100.00',
          bank: 'SCB',
          account_name: 'Somchai Jaidee',
          account_no: '1234567890',
        })
      )
    }
    const { requests, changed } = await configurePlatform(
      { code: 'test', payment_page_domain: 'pay.elsewhere.example', name: 'Test platform 2' },
      dave
    )
    assert.deepEqual(changed, ['name'])
    assert.lengthOf(requests, 1)
    assert.equal(requests[0].action, 'platform.payment_page_domain')
    assert.deepEqual(json(requests[0].changeBefore), { payment_page_domain: 'pay.example.test' })
    assert.deepEqual(json(requests[0].changeAfter), {
      payment_page_domain: 'pay.elsewhere.example',
    })
    const waiting = await flex()
    assert.equal(waiting.status, 200, waiting.text)
    assert.match(waiting.json.data.payment_url, /^https:\/\/pay\.example\.test\//)
    assert.include((await refusal(approve(requests[0], dave))).errors[0].message, 'another')

    await approve(requests[0], erin)
    assert.equal(
      (await Platform.findByOrFail('code', 'test')).paymentPageDomain,
      'pay.elsewhere.example'
    )
    assert.match((await flex()).json.data.payment_url, /^https:\/\/pay\.elsewhere\.example\//)

    const removed = await configurePlatform({ code: 'test', payment_page_domain: 'none' }, dave)
    assert.deepEqual(removed.changed, ['payment_page_domain'])
    assert.lengthOf(removed.requests, 0)

    const cli = await ace('platform:configure', 'test', '--payment-page-domain=pay.shell.example')
    assert.equal(cli.code, 0, cli.output)
    assert.equal(
      (await Platform.findByOrFail('code', 'test')).paymentPageDomain,
      'pay.shell.example'
    )
    const { audits, notices } = await breakGlass()
    assert.lengthOf(audits, 1)
    assert.equal(json(audits[0].details).action, 'platform.payment_page_domain')
    assert.lengthOf(notices, 1)
    assert.include(notices[0].summary, 'pay.shell.example')
  })
})
