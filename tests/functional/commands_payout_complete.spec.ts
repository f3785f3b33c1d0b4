import { test } from '@japa/runner'
import { ace } from '#tests/helpers/ace'
import db from '@adonisjs/lucid/services/db'
import AuditLog from '#core/audit_log'
import PayoutOrder from '#payouts/models/payout_order'
import { recordPayoutOutcome } from '#payouts/actions/record_payout_outcome'
import { approveRequest } from '#approvals/actions/approve_request'
import { operatorActor } from '#tests/helpers/decisions'
import { orderTimeline } from '#core/order_events'
import { ActionError } from '#core/validation'
import {
  authBody,
  createPayoutMerchant,
  PAYOUT_FIELDS,
  resetDatabase,
  signedPost,
  withMarker,
  type TestMerchant,
} from '#tests/helpers/merchants'

/** Withdrawals through the bulk-file connector: they wait for an operator. */
async function withdrawals(who: TestMerchant, merchantOrderIds: string[]) {
  const ids: string[] = []
  for (const id of merchantOrderIds) {
    const response = await signedPost(
      '/withdraw/create',
      who,
      authBody(who, { ...PAYOUT_FIELDS, merchant_order_id: id })
    )
    if (response.status !== 200) throw new Error(response.text)
    ids.push(response.json.data.platform_order_id)
  }
  return ids
}

async function actionError(work: Promise<unknown>) {
  const error = await work.then(
    () => null,
    (thrown) => thrown
  )
  if (!(error instanceof ActionError)) throw new Error(`expected an ActionError, got ${error}`)
  return error
}

const OPERATOR = { name: 'operator:ops@example.test', operatorId: 7, ip: '203.0.113.9' }

test.group('payouts:complete', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.timeout(60_000)

  test('records a success or a failure by hand, once, with an audit entry', async ({ assert }) => {
    const who = await createPayoutMerchant(1000_00, {
      payoutRoute: 'bulk_file',
      withdrawFeeFlat: 5_00,
    })
    const ids = await withdrawals(who, ['M1', 'M2'])
    // Not pending yet (waiting for a bulk file): refused.
    const early = await ace('payouts:complete', ids[0], '--success')
    assert.notEqual(early.code, 0)
    assert.include(early.output, 'only a pending payout')

    await PayoutOrder.query().whereIn('platform_order_id', ids).update({ status: 'pending' })
    assert.equal((await ace('payouts:complete', ids[0], '--success')).code, 0)
    assert.equal((await ace('payouts:complete', ids[1], '--fail', 'account closed')).code, 0)
    const again = await ace('payouts:complete', ids[0], '--fail', 'x')
    assert.notEqual(again.code, 0)
    assert.notEqual((await ace('payouts:complete', ids[1])).code, 0, 'needs --success or --fail')

    const first = await PayoutOrder.findByOrFail('platform_order_id', ids[0])
    const second = await PayoutOrder.findByOrFail('platform_order_id', ids[1])
    assert.equal(first.status, 'success')
    assert.equal(second.status, 'failed')
    assert.equal(second.failureReason, 'account closed')
    const balance = (await signedPost('/balance', who, authBody(who))).json.data
    assert.deepEqual(balance, { balance: 895, freeze_balance: 0, unsettle_balance: 0 })
    const audits = await db.from('audit_logs').where('action', 'payout.complete')
    assert.lengthOf(audits, 2)
    // The failure gave a hold back on one person's word: a break-glass use every admin is told of.
    const glass = await db.from('audit_logs').where('action', 'break_glass.use')
    assert.lengthOf(glass, 1)
    assert.equal(glass[0].subject_id, ids[1])
    assert.lengthOf(await db.from('notifications').where('kind', 'break_glass'), 1)
  })

  test('field errors name their fields; the CLI shows the same messages; nothing is written', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(1000_00, { payoutRoute: 'bulk_file' })
    const [id] = await withdrawals(who, ['F1'])
    await PayoutOrder.query().where('platform_order_id', id).update({ status: 'pending' })

    const invalid = await actionError(
      recordPayoutOutcome(
        { platform_order_id: withMarker(id, 'P'), outcome: 'maybe', reason: 'x'.repeat(65) },
        OPERATOR
      )
    )
    assert.deepEqual(invalid.errors, [
      {
        field: 'platform_order_id',
        message:
          'platform_order_id must be a withdrawal or settlement id: 24 characters with marker W or M at index 3',
      },
      { field: 'outcome', message: 'outcome must be success or failed' },
      { field: 'reason', message: 'reason must be at most 64 characters' },
    ])
    const noReason = await actionError(
      recordPayoutOutcome({ platform_order_id: id, outcome: 'failed', reason: '' }, OPERATOR)
    )
    assert.deepEqual(noReason.errors, [
      { field: 'reason', message: 'reason is required when the outcome is failed' },
    ])
    const both = await actionError(
      recordPayoutOutcome({ platform_order_id: id, outcome: 'success', reason: 'x' }, OPERATOR)
    )
    assert.deepEqual(both.errors, [
      { field: 'reason', message: 'reason is only given when the outcome is failed' },
    ])
    const noOutcome = await actionError(recordPayoutOutcome({ platform_order_id: id }, OPERATOR))
    assert.deepEqual(noOutcome.errors, [
      { field: 'outcome', message: 'outcome is required: success or failed' },
    ])
    const unknownId = withMarker(id, 'M')
    const unknown = await actionError(
      recordPayoutOutcome({ platform_order_id: unknownId, outcome: 'success' }, OPERATOR)
    )
    assert.isTrue(unknown.notFound)
    assert.deepEqual(unknown.errors, [
      { field: 'platform_order_id', message: `No withdrawal or settlement ${unknownId}` },
    ])

    for (const [args, error] of [
      [[withMarker(id, 'P'), '--success'], invalid.errors[0].message],
      [[id, '--fail', ''], noReason.errors[0].message],
      [[id, '--success', '--fail', 'x'], both.errors[0].message],
      [[id], noOutcome.errors[0].message],
      [[unknownId, '--success'], unknown.errors[0].message],
    ] as const) {
      const cli = await ace('payouts:complete', ...args)
      assert.equal(cli.code, 1, cli.output)
      assert.include(cli.output, error)
    }

    const order = await PayoutOrder.findByOrFail('platform_order_id', id)
    assert.equal(order.status, 'pending')
    assert.equal(order.holdState, 'held')
    assert.lengthOf(await db.from('audit_logs').where('action', 'payout.complete'), 0)
    assert.lengthOf(await db.from('callback_outbox'), 0)
  })

  test('the audit row holds the status before and after, and commits with the change', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(1000_00, { payoutRoute: 'bulk_file' })
    const [paid, refused] = await withdrawals(who, ['A1', 'A2'])
    await PayoutOrder.query().whereIn('platform_order_id', [paid, refused]).update({
      status: 'pending',
    })
    const eventsBefore = (await db.from('order_events')).length
    const postingsBefore = (await db.from('ledger_transactions')).length

    // The audit row cannot be stored (request_id is at most 128 characters): nothing changes.
    await assert.rejects(() =>
      recordPayoutOutcome(
        { platform_order_id: paid, outcome: 'success' },
        { ...OPERATOR, requestId: 'r'.repeat(200) }
      )
    )
    const untouched = await PayoutOrder.findByOrFail('platform_order_id', paid)
    assert.equal(untouched.status, 'pending')
    assert.equal(untouched.holdState, 'held')
    assert.lengthOf(await db.from('order_events'), eventsBefore)
    assert.lengthOf(await db.from('ledger_transactions'), postingsBefore)
    assert.lengthOf(await db.from('callback_outbox'), 0)
    assert.lengthOf(await db.from('audit_logs').where('action', 'payout.complete'), 0)

    const done = await recordPayoutOutcome(
      { platform_order_id: paid, outcome: 'success' },
      { ...OPERATOR, requestId: 'req-42' }
    )
    assert.equal(done.order.status, 'success')
    assert.isNull(done.request)

    // Failed gives the hold back on one person's word: a request, nothing moves.
    const alice = await operatorActor('alice@example.com')
    const bob = await operatorActor('bob@example.com')
    const asked = await recordPayoutOutcome(
      { platform_order_id: refused, outcome: 'failed', reason: 'account_closed' },
      alice.actor
    )
    assert.isNotNull(asked.request)
    assert.equal((await PayoutOrder.findByOrFail('platform_order_id', refused)).holdState, 'held')
    assert.lengthOf(await db.from('audit_logs').where('action', 'payout.complete'), 1)
    await assert.rejects(
      () =>
        approveRequest({ approval_request_id: asked.request!.id, comment: 'mine' }, alice.actor),
      /another operator must approve it/
    )
    await approveRequest(
      { approval_request_id: asked.request!.id, comment: 'seen on the bank report' },
      bob.actor
    )

    const audits = await AuditLog.query().where('action', 'payout.complete').orderBy('id')
    assert.deepEqual(
      audits.map((audit) => ({
        actor: audit.actor,
        operatorId: audit.operatorId,
        ip: audit.ip,
        requestId: audit.requestId,
        subject: [audit.subjectType, audit.subjectId],
        before: audit.beforeValues,
        after: audit.afterValues,
        comment: audit.comment,
      })),
      [
        {
          actor: OPERATOR.name,
          operatorId: 7,
          ip: '203.0.113.9',
          requestId: 'req-42',
          subject: ['withdraw', paid],
          before: { status: 'pending', hold_state: 'held' },
          after: { status: 'success', hold_state: 'consumed' },
          comment: null,
        },
        {
          actor: bob.actor.name,
          operatorId: bob.actor.operatorId,
          ip: '127.0.0.1',
          requestId: null,
          subject: ['withdraw', refused],
          before: { status: 'pending', hold_state: 'held', failure_reason: null },
          after: { status: 'failed', hold_state: 'returned', failure_reason: 'account_closed' },
          comment: 'account_closed',
        },
      ]
    )
    // The order's timeline names the operator too.
    const order = await PayoutOrder.findByOrFail('platform_order_id', refused)
    const last = (await orderTimeline('withdraw', order.id)).at(-1)!
    assert.deepInclude(last.serialize(), {
      fromStatus: 'pending',
      toStatus: 'failed',
      actor: bob.actor.name,
      reason: 'account_closed',
    })
  })
})
