import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import DepositAccount from '#payments/models/deposit_account'
import ApprovalRequest from '#approvals/models/approval_request'
import { createDepositAccount } from '#payments/actions/create_deposit_account'
import { updateDepositAccount } from '#payments/actions/update_deposit_account'
import { approveRequest } from '#approvals/actions/approve_request'
import { rejectRequest } from '#approvals/actions/reject_request'
import { ace, lastJsonLine } from '#tests/helpers/ace'
import { byField, refusal } from '#tests/helpers/actions'
import { operatorActor } from '#tests/helpers/decisions'
import {
  authBody,
  createDepositAccount as fixtureAccount,
  createDepositMerchant,
  resetDatabase,
  signedPost,
  type TestMerchant,
} from '#tests/helpers/merchants'

let sequence = 0

/** A payment through the merchant API: QR, or a bank transfer. */
async function pay(who: TestMerchant, kind: 'qr' | 'transfer') {
  sequence += 1
  const response = await signedPost(
    kind === 'qr' ? '/payment/create' : '/payment/create-transfer',
    who,
    authBody(who, {
      merchant_order_id: `FE${sequence}`,
      amount: '100.00',
      bank: 'SCB',
      account_name: 'Somchai Jaidee',
      account_no: '1234567890',
    })
  )
  if (response.status !== 200) throw new Error(response.text)
  const data = response.json.data
  const order = await db
    .from('payment_orders')
    .where('platform_order_id', data.platform_order_id)
    .select('deposit_account_id')
    .firstOrFail()
  return { accountId: Number(order.deposit_account_id), depositAccountNo: data.deposit_account_no }
}

const NEW_QR = {
  deposit_group: 'test-group',
  channel: 'qr',
  bank: 'KTB',
  account_no: '555-1-23456-7',
  account_name: 'Admin Own Name',
  promptpay_id: '089-999-9999',
  priority: '1000',
  max_amount: '50,000',
  comment: 'new KTB account',
}

async function auditActions(type: string, id: string) {
  const rows = await db
    .from('audit_logs')
    .where('subject_type', type)
    .where('subject_id', id)
    .orderBy('id')
    .select('action', 'actor', 'before_values', 'after_values', 'details')
  const json = (value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value)
  return rows.map((row) => ({
    ...row,
    before_values: json(row.before_values),
    after_values: json(row.after_values),
    details: json(row.details),
  }))
}

test.group('deposit-account pool: four eyes', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.timeout(120_000)

  test('one admin adds their own PromptPay account at priority 1000 and renumbers a transfer account: nothing changes for payments until a second admin approves', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const qr = await fixtureAccount({ channel: 'qr', promptpayId: '0812345678' })
    const transfer = await fixtureAccount({ channel: 'transfer', bank: 'BBL' })
    const oldNumber = transfer.accountNo
    const { actor: maker } = await operatorActor('maker@example.com', 'admin')
    const { operator: checker, actor: second } = await operatorActor('checker@example.com', 'admin')

    const created = await createDepositAccount(NEW_QR, maker)
    assert.isNull(created.account)
    const addition = created.request!
    assert.equal(addition.action, 'deposit_account.create')
    assert.equal(addition.targetType, 'new_deposit_account')
    assert.deepEqual(addition.changeBefore, {})
    assert.include(addition.changeAfter, {
      deposit_group: 'test-group',
      bank: 'KTB',
      account_no: '5551234567',
      promptpay_id: '0899999999',
      max_amount: '50,000.00',
      priority: 1000,
      active: 'on',
    })
    assert.notProperty(addition.changeAfter!, 'biller_id')
    assert.lengthOf(await DepositAccount.all(), 2, 'nothing added yet')

    const renumbered = await updateDepositAccount(
      { id: transfer.id, account_no: '9876543210', comment: 'bank moved us' },
      maker
    )
    assert.deepEqual(renumbered.changed, [])
    assert.deepEqual(renumbered.asked, ['account_no'])
    const change = renumbered.request!
    assert.deepEqual(change.changeBefore, { account_no: oldNumber })
    assert.deepEqual(change.changeAfter, { account_no: '9876543210' })
    assert.equal((await transfer.refresh()).accountNo, oldNumber)

    // Ten payments right after: every one on the old accounts, the old number.
    for (let i = 0; i < 10; i++) {
      const kind = i % 2 === 0 ? 'qr' : 'transfer'
      const paid = await pay(who, kind)
      assert.equal(paid.accountId, kind === 'qr' ? qr.id : transfer.id, `payment ${i}`)
      if (kind === 'transfer') assert.equal(paid.depositAccountNo, oldNumber)
    }

    // Every admin was told a sensitive request opened.
    const notices = await db.from('notifications').where('kind', 'request').orderBy('id')
    assert.deepEqual(
      notices.map((row) => [row.action, Number(row.approval_request_id)]),
      [
        ['deposit_account.create', addition.id],
        ['deposit_account.update', change.id],
      ]
    )

    // The requester cannot approve their own requests.
    for (const request of [addition, change]) {
      const own = await refusal(approveRequest({ approval_request_id: request.id }, maker))
      assert.include(own.message, 'another operator must approve it')
      assert.equal((await request.refresh()).status, 'pending')
    }

    // A second admin approves: carried out exactly as stored.
    await approveRequest({ approval_request_id: addition.id, comment: 'called the bank' }, second)
    await approveRequest({ approval_request_id: change.id, comment: 'letter seen' }, second)
    const added = await DepositAccount.findByOrFail('account_no', '5551234567')
    assert.equal(added.promptpayId, '0899999999')
    assert.equal(added.priority, 1000)
    assert.equal(added.maxAmount, 5_000_000)
    assert.equal(added.accountName, 'Admin Own Name')
    assert.equal((await transfer.refresh()).accountNo, '9876543210')
    assert.equal((await addition.refresh()).status, 'approved')
    assert.equal(addition.decidedBy, checker.id)

    const nextQr = await pay(who, 'qr')
    assert.equal(nextQr.accountId, added.id, 'priority 1000 comes first')
    const nextTransfer = await pay(who, 'transfer')
    assert.equal(nextTransfer.depositAccountNo, '9876543210')

    // Audited as the approver's, naming the request and who asked.
    const [createAudit] = (await auditActions('deposit_account', String(added.id))).filter(
      (row) => row.action === 'deposit_account.create'
    )
    assert.equal(createAudit.actor, second.name)
    assert.equal(createAudit.details.approval_request_id, addition.id)
    assert.equal(createAudit.details.requested_by, maker.name)
    const updates = (await auditActions('deposit_account', String(transfer.id))).filter(
      (row) => row.action === 'deposit_account.update'
    )
    assert.lengthOf(updates, 1)
    assert.deepEqual(updates[0].before_values, { account_no: oldNumber })
    assert.deepEqual(updates[0].after_values, { account_no: '9876543210' })
    assert.equal(updates[0].details.approval_request_id, change.id)
  })

  test('a form mixing a stop and a loosening: the stop applies at once, the rest waits in one request per account', async ({
    assert,
  }) => {
    const account = await fixtureAccount({
      channel: 'qr',
      maxAmount: 1_000_000,
      dailyCountLimit: 100,
      priority: 5,
    })
    const { actor: maker } = await operatorActor('maker@example.com', 'admin')
    const { actor: operator } = await operatorActor('ops@example.com', 'operator')
    const { actor: second } = await operatorActor('checker@example.com', 'admin')

    const result = await updateDepositAccount(
      {
        id: account.id,
        max_amount: '5,000', // lower: at once
        daily_count_limit: 'none', // removed: waits
        hourly_count_limit: '10', // set where there was none: at once
        priority: '50', // waits
        comment: 'reshape',
      },
      maker
    )
    assert.sameMembers(result.changed, ['max_amount', 'hourly_count_limit'])
    assert.sameMembers(result.asked, ['daily_count_limit', 'priority'])
    await account.refresh()
    assert.equal(account.maxAmount, 500_000)
    assert.equal(account.hourlyCountLimit, 10)
    assert.equal(account.dailyCountLimit, 100)
    assert.equal(account.priority, 5)
    const request = result.request!
    assert.deepEqual(request.input, {
      id: account.id,
      daily_count_limit: 'none',
      priority: 50,
      comment: 'reshape',
    })
    assert.deepEqual(request.changeBefore, { daily_count_limit: 100, priority: 5 })
    assert.deepEqual(request.changeAfter, { daily_count_limit: 'unlimited', priority: 50 })

    // One request per account: another loosening is refused beside its field…
    const blocked = await refusal(
      updateDepositAccount({ id: account.id, account_name: 'Other' }, second)
    )
    assert.include(byField(blocked).account_name, `approval request #${request.id}`)
    // …a stop still applies at once.
    const stop = await updateDepositAccount({ id: account.id, active: 'off' }, second)
    assert.deepEqual(stop.changed, ['active'])
    assert.isNull(stop.request)
    assert.isFalse((await account.refresh()).active)

    // An operator may not decide an admin's request.
    const notAdmin = await refusal(approveRequest({ approval_request_id: request.id }, operator))
    assert.include(notAdmin.message, 'needs the admin role')

    await approveRequest({ approval_request_id: request.id }, second)
    await account.refresh()
    assert.isNull(account.dailyCountLimit)
    assert.equal(account.priority, 50)
    assert.equal(account.maxAmount, 500_000, 'the stop applied earlier stays')
    assert.isFalse(account.active)

    // Activating waits; rejecting it leaves the account off.
    const activate = await updateDepositAccount({ id: account.id, active: 'on' }, maker)
    assert.deepEqual(activate.asked, ['active'])
    assert.isFalse((await account.refresh()).active)
    await rejectRequest(
      { approval_request_id: activate.request!.id, reason_code: 'other', comment: 'not yet' },
      second
    )
    assert.isFalse((await account.refresh()).active)
  })

  test('approving runs the pool clash checks again: of two new accounts with one PromptPay id only the first can be added', async ({
    assert,
  }) => {
    const { actor: maker } = await operatorActor('maker@example.com', 'admin')
    const { actor: second } = await operatorActor('checker@example.com', 'admin')
    const first = await createDepositAccount(NEW_QR, maker)
    const other = await createDepositAccount(
      { ...NEW_QR, bank: 'SCB', account_no: '4021234567' },
      maker
    )
    // The same account asked twice by its requester (a second tab): told it already waits.
    const again = await refusal(
      createDepositAccount({ ...NEW_QR, bank: 'SCB', account_no: '4021234567' }, maker)
    )
    assert.include(again.message, `approval request #${other.request!.id} `)
    assert.include(again.message, 'it waits for a second operator')
    assert.lengthOf(await ApprovalRequest.query().where('status', 'pending'), 2)

    await approveRequest({ approval_request_id: first.request!.id }, second)
    const clash = await refusal(approveRequest({ approval_request_id: other.request!.id }, second))
    assert.include(clash.message, 'can no longer be carried out')
    assert.include(clash.message, 'promptpay_id 0899999999 is already used by deposit account')
    assert.equal((await other.request!.refresh()).status, 'pending')
    assert.lengthOf(await DepositAccount.all(), 1)
  })

  test('from the server the commands apply at once, recorded as break-glass uses notified to every admin', async ({
    assert,
  }) => {
    const created = await ace(
      'deposit-account:create',
      '--group=test-group',
      '--channel=qr',
      '--bank=KTB',
      '--account-no=5551234567',
      '--account-name=Shop',
      '--promptpay-id=0899999999',
      '--priority=1000',
      '--json'
    )
    assert.equal(created.code, 0, created.output)
    const { id } = lastJsonLine(created.stdout)
    assert.equal((await DepositAccount.findOrFail(id)).priority, 1000)

    const renumbered = await ace('deposit-account:update', String(id), '--account-no=5559999999')
    assert.equal(renumbered.code, 0, renumbered.output)
    assert.include(renumbered.output, 'break-glass')
    assert.equal((await DepositAccount.findOrFail(id)).accountNo, '5559999999')

    // A stop is no break-glass.
    const stopped = await ace('deposit-account:update', String(id), '--inactive')
    assert.equal(stopped.code, 0, stopped.output)
    assert.notInclude(stopped.output, 'break-glass')

    const uses = await db.from('audit_logs').where('action', 'break_glass.use').orderBy('id')
    assert.lengthOf(uses, 2)
    assert.match(uses[0].actor, /^cli:/)
    const details = uses.map((row) =>
      typeof row.details === 'string' ? JSON.parse(row.details) : row.details
    )
    assert.equal(details[0].action, 'deposit_account.create')
    assert.include(details[0].summary, 'KTB 5551234567')
    assert.equal(details[1].action, 'deposit_account.update')
    assert.include(details[1].summary, 'account_no 5551234567 → 5559999999')
    const notices = await db.from('notifications').where('kind', 'break_glass').orderBy('id')
    assert.deepEqual(
      notices.map((row) => row.action),
      ['deposit_account.create', 'deposit_account.update']
    )
    assert.lengthOf(await ApprovalRequest.all(), 0)
  })
})
