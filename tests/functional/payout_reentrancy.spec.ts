import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import PayoutOrder from '#payouts/models/payout_order'
import { dispatchPayout, sweepPayouts } from '#payouts/actions/dispatch_payout'
import { payoutConnector } from '#payouts/connectors/registry'
import { HANDLERS } from '#jobs/handlers'
import { JOBS } from '#jobs/jobs'
import { queue } from '#core/queue/queue_manager'
import { startTestWorker, until } from '#tests/helpers/worker'
import {
  authBody,
  createPayoutMerchant,
  PAYOUT_FIELDS,
  resetDatabase,
  signedPost,
  type TestMerchant,
} from '#tests/helpers/merchants'

/**
 * A worker can die between any two steps of a payout's dispatch, and BullMQ
 * can run a job twice. Whatever the interleaving, the order must reach one
 * final state, with one ledger posting and one callback row.
 */
async function createWithdrawal(who: TestMerchant, fields: Record<string, unknown> = {}) {
  const response = await signedPost(
    '/withdraw/create',
    who,
    authBody(who, { ...PAYOUT_FIELDS, notify_url: 'https://merchant.example.test/cb', ...fields })
  )
  if (response.status !== 200) throw new Error(response.text)
  const order = await PayoutOrder.findByOrFail(
    'platform_order_id',
    response.json.data.platform_order_id
  )
  // No worker has run yet: drop the jobs the create enqueued, so that the test
  // decides which steps happen, as a crash would.
  await queue('payouts').obliterate({ force: true })
  return order
}

async function finalRecords(order: PayoutOrder) {
  const postings = await db
    .from('ledger_transactions')
    .where({ reference_type: order.kind, reference_id: order.platformOrderId })
    .orderBy('id')
    .select('kind')
  const callbacks = await db
    .from('callback_outbox')
    .where({ order_type: order.kind, order_id: order.id })
    .select('status')
  return { postings: postings.map((row) => row.kind), callbacks }
}

async function runHandler(name: string, data: Record<string, unknown>) {
  const handler = await HANDLERS[name]()
  return handler({ id: `test-${Math.random()}`, name, data, attemptsMade: 0, opts: {} } as any)
}

test.group('payout dispatch is re-entrant', (group) => {
  let stopWorker: (() => Promise<void>) | undefined
  group.each.setup(async () => {
    await resetDatabase()
    await queue('payouts').obliterate({ force: true })
    return async () => {
      await stopWorker?.()
      stopWorker = undefined
    }
  })
  group.each.timeout(30_000)

  test('the bank answers while the order is still queue (dispatch died after submit); the retried dispatch changes nothing', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(1000_00)
    const order = await createWithdrawal(who)

    // The dispatch that died: new → queue committed, the bank accepted the
    // transfer (its answer job is enqueued), and then the process was killed
    // before queue → pending.
    await PayoutOrder.query().where('id', order.id).update({ status: 'queue' })
    await payoutConnector('sandbox')!.submit(await order.refresh())

    stopWorker = startTestWorker('payouts')
    const answerJob = `sandbox-outcome-${order.platformOrderId}`
    assert.isTrue(
      await until(
        async () => (await queue('payouts').getJobState(answerJob)) === 'completed',
        10_000
      ),
      'the bank answer job ran'
    )
    // BullMQ retries the stalled dispatch job.
    await dispatchPayout(order.id)

    assert.isTrue(
      await until(async () => (await order.refresh()).status === 'success', 10_000),
      `order is ${order.status}`
    )
    const records = await finalRecords(order)
    assert.deepEqual(records.postings, ['withdraw_hold', 'withdraw_success'])
    assert.deepEqual(records.callbacks, [{ status: 'SUCCESS' }])
  })

  test('four dispatches of one order at once move it new → queue → pending once, with one event each', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(1000_00)
    const order = await createWithdrawal(who)

    const outcomes = await Promise.all([1, 2, 3, 4].map(() => dispatchPayout(order.id)))
    // The one that moved it to queue, or one that found it there, records pending; never two.
    assert.equal(outcomes.filter((outcome) => outcome === 'pending').length, 1, outcomes.join())
    await order.refresh()
    assert.equal(order.status, 'pending')
    assert.equal(order.connectorReference, `SBXB${String(order.id).padStart(12, '0')}`)
    const events = await db
      .from('order_events')
      .where({ order_type: 'withdraw', order_id: order.id })
      .orderBy('id')
      .select('from_status', 'to_status', 'actor', 'reason')
    assert.deepEqual(events, [
      { from_status: null, to_status: 'new', actor: `merchant:${who.merchantId}`, reason: null },
      { from_status: 'new', to_status: 'queue', actor: 'system', reason: 'dispatched' },
      {
        from_status: 'queue',
        to_status: 'pending',
        actor: 'system',
        reason: 'sandbox: transfer accepted',
      },
    ])
  })

  test('a bank answer job run several times at once completes the order once', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(1000_00)
    const order = await createWithdrawal(who, { account_no: '1234560002' })
    assert.equal(await dispatchPayout(order.id), 'pending')
    await queue('payouts').obliterate({ force: true })
    await new Promise((resolve) => setTimeout(resolve, 300)) // the sandbox bank's delay

    await Promise.all(
      [1, 2, 3].map(() => runHandler(JOBS.sandboxBankOutcome.name, { payoutOrderId: order.id }))
    )
    assert.equal((await order.refresh()).status, 'failed')
    const records = await finalRecords(order)
    assert.deepEqual(records.postings, ['withdraw_hold', 'withdraw_hold_return'])
    assert.deepEqual(records.callbacks, [{ status: 'FAIL' }])
  })

  test('the sweep asks the bank about a pending order whose answer job was lost', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(1000_00)
    const order = await createWithdrawal(who)
    assert.equal(await dispatchPayout(order.id), 'pending')
    await queue('payouts').obliterate({ force: true }) // Redis lost the answer job
    // Five minutes later: the sandbox bank has long decided.
    const earlier = DateTime.utc().minus({ minutes: 5 }).toJSDate()
    await PayoutOrder.query()
      .where('id', order.id)
      .update({ created_at: earlier, updated_at: earlier })

    await sweepPayouts()
    assert.equal((await order.refresh()).status, 'success')
    assert.deepEqual((await finalRecords(order)).postings, ['withdraw_hold', 'withdraw_success'])
  })

  test('the sweep dispatches an order left in queue by a dispatch that died before the bank was called', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(1000_00)
    const order = await createWithdrawal(who)
    await PayoutOrder.query()
      .where('id', order.id)
      .update({ status: 'queue', updated_at: DateTime.utc().minus({ minutes: 5 }).toJSDate() })

    stopWorker = startTestWorker('payouts')
    await sweepPayouts()
    assert.isTrue(
      await until(async () => (await order.refresh()).status === 'success', 10_000),
      `order is ${order.status}`
    )
    const records = await finalRecords(order)
    assert.deepEqual(records.postings, ['withdraw_hold', 'withdraw_success'])
    assert.deepEqual(records.callbacks, [{ status: 'SUCCESS' }])
  })
})
