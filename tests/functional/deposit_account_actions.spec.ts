import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import AuditLog from '#core/audit_log'
import DepositAccount from '#payments/models/deposit_account'
import type { Actor } from '#core/actor'
import { createDepositAccount } from '#payments/actions/create_deposit_account'
import { updateDepositAccount } from '#payments/actions/update_deposit_account'
import { resetDatabase } from '#tests/helpers/merchants'
import { byField, refusal } from '#tests/helpers/actions'

/**
 * The pool's rules, checked through the actions as the server's shell runs
 * them (at once; the back-office's requests for a second admin are in
 * deposit_account_four_eyes.spec.ts).
 */
const SHELL: Actor = {
  name: 'cli:ops',
  ip: '203.0.113.9',
  requestId: 'req-1',
}

/** The account a create from the shell adds. */
async function added(input: Record<string, unknown>) {
  const { account } = await createDepositAccount(input, SHELL)
  return account!
}

const QR = {
  deposit_group: 'shop-pool',
  channel: 'qr',
  bank: 'KBANK',
  account_no: '123-4-56789-0',
  account_name: 'Shop Co., Ltd.',
  promptpay_id: '081-234-5678',
}

async function counts() {
  const [accounts, audits] = await Promise.all([
    db.from('deposit_accounts').count('* as total').first(),
    db.from('audit_logs').count('* as total').first(),
  ])
  return { accounts: Number(accounts.total), audits: Number(audits.total) }
}

test.group('create_deposit_account action', (group) => {
  group.each.setup(() => resetDatabase())

  test('creates the account with its defaults and audits the snapshot with the actor', async ({
    assert,
  }) => {
    const account = await added({
      ...QR,
      max_amount: '50,000',
      hourly_count_limit: '30',
      daily_amount_limit: '200000.50',
      priority: '10',
      comment: 'new KBANK account',
    })
    await account.refresh()
    assert.equal(account.depositGroup, 'shop-pool')
    assert.equal(account.accountNo, '1234567890')
    assert.equal(account.promptpayId, '0812345678')
    assert.equal(account.minAmount, 2000, 'default 20.00')
    assert.equal(account.maxAmount, 5_000_000)
    assert.equal(account.hourlyCountLimit, 30)
    assert.isNull(account.hourlyAmountLimit)
    assert.equal(account.dailyAmountLimit, 20_000_050)
    assert.equal(account.maxAdjustment, 999)
    assert.equal(account.priority, 10)
    assert.isTrue(account.active)

    const audit = await AuditLog.query().where('action', 'deposit_account.create').firstOrFail()
    assert.equal(audit.actor, SHELL.name)
    // From the shell, beyond four eyes: a break-glass use beside it.
    const use = await AuditLog.query().where('action', 'break_glass.use').firstOrFail()
    assert.equal(use.actor, SHELL.name)
    assert.isNull(audit.operatorId)
    assert.equal(audit.ip, SHELL.ip)
    assert.equal(audit.requestId, SHELL.requestId)
    assert.equal(audit.subjectType, 'deposit_account')
    assert.equal(audit.subjectId, String(account.id))
    assert.equal(audit.comment, 'new KBANK account')
    assert.isNull(audit.beforeValues)
    assert.deepEqual(audit.afterValues, {
      deposit_group: 'shop-pool',
      channel: 'qr',
      bank: 'KBANK',
      account_no: '1234567890',
      account_name: 'Shop Co., Ltd.',
      promptpay_id: '0812345678',
      biller_id: null,
      provider: null,
      provider_config: null,
      min_amount: '20.00',
      max_amount: '50000.00',
      hourly_count_limit: 30,
      hourly_amount_limit: null,
      daily_count_limit: null,
      daily_amount_limit: '200000.50',
      max_adjustment: 999,
      priority: 10,
      active: true,
      statement_layout_id: null,
    })
  })

  test('every invalid field is named in its own message, and nothing is written', async ({
    assert,
  }) => {
    const error = await refusal(
      createDepositAccount(
        {
          deposit_group: '-bad group',
          channel: 'cash',
          bank: 'KBANKX',
          account_no: '12',
          account_name: 'x'.repeat(121),
          promptpay_id: '12345',
          biller_id: '0105550123',
          provider: 'acme',
          provider_config: '[1]',
          min_amount: '20.001',
          max_amount: 'lots',
          hourly_count_limit: '0',
          hourly_amount_limit: '-5',
          daily_count_limit: '2.5',
          daily_amount_limit: '0',
          max_adjustment: '10000',
          priority: 'first',
          active: 'maybe',
        },
        SHELL
      )
    )
    const messages = byField(error)
    const fields = [
      'deposit_group',
      'channel',
      'bank',
      'account_no',
      'account_name',
      'promptpay_id',
      'biller_id',
      'provider',
      'provider_config',
      'min_amount',
      'max_amount',
      'hourly_count_limit',
      'hourly_amount_limit',
      'daily_count_limit',
      'daily_amount_limit',
      'max_adjustment',
      'priority',
      'active',
    ]
    assert.sameMembers(Object.keys(messages), fields)
    for (const field of fields) assert.include(messages[field], field, field)
    assert.include(messages.bank, 'KBANKX')
    assert.include(messages.account_no, '10 to 15 digits')
    assert.include(messages.promptpay_id, 'mobile number')
    assert.include(messages.biller_id, '15 digits')
    assert.include(messages.provider, '"acme" is not a known deposit provider')
    assert.include(messages.provider_config, 'JSON object')
    assert.include(messages.min_amount, 'THB amount with at most 2 decimals')
    assert.include(messages.hourly_count_limit, 'from 1 to')
    assert.include(messages.hourly_count_limit, '"none"')
    assert.include(messages.max_adjustment, '9999')
    assert.include(messages.active, 'on or off')
    assert.deepEqual(await counts(), { accounts: 0, audits: 0 })

    const missing = byField(await refusal(createDepositAccount({}, SHELL)))
    assert.sameMembers(Object.keys(missing), [
      'deposit_group',
      'channel',
      'bank',
      'account_no',
      'account_name',
    ])
    assert.equal(missing.account_name, 'account_name is required')
  })

  test('channel-specific fields and min ≤ max are checked on the resulting account', async ({
    assert,
  }) => {
    const base = { deposit_group: 'g', bank: 'SCB', account_no: '4021234567', account_name: 'A' }
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ channel: 'qr' }, 'promptpay_id', 'a qr account needs promptpay_id'],
      [
        { channel: 'qr', promptpay_id: '0812345678', biller_id: '010555012345678' },
        'biller_id',
        'either promptpay_id or biller_id, not both',
      ],
      [
        { channel: 'transfer', promptpay_id: '0812345678' },
        'promptpay_id',
        'promptpay_id belongs to qr accounts only',
      ],
      [
        { channel: 'transfer', biller_id: '010555012345678' },
        'biller_id',
        'biller_id belongs to qr accounts only',
      ],
      [{ channel: 'external' }, 'provider', 'an external account needs provider'],
      [
        { channel: 'transfer', provider_config: '{"fail":true}' },
        'provider_config',
        'provider_config belongs to external accounts only',
      ],
      [
        { channel: 'transfer', min_amount: '500', max_amount: '100' },
        'min_amount',
        'min_amount 500.00 is above max_amount 100.00',
      ],
    ]
    for (const [fields, field, message] of cases) {
      const messages = byField(await refusal(createDepositAccount({ ...base, ...fields }, SHELL)))
      assert.include(messages[field], message, JSON.stringify(fields))
    }
    assert.deepEqual(await counts(), { accounts: 0, audits: 0 })

    const external = await added({
      ...base,
      channel: 'External',
      provider: 'Sandbox',
      provider_config: { fail: false },
    })
    assert.equal(external.channel, 'external')
    assert.equal(external.provider, 'sandbox')
    assert.deepEqual(external.providerConfig, { fail: false })
  })

  test('one bank account is in the pool only once (amounts would collide)', async ({ assert }) => {
    const first = await added(QR)
    const error = await refusal(
      createDepositAccount(
        {
          deposit_group: 'other',
          channel: 'transfer',
          bank: 'kbank',
          account_no: '1234567890',
          account_name: 'Shop',
        },
        SHELL
      )
    )
    assert.include(byField(error).account_no, `deposit account ${first.id}`)
    assert.include(byField(error).account_no, 'can be in the pool only once')
    // A bill-payment QR on the same bank account is matched by reference: allowed.
    await createDepositAccount(
      { ...QR, promptpay_id: undefined, biller_id: '010555012345678' },
      SHELL
    )
    assert.equal((await counts()).accounts, 2)
  })
})

test.group('update_deposit_account action', (group) => {
  group.each.setup(() => resetDatabase())

  test('changes only the fields given, clears limits, audits before → after of changed fields', async ({
    assert,
  }) => {
    const created = await added({
      ...QR,
      min_amount: '50',
      max_amount: '50000',
      hourly_count_limit: 30,
    })
    const { account, changed } = await updateDepositAccount(
      {
        id: String(created.id),
        max_amount: 'none',
        hourly_count_limit: 'Unlimited',
        hourly_amount_limit: '10000',
        max_adjustment: 500,
        active: 'off',
        comment: 'quiet period',
      },
      SHELL
    )
    assert.sameMembers(changed, [
      'max_amount',
      'hourly_count_limit',
      'hourly_amount_limit',
      'max_adjustment',
      'active',
    ])
    await account.refresh()
    assert.isNull(account.maxAmount)
    assert.isNull(account.hourlyCountLimit)
    assert.equal(account.hourlyAmountLimit, 1_000_000)
    assert.equal(account.maxAdjustment, 500)
    assert.isFalse(account.active)
    assert.equal(account.minAmount, 5000, 'fields not given stay as they were')

    const audit = await AuditLog.query().where('action', 'deposit_account.update').firstOrFail()
    assert.equal(audit.subjectId, String(created.id))
    assert.equal(audit.comment, 'quiet period')
    assert.deepEqual(audit.beforeValues, {
      max_amount: '50000.00',
      hourly_count_limit: 30,
      hourly_amount_limit: null,
      max_adjustment: 999,
      active: true,
    })
    assert.deepEqual(audit.afterValues, {
      max_amount: null,
      hourly_count_limit: null,
      hourly_amount_limit: '10000.00',
      max_adjustment: 500,
      active: false,
    })

    // Nothing changed: nothing written, nothing audited.
    const before = await counts()
    const again = await updateDepositAccount(
      { id: created.id, max_amount: 'none', active: false },
      SHELL
    )
    assert.deepEqual(again.changed, [])
    assert.isFalse(again.breakGlass)
    assert.deepEqual(await counts(), before)
  })

  test('a biller id replaces the PromptPay id; a new channel drops the old channel fields', async ({
    assert,
  }) => {
    const created = await added(QR)
    let { account } = await updateDepositAccount(
      { id: created.id, biller_id: '010555012345678' },
      SHELL
    )
    assert.equal(account.billerId, '010555012345678')
    assert.isNull(account.promptpayId)

    ;({ account } = await updateDepositAccount(
      { id: created.id, channel: 'external', provider: 'sandbox' },
      SHELL
    ))
    assert.equal(account.channel, 'external')
    assert.isNull(account.billerId)
    assert.equal(account.provider, 'sandbox')

    ;({ account } = await updateDepositAccount({ id: created.id, channel: 'transfer' }, SHELL))
    assert.isNull(account.provider)
    assert.isNull(account.providerConfig)
  })

  test('refusals name their field and write nothing', async ({ assert }) => {
    const created = await added({ ...QR, min_amount: '100' })
    const before = await counts()

    const unknown = await refusal(updateDepositAccount({ id: 999999, priority: 1 }, SHELL))
    assert.isTrue(unknown.notFound)
    assert.deepEqual(unknown.errors, [
      { field: 'id', message: 'no deposit account with id 999999' },
    ])

    const badId = await refusal(updateDepositAccount({ id: 'abc' }, SHELL))
    assert.include(byField(badId).id, 'id must be')

    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ daily_count_limit: '0' }, 'daily_count_limit', 'daily_count_limit must be a whole number'],
      [{ channel: 'external' }, 'provider', 'an external account needs provider'],
      [{ max_amount: '99.99' }, 'min_amount', 'min_amount 100.00 is above max_amount 99.99'],
      [{ promptpay_id: 'none' }, 'promptpay_id', 'a qr account needs promptpay_id'],
      [{ account_name: '   ' }, 'account_name', 'account_name'],
    ]
    for (const [fields, field, message] of cases) {
      const error = await refusal(updateDepositAccount({ id: created.id, ...fields }, SHELL))
      assert.include(byField(error)[field], message, JSON.stringify(fields))
    }
    assert.deepEqual(await counts(), before)
    const account = await DepositAccount.findOrFail(created.id)
    assert.equal(account.channel, 'qr')
    assert.isNull(account.dailyCountLimit)
    assert.isNull(account.maxAmount)
    assert.equal(account.promptpayId, '0812345678')
  })
})
