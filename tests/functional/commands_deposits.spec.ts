import { test } from '@japa/runner'
import { ace } from '#tests/helpers/ace'
import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import AuditLog from '#core/audit_log'
import DepositAccount from '#payments/models/deposit_account'
import Merchant from '#merchants/models/merchant'
import Platform from '#merchants/models/platform'
import { describePromptPay } from '#payments/promptpay_qr'
import { authBody, resetDatabase, signedPost, type TestMerchant } from '#tests/helpers/merchants'
import { refusal } from '#tests/helpers/actions'
import { cliActor } from '#core/actor'
import { createDepositAccount as createDepositAccountAction } from '#payments/actions/create_deposit_account'
import { updateDepositAccount as updateDepositAccountAction } from '#payments/actions/update_deposit_account'

/** Runs a real `node ace` process against the test database, as an operator would. */

/** The last stdout line of a --json command, parsed. */
function lastJson(result: { stdout: string }) {
  return JSON.parse(result.stdout.trim().split('\n').pop()!)
}

async function depositAccountCount() {
  return Number((await db.from('deposit_accounts').count('* as total').first()).total)
}

const QR_ACCOUNT = [
  '--group=shop-pool',
  '--channel=qr',
  '--bank=KBANK',
  '--account-no=123-4-56789-0',
  '--account-name=Shop Co., Ltd.',
  '--promptpay-id=081-234-5678',
]

/** QR_ACCOUNT as the actions' input. */
const QR_FIELDS = {
  deposit_group: 'shop-pool',
  channel: 'qr',
  bank: 'KBANK',
  account_no: '123-4-56789-0',
  account_name: 'Shop Co., Ltd.',
  promptpay_id: '081-234-5678',
}

test.group('deposit-account commands', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.timeout(120_000)

  test('create, update and list a deposit account, audited', async ({ assert }) => {
    const created = await ace(
      'deposit-account:create',
      ...QR_ACCOUNT,
      '--min=50.00',
      '--max=50000',
      '--hourly-count=30',
      '--daily-amount=200000.50',
      '--priority=10',
      '--json'
    )
    assert.equal(created.code, 0, created.output)
    const { id } = lastJson(created)

    const account = await DepositAccount.findOrFail(id)
    assert.equal(account.depositGroup, 'shop-pool')
    assert.equal(account.channel, 'qr')
    assert.equal(account.bank, 'KBANK')
    assert.equal(account.accountNo, '1234567890')
    assert.equal(account.accountName, 'Shop Co., Ltd.')
    assert.equal(account.promptpayId, '0812345678')
    assert.isNull(account.billerId)
    assert.equal(account.minAmount, 5000)
    assert.equal(account.maxAmount, 5_000_000)
    assert.equal(account.hourlyCountLimit, 30)
    assert.isNull(account.hourlyAmountLimit)
    assert.isNull(account.dailyCountLimit)
    assert.equal(account.dailyAmountLimit, 20_000_050)
    assert.equal(account.maxAdjustment, 999)
    assert.equal(account.priority, 10)
    assert.isTrue(account.active)

    const plain = await ace(
      'deposit-account:create',
      '--group=shop-pool',
      '--channel=transfer',
      '--bank=scb',
      '--account-no=4021234567',
      '--account-name=Shop Co., Ltd.',
      '--inactive'
    )
    assert.equal(plain.code, 0, plain.output)
    const transfer = await DepositAccount.findByOrFail('account_no', '4021234567')
    assert.include(plain.stdout, `id: ${transfer.id}`)
    assert.equal(transfer.bank, 'SCB')
    assert.equal(transfer.minAmount, 2000)
    assert.isFalse(transfer.active)

    const updated = await ace(
      'deposit-account:update',
      String(id),
      '--no-max',
      '--hourly-count=none',
      '--hourly-amount=10000',
      '--max-adjustment=500',
      '--inactive'
    )
    assert.equal(updated.code, 0, updated.output)
    await account.refresh()
    assert.isNull(account.maxAmount)
    assert.isNull(account.hourlyCountLimit)
    assert.equal(account.hourlyAmountLimit, 1_000_000)
    assert.equal(account.maxAdjustment, 500)
    assert.isFalse(account.active)
    assert.equal(account.minAmount, 5000, 'options not given stay as they were')

    // A biller id replaces the PromptPay id: the account becomes a bill-payment QR.
    const biller = await ace(
      'deposit-account:update',
      String(id),
      '--biller-id=010555012345678',
      '--active'
    )
    assert.equal(biller.code, 0, biller.output)
    await account.refresh()
    assert.equal(account.billerId, '010555012345678')
    assert.isNull(account.promptpayId)
    assert.isTrue(account.active)

    const listed = await ace('deposit-account:list', '--group=shop-pool', '--json')
    assert.equal(listed.code, 0, listed.output)
    const rows = lastJson(listed)
    assert.deepEqual(
      rows.map((row: any) => [row.id, row.channel, row.active]),
      [
        [id, 'qr', true],
        [transfer.id, 'transfer', false],
      ]
    )
    assert.equal(rows[0].hourly_amount, '10000.00')
    assert.isNull(rows[0].max)

    const table = await ace('deposit-account:list')
    assert.equal(table.code, 0, table.output)
    assert.include(table.stdout, '1234567890')
    assert.include(table.stdout, 'biller 010555012345678')
    assert.include(table.stdout, 'hour 10000.00 THB')
    const withUsage = await ace('deposit-account:list', '--group=shop-pool', '--usage', '--json')
    assert.equal(withUsage.code, 0, withUsage.output)
    assert.deepEqual(lastJson(withUsage)[0].usage, {
      hour: { count: 0, count_limit: null, amount: '0.00', amount_limit: '10000.00' },
      day: { count: 0, count_limit: null, amount: '0.00', amount_limit: '200000.50' },
      slots: null,
      maintenance_until: null,
    })
    const usageTable = await ace('deposit-account:list', '--usage')
    assert.include(usageTable.stdout, 'hour 0 orders, 0.00/10000.00 THB')
    const none = await ace('deposit-account:list', '--group=nobody')
    assert.include(none.output, 'No deposit accounts in group nobody')

    const audits = await AuditLog.query()
      .where('subject_type', 'deposit_account')
      .orderBy('id')
      .select('action', 'actor', 'subject_id', 'before_values', 'after_values')
    assert.deepEqual(
      audits.map((entry) => [entry.action, entry.subjectId]),
      [
        ['deposit_account.create', String(id)],
        ['deposit_account.create', String(transfer.id)],
        // Beyond a stop from the server (a limit removed, a biller id, activating): break-glass.
        ['deposit_account.update', String(id)],
        ['break_glass.use', String(id)],
        ['deposit_account.update', String(id)],
        ['break_glass.use', String(id)],
      ]
    )
    for (const entry of audits) assert.match(entry.actor, /^cli:/)
    assert.deepInclude(audits[2].beforeValues, { max_amount: '50000.00', active: true })
    assert.deepInclude(audits[2].afterValues, { max_amount: null, active: false })
  })

  test('bad input exits non-zero with a clear message and writes nothing', async ({ assert }) => {
    const flagsFor = (channel: string, bank: string, ...extra: string[]) =>
      [
        '--group=g',
        `--channel=${channel}`,
        `--bank=${bank}`,
        extra.some((flag) => flag.startsWith('--account-no=')) ? '' : '--account-no=1234567890',
        '--account-name=A',
        ...extra,
      ].filter(Boolean)
    const cases: Array<[string[], string]> = [
      [
        flagsFor('qr', 'KBANKX', '--promptpay-id=0812345678'),
        'bank must be a bank code of the merchant API (e.g. KBANK, SCB), not "KBANKX"',
      ],
      [flagsFor('qr', 'KBANK'), 'a qr account needs promptpay_id'],
      [flagsFor('qr', 'KBANK', '--promptpay-id=12345'), 'promptpay_id must be a mobile number'],
      [flagsFor('qr', 'KBANK', '--biller-id=0105550123'), 'biller_id must be exactly 15 digits'],
      [flagsFor('external', 'KTB'), 'an external account needs provider'],
      [flagsFor('external', 'KTB', '--provider=acme'), '"acme" is not a known deposit provider'],
      [
        flagsFor('transfer', 'SCB', '--promptpay-id=0812345678'),
        'promptpay_id belongs to qr accounts only',
      ],
      [
        flagsFor('transfer', 'SCB', '--min=500', '--max=100'),
        'min_amount 500.00 is above max_amount 100.00',
      ],
      [flagsFor('transfer', 'SCB', '--min=20.001'), 'min_amount must be a positive THB amount'],
      [flagsFor('cash', 'SCB'), 'channel must be one of qr, transfer, external'],
      [flagsFor('transfer', 'SCB', '--account-no=12'), 'account_no must be 10 to 15 digits'],
    ]
    const results = await Promise.all(cases.map(([args]) => ace('deposit-account:create', ...args)))
    results.forEach((result, index) => {
      assert.notEqual(result.code, 0, `case ${index}: ${result.output}`)
      assert.include(result.output, cases[index][1], `case ${index}`)
    })
    assert.equal(await depositAccountCount(), 0)

    // One real bank account cannot be in the pool twice: amounts would collide.
    assert.equal((await ace('deposit-account:create', ...QR_ACCOUNT)).code, 0)
    const twice = await ace(
      'deposit-account:create',
      '--group=other',
      '--channel=transfer',
      '--bank=KBANK',
      '--account-no=1234567890',
      '--account-name=Shop'
    )
    assert.notEqual(twice.code, 0)
    assert.include(twice.output, 'can be in the pool only once')

    // Nor one PromptPay id: two merchants' orders would get identical QR codes.
    const samePromptPay = await ace(
      'deposit-account:create',
      '--group=other',
      '--channel=qr',
      '--bank=SCB',
      '--account-no=4029876543',
      '--account-name=Other Shop',
      '--promptpay-id=+66 81 234 5678'
    )
    assert.equal(samePromptPay.code, 1, samePromptPay.output)
    assert.include(
      samePromptPay.output,
      'promptpay_id 0812345678 is already used by deposit account'
    )
    assert.include(samePromptPay.output, 'can be in the pool only once')
    assert.equal(await depositAccountCount(), 1)

    const [id] = (await DepositAccount.all()).map((account) => account.id)
    const [unknown, badLimit, toTransfer] = await Promise.all([
      ace('deposit-account:update', '999999', '--priority=1'),
      ace('deposit-account:update', String(id), '--daily-count=0'),
      ace('deposit-account:update', String(id), '--channel=external'),
    ])
    assert.notEqual(unknown.code, 0)
    assert.include(unknown.output, 'no deposit account with id 999999')
    assert.notEqual(badLimit.code, 0)
    assert.include(badLimit.output, 'daily_count_limit must be a whole number')
    assert.notEqual(toTransfer.code, 0)
    assert.include(toTransfer.output, 'an external account needs provider')
    const account = await DepositAccount.findOrFail(id)
    assert.equal(account.channel, 'qr')
    assert.isNull(account.dailyCountLimit)
  })

  test('the commands print the messages of the actions they adapt', async ({ assert }) => {
    const fields = {
      deposit_group: 'shop-pool',
      channel: 'qr',
      bank: 'KBANKX',
      account_no: '12',
      account_name: 'Shop',
      max_amount: 'lots',
      hourly_count_limit: '0',
    }
    const expected = await refusal(createDepositAccountAction(fields, cliActor()))
    assert.lengthOf(expected.errors, 4)
    const printed = await ace(
      'deposit-account:create',
      '--group=shop-pool',
      '--channel=qr',
      '--bank=KBANKX',
      '--account-no=12',
      '--account-name=Shop',
      '--max=lots',
      '--hourly-count=0'
    )
    assert.equal(printed.code, 1, printed.output)
    for (const { message } of expected.errors) assert.include(printed.output, message)

    const { account: created } = await createDepositAccountAction({ ...QR_FIELDS }, cliActor())
    const update = await refusal(
      updateDepositAccountAction(
        { id: created!.id, min_amount: '600', max_amount: '500' },
        cliActor()
      )
    )
    const updated = await ace(
      'deposit-account:update',
      String(created!.id),
      '--min=600',
      '--max=500'
    )
    assert.equal(updated.code, 1, updated.output)
    assert.include(updated.output, update.errors[0].message)
    assert.equal(await depositAccountCount(), 1)
  })

  test('deposit-account:maintenance schedules, lists and cancels windows, audited', async ({
    assert,
  }) => {
    const { account } = await createDepositAccountAction({ ...QR_FIELDS }, cliActor())
    const inTwoHours = DateTime.now().setZone('Asia/Bangkok').plus({ hours: 2 })
    const scheduled = await ace(
      'deposit-account:maintenance',
      'schedule',
      `--account=${account!.id}`,
      `--to=${inTwoHours.toFormat('yyyy-LL-dd HH:mm')}`,
      '--reason=KBANK app upgrade',
      '--json'
    )
    assert.equal(scheduled.code, 0, scheduled.output)
    const window = lastJson(scheduled)
    assert.deepInclude(window, {
      deposit_account_id: account!.id,
      bank: null,
      to: `${inTwoHours.toFormat('yyyy-LL-dd HH:mm')}:00`,
      reason: 'KBANK app upgrade',
      status: 'in_effect',
    })
    const byBank = await ace(
      'deposit-account:maintenance',
      'schedule',
      '--bank=scb',
      '--from=2099-01-01 01:00',
      '--to=2099-01-01 03:00',
      '--reason=SCB maintenance'
    )
    assert.equal(byBank.code, 0, byBank.output)
    assert.include(byBank.output, 'every SCB account out of selection from 2099-01-01 01:00:00')

    const listed = await ace('deposit-account:maintenance', 'list', '--json')
    assert.deepEqual(
      lastJson(listed).map((row: any) => [row.status, row.bank]),
      [
        ['in_effect', null],
        ['scheduled', 'SCB'],
      ]
    )
    const table = await ace('deposit-account:maintenance', 'list')
    assert.include(table.stdout, `deposit account ${account!.id}`)
    assert.include(table.stdout, 'every SCB account')

    const cancelled = await ace(
      'deposit-account:maintenance',
      'cancel',
      String(window.id),
      '--comment=done early'
    )
    assert.equal(cancelled.code, 0, cancelled.output)
    assert.include(cancelled.output, `Maintenance window ${window.id} cancelled`)
    const again = await ace('deposit-account:maintenance', 'cancel', String(window.id))
    assert.equal(again.code, 1)
    assert.include(again.output, `maintenance window ${window.id} is already cancelled`)

    const past = await ace(
      'deposit-account:maintenance',
      'schedule',
      '--bank=KBANK',
      '--from=2020-01-01 00:00',
      '--to=2020-01-01 01:00',
      '--reason=r'
    )
    assert.equal(past.code, 1)
    assert.include(past.output, 'to is in the past: the window would take nothing out')
    const unknown = await ace('deposit-account:maintenance', 'postpone')
    assert.equal(unknown.code, 1)
    assert.include(unknown.output, 'operation must be one of schedule, cancel, list')

    const audits = await AuditLog.query().where('subject_type', 'maintenance_window').orderBy('id')
    assert.deepEqual(
      audits.map((entry) => entry.action),
      ['maintenance_window.schedule', 'maintenance_window.schedule', 'maintenance_window.cancel']
    )
    for (const entry of audits) assert.match(entry.actor, /^cli:/)
  })
})

test.group('merchant:configure and platform:configure', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.timeout(120_000)

  async function platformAndMerchant() {
    assert200(await ace('platform:create', '--code=shop', '--payment-page-domain=pay.shop.test'))
    const created = await ace('merchant:create', '--platform=shop', '--name=Shop', '--json')
    assert200(created)
    return lastJson(created) as { merchant_id: string; token: string; secret: string }
  }

  function assert200(result: { code: number; output: string }) {
    if (result.code !== 0) throw new Error(`command failed: ${result.output}`)
  }

  test('merchant:configure sets deposit group, TTL, permissions and status', async ({ assert }) => {
    const { merchant_id: merchantId } = await platformAndMerchant()
    const configured = await ace(
      'merchant:configure',
      merchantId,
      '--deposit-group=shop-pool',
      '--order-ttl=600',
      '--payments=off',
      '--payment-fee-rate=150',
      '--withdraw-fee=10.00',
      '--status=suspended',
      '--json'
    )
    assert.equal(configured.code, 0, configured.output)
    const printed = lastJson(configured)
    assert.equal(printed.deposit_group, 'shop-pool')
    assert.equal(printed.order_ttl_seconds, 600)
    assert.isFalse(printed.payment_enabled)
    assert.equal(printed.status, 'suspended')
    assert.equal(printed.withdraw_fee_flat, '10.00')
    assert.equal(printed.platform, 'shop')
    assert.include(printed.warnings.join(' '), 'no active deposit account')

    let merchant = await Merchant.findByOrFail('merchant_id', merchantId)
    assert.equal(merchant.depositGroup, 'shop-pool')
    assert.equal(merchant.orderTtlSeconds, 600)
    assert.isFalse(merchant.paymentEnabled)
    assert.equal(merchant.paymentFeeRateBps, 150)
    assert.equal(merchant.withdrawFeeFlat, 1000)
    assert.equal(merchant.status, 'suspended')

    const back = await ace(
      'merchant:configure',
      merchantId,
      '--no-deposit-group',
      '--payments=on',
      '--status=active'
    )
    assert.equal(back.code, 0, back.output)
    assert.include(back.stdout, 'order_ttl_seconds')
    merchant = await Merchant.findByOrFail('merchant_id', merchantId)
    assert.isNull(merchant.depositGroup)
    assert.isTrue(merchant.paymentEnabled)
    assert.equal(merchant.status, 'active')

    const [shortTtl, longTtl, badSwitch, badStatus, unknown] = await Promise.all([
      ace('merchant:configure', merchantId, '--order-ttl=59'),
      ace('merchant:configure', merchantId, '--order-ttl=86401'),
      ace('merchant:configure', merchantId, '--payments=maybe'),
      ace('merchant:configure', merchantId, '--status=closed'),
      ace('merchant:configure', 'NOSUCH1', '--order-ttl=600'),
    ])
    for (const result of [shortTtl, longTtl]) {
      assert.notEqual(result.code, 0)
      assert.include(result.output, 'order_ttl_seconds must be a whole number from 60 to 86400')
    }
    assert.notEqual(badSwitch.code, 0)
    assert.include(badSwitch.output, 'payment_enabled must be on or off')
    assert.include(badStatus.output, 'status must be active or suspended')
    assert.notEqual(badStatus.code, 0)
    assert.notEqual(unknown.code, 0)
    assert.include(unknown.output, 'No merchant with merchant_id NOSUCH1')
    merchant = await Merchant.findByOrFail('merchant_id', merchantId)
    assert.equal(merchant.orderTtlSeconds, 600)

    const audits = await AuditLog.query().where('action', 'merchant.configure').orderBy('id')
    assert.lengthOf(audits, 2)
    assert.equal(audits[0].subjectId, merchantId)
    assert.match(audits[0].actor, /^cli:/)
    assert.deepInclude(audits[0].afterValues!, { order_ttl_seconds: 600, status: 'suspended' })
    assert.deepEqual(audits[1].beforeValues, {
      status: 'suspended',
      deposit_group: 'shop-pool',
      payment_enabled: false,
    })
  })

  test('platform:configure sets the killswitch, hours and payment page domain', async ({
    assert,
  }) => {
    await platformAndMerchant()
    const configured = await ace(
      'platform:configure',
      'shop',
      '--deposits=off',
      '--deposit-hours=22:00-06:00',
      '--settlement-hours=09:00-17:30',
      '--payment-page-domain=Pay.Other.test',
      '--json'
    )
    assert.equal(configured.code, 0, configured.output)
    assert.deepInclude(lastJson(configured), {
      deposit_enabled: false,
      deposit_hours: '22:00-06:00',
      settlement_hours: '09:00-17:30',
      payment_page_domain: 'pay.other.test',
    })
    let platform = await Platform.findByOrFail('code', 'shop')
    assert.isFalse(platform.depositEnabled)
    assert.equal(platform.depositOpenFrom, '22:00')
    assert.equal(platform.depositOpenTo, '06:00')
    assert.equal(platform.settlementOpenFrom, '09:00')
    assert.equal(platform.settlementOpenTo, '17:30')
    assert.equal(platform.paymentPageDomain, 'pay.other.test')

    const cleared = await ace(
      'platform:configure',
      'shop',
      '--deposits=on',
      '--deposit-hours=always',
      '--no-payment-page-domain'
    )
    assert.equal(cleared.code, 0, cleared.output)
    platform = await Platform.findByOrFail('code', 'shop')
    assert.isTrue(platform.depositEnabled)
    assert.isNull(platform.depositOpenFrom)
    assert.isNull(platform.depositOpenTo)
    assert.isNull(platform.paymentPageDomain)
    assert.equal(platform.settlementOpenFrom, '09:00', 'options not given stay as they were')

    const bad = await Promise.all([
      ace('platform:configure', 'shop', '--deposit-hours=25:00-06:00'),
      ace('platform:configure', 'shop', '--deposit-hours=9-17'),
      ace('platform:configure', 'shop', '--settlement-hours=10:00-10:00'),
      ace('platform:configure', 'shop', '--deposits=maybe'),
      ace('platform:configure', 'shop', '--payment-page-domain=https://pay.example.com/'),
      ace('platform:configure', 'nope', '--deposits=off'),
    ])
    for (const result of bad) assert.notEqual(result.code, 0, result.output)
    assert.include(bad[0].output, 'deposit_hours must be HH:mm-HH:mm')
    assert.include(bad[1].output, 'deposit_hours must be HH:mm-HH:mm')
    assert.include(bad[2].output, 'use "always"')
    assert.include(bad[3].output, 'deposit_enabled must be on or off')
    assert.include(bad[4].output, 'payment_page_domain must be a host name')
    assert.include(bad[5].output, 'no platform "nope"')
    platform = await Platform.findByOrFail('code', 'shop')
    assert.isTrue(platform.depositEnabled)
    assert.isNull(platform.depositOpenFrom)

    const audits = await AuditLog.query().where('action', 'platform.configure')
    assert.lengthOf(audits, 2)
  })

  test('a merchant configured only through the commands takes a QR payment', async ({ assert }) => {
    const credentials = await platformAndMerchant()
    const commands = [
      ['deposit-account:create', ...QR_ACCOUNT, '--max=1000.00', '--priority=5'],
      [
        'merchant:configure',
        credentials.merchant_id,
        '--deposit-group=shop-pool',
        '--order-ttl=600',
      ],
    ]
    for (const command of commands) {
      const result = await ace(...command)
      assert.equal(result.code, 0, result.output)
    }

    const merchant = await Merchant.findByOrFail('merchant_id', credentials.merchant_id)
    const who: TestMerchant = {
      merchant,
      merchantId: merchant.merchantId,
      token: credentials.token,
      secret: credentials.secret,
    }
    const order = (merchantOrderId: string) =>
      signedPost(
        '/payment/create',
        who,
        authBody(who, {
          merchant_order_id: merchantOrderId,
          amount: '100.00',
          bank: 'KBANK',
          account_name: 'Somchai Jaidee',
          account_no: '1234567890',
        })
      )

    const response = await order('CLI1')
    assert.equal(response.status, 200, response.text)
    const data = response.json.data
    assert.equal(data.payment_type, 'QR')
    const qr = describePromptPay(data.qrcode)
    assert.equal(qr.type, 'promptpay')
    assert.equal(qr.proxy, '0066812345678')
    assert.equal(qr.amountSatang, Math.round(data.transfer_amount * 100))
    assert.equal(data.payment_url, `https://pay.shop.test/pay/${data.uuid}`)
    const orderAt = DateTime.fromFormat(data.order_datetime, 'yyyy-LL-dd HH:mm:ss')
    const expireAt = DateTime.fromFormat(data.expire_datetime, 'yyyy-LL-dd HH:mm:ss')
    assert.equal(expireAt.diff(orderAt, 'seconds').seconds, 600)

    // The platform's killswitch and hours, set by command, govern the next calls.
    assert.equal((await ace('platform:configure', 'shop', '--deposits=off')).code, 0)
    const switchedOff = await order('CLI2')
    assert.equal(switchedOff.status, 503, switchedOff.text)
    assert.deepEqual(switchedOff.json.data, { code: 'killswitch_off' })

    const hour = DateTime.now().setZone('Asia/Bangkok').hour
    const closed = `${pad((hour + 2) % 24)}:00-${pad((hour + 3) % 24)}:00`
    assert.equal(
      (await ace('platform:configure', 'shop', '--deposits=on', `--deposit-hours=${closed}`)).code,
      0
    )
    const outside = await order('CLI3')
    assert.equal(outside.status, 503, outside.text)
    assert.deepEqual(outside.json.data, { code: 'outside_open_period' })

    // Over the account's --max, no account can take the order.
    assert.equal((await ace('platform:configure', 'shop', '--deposit-hours=always')).code, 0)
    const tooLarge = await signedPost(
      '/payment/create',
      who,
      authBody(who, {
        merchant_order_id: 'CLI4',
        amount: '1000.01',
        bank: 'KBANK',
        account_name: 'Somchai Jaidee',
        account_no: '1234567890',
      })
    )
    assert.equal(tooLarge.status, 503, tooLarge.text)
    assert.equal((await order('CLI5')).status, 200)
  })
})

function pad(value: number) {
  return String(value).padStart(2, '0')
}
