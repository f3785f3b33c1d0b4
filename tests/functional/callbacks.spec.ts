import { test } from '@japa/runner'
import { ace } from '#tests/helpers/ace'
import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import PaymentOrder from '#payments/models/payment_order'
import PayoutOrder from '#payouts/models/payout_order'
import CallbackOutbox from '#callbacks/models/callback_outbox'
import CallbackAttempt from '#callbacks/models/callback_attempt'
import { expirePayment } from '#payments/actions/expire_payment'
import { completePayout } from '#payouts/actions/complete_payout'
import { writePaymentCallback } from '#callbacks/outbox'
import { signBody } from '#merchants/credentials'
import { callbackJobId, dispatchPendingCallbacks } from '#callbacks/enqueue'
import { resendCallback } from '#callbacks/actions/resend_callback'
import AuditLog from '#core/audit_log'
import { ActionError } from '#core/validation'
import { deliverCallback } from '#callbacks/delivery'
import { configureCallbacks } from '#callbacks/settings'
import { isForbiddenAddress, PRIVATE_TARGET_ERROR } from '#callbacks/target_guard'
import { dispatch, queue } from '#core/queue/queue_manager'
import { startTestWorker, until } from '#tests/helpers/worker'
import { startCallbackReceiver, type CallbackReceiver } from '#tests/helpers/callback_receiver'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  createPayoutMerchant,
  PAYOUT_FIELDS,
  resetDatabase,
  signedPost,
  type TestMerchant,
} from '#tests/helpers/merchants'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const LATER = () => DateTime.utc().plus({ hours: 1 })

/** A payment order with this notify_url, expired: its FAIL callback row is committed. */
async function expiredPayment(who: TestMerchant, merchantOrderId: string, notifyUrl: string) {
  const response = await signedPost(
    '/payment/create',
    who,
    authBody(who, {
      merchant_order_id: merchantOrderId,
      amount: '100.00',
      bank: 'KTB',
      account_name: 'Customer',
      account_no: '1234567890',
      notify_url: notifyUrl,
    })
  )
  if (response.status !== 200) throw new Error(response.text)
  const order = await PaymentOrder.findByOrFail(
    'platform_order_id',
    response.json.data.platform_order_id
  )
  if (!(await expirePayment(order.id, LATER()))) throw new Error('order not expired')
  const row = await CallbackOutbox.query()
    .where({ order_type: 'payment', order_id: order.id })
    .firstOrFail()
  return { order, row }
}

async function settledState(row: CallbackOutbox, timeoutMs = 10_000) {
  await until(async () => (await row.refresh()).state !== 'pending', timeoutMs)
  return row.state
}

async function attemptsOf(row: CallbackOutbox) {
  return CallbackAttempt.query()
    .where('callback_outbox_id', row.id)
    .orderBy('series')
    .orderBy('attempt')
}

async function jobState(jobId: string) {
  return queue('callbacks').getJobState(jobId)
}

test.group('merchant callbacks', (group) => {
  let receiver: CallbackReceiver
  let stopWorker: () => Promise<void>
  let restoreGuard: (() => void) | undefined

  group.setup(async () => {
    receiver = await startCallbackReceiver()
    // Trust the receiver's self-signed certificate; 1 s per attempt keeps the timeout case short.
    const restore = configureCallbacks({
      extraCa: receiver.certificate,
      timeoutMs: 1000,
      allowPrivateTargets: true,
    })
    return async () => {
      restore()
      await receiver.close()
    }
  })

  group.each.setup(async () => {
    await resetDatabase()
    await queue('callbacks').obliterate({ force: true })
    await queue('payouts').obliterate({ force: true })
    receiver.reset()
    stopWorker = startTestWorker('callbacks')
    return async () => {
      restoreGuard?.()
      restoreGuard = undefined
      await stopWorker()
    }
  })
  group.each.timeout(30_000)

  /** A deposit merchant whose callbacks the receiver verifies, and an account to pay into. */
  async function trustedPayer() {
    const who = await createDepositMerchant()
    receiver.trust(who.merchantId, who.secret)
    await createDepositAccount()
    return who
  }

  test('a payment FAIL and a payout SUCCESS callback arrive once, signed, with the stored bytes', async ({
    assert,
  }) => {
    const payer = await trustedPayer()
    const { order, row } = await expiredPayment(payer, 'CB1', receiver.url('/payments'))

    const payee = await createPayoutMerchant(1000_00)
    receiver.trust(payee.merchantId, payee.secret)
    const created = await signedPost(
      '/withdraw/create',
      payee,
      authBody(payee, {
        ...PAYOUT_FIELDS,
        merchant_order_id: 'CBW1',
        notify_url: receiver.url('/payouts'),
      })
    )
    const payout = await PayoutOrder.findByOrFail(
      'platform_order_id',
      created.json.data.platform_order_id
    )
    await PayoutOrder.query().where('id', payout.id).update({ status: 'pending' })
    assert.isTrue(await completePayout(payout.id, { success: true }))
    const payoutRow = await CallbackOutbox.query()
      .where({ order_type: 'withdraw', order_id: payout.id })
      .firstOrFail()

    assert.equal(await settledState(row), 'delivered')
    assert.equal(await settledState(payoutRow), 'delivered')
    await sleep(600) // nothing else arrives
    assert.lengthOf(receiver.calls, 2)

    for (const [stored, path, who] of [
      [row, '/payments', payer],
      [payoutRow, '/payouts', payee],
    ] as const) {
      const call = receiver.calls.find((entry) => entry.path === path)!
      assert.isTrue(call.signatureValid)
      assert.deepEqual(call.problems, [])
      assert.isTrue(call.body.equals(Buffer.from(stored.body, 'utf8')), 'exact stored bytes')
      assert.equal(call.headers['x-signature'], signBody(who.secret, call.body))
      assert.equal(stored.signature, call.headers['x-signature'], 'signed when written')
      assert.equal(stored.attempts, 1)
      assert.equal(stored.jobId, callbackJobId(stored, 0))
      assert.isNotNull(stored.deliveredAt)
      const [attempt] = await attemptsOf(stored)
      assert.equal(attempt.attempt, 1)
      assert.equal(attempt.httpStatus, 200)
      assert.equal(attempt.targetAddress, '127.0.0.1')
      assert.equal(attempt.responseExcerpt, 'OK')
      assert.isNull(attempt.error)
      assert.isAtLeast(attempt.latencyMs, 0)
    }
    const paymentBody = JSON.parse(
      receiver.calls.find((c) => c.path === '/payments')!.body.toString()
    )
    assert.equal(paymentBody.platform_order_id, order.platformOrderId)
    assert.equal(paymentBody.status, 'FAIL')
    const payoutBody = JSON.parse(
      receiver.calls.find((c) => c.path === '/payouts')!.body.toString()
    )
    assert.equal(payoutBody.mode, 'WITHDRAW')
    assert.equal(payoutBody.status, 'SUCCESS')
  })

  test('four failed attempts (500, 201, timeout, 404) then 200: 5 attempts, delivered', async ({
    assert,
  }) => {
    const who = await trustedPayer()
    receiver.script([500, 201, 'timeout', 404], 200)
    const { row } = await expiredPayment(who, 'CB2', receiver.url())

    assert.equal(await settledState(row), 'delivered')
    assert.lengthOf(receiver.calls, 5)
    assert.isTrue(receiver.calls.every((call) => call.signatureValid))
    assert.isTrue(receiver.calls.every((call) => call.body.equals(receiver.calls[0].body)))
    assert.equal(row.attempts, 5)
    assert.isNotNull(row.deliveredAt)
    assert.isNull(row.lastError)

    const attempts = await attemptsOf(row)
    assert.deepEqual(
      attempts.map((a) => a.attempt),
      [1, 2, 3, 4, 5]
    )
    assert.deepEqual(
      attempts.map((a) => a.httpStatus),
      [500, 201, null, 404, 200]
    )
    assert.include(attempts[2].error, 'timed out after 1000 ms')
    assert.isAtLeast(attempts[2].latencyMs, 900)
    assert.include(attempts[0].error, 'HTTP 500')
    assert.equal(attempts[0].responseExcerpt, 'status 500')
    assert.isTrue(attempts.every((a) => a.jobId === callbackJobId(row, 0)))
  })

  test('a receiver that never answers 200 gets 5 attempts, then the row is failed', async ({
    assert,
  }) => {
    const who = await trustedPayer()
    receiver.script([], 503)
    const { row } = await expiredPayment(who, 'CB3', receiver.url())

    assert.equal(await settledState(row), 'failed')
    await sleep(800) // no sixth attempt
    assert.lengthOf(receiver.calls, 5)
    assert.equal((await row.refresh()).attempts, 5)
    assert.isNull(row.deliveredAt)
    assert.equal(row.lastHttpStatus, 503)
    assert.include(row.lastError, 'HTTP 503')
    assert.isNull(row.nextAttemptAt)
    assert.lengthOf(await attemptsOf(row), 5)
    assert.equal(await jobState(callbackJobId(row, 0)), 'failed')
  })

  test('a database recreated with the same outbox ids still gets its callbacks delivered at once', async ({
    assert,
  }) => {
    const first = await trustedPayer()
    const old = await expiredPayment(first, 'CBR1', receiver.url())
    assert.equal(await settledState(old.row), 'delivered')
    // The database is recreated; Redis keeps the completed job of the old row.
    await resetDatabase()

    const second = await trustedPayer()
    const { row } = await expiredPayment(second, 'CBR2', receiver.url())
    assert.equal(row.id, old.row.id, 'the outbox id is handed out again')
    // No sweep runs here: a job dropped as a duplicate would leave the row pending.
    assert.equal(await settledState(row, 5000), 'delivered')
    assert.lengthOf(receiver.calls, 2)
  })

  test('duplicate jobs never post a delivered row again, nor the same row twice at once', async ({
    assert,
  }) => {
    const who = await trustedPayer()
    const { row } = await expiredPayment(who, 'CB4', receiver.url())
    assert.equal(await settledState(row), 'delivered')

    // Same job id: BullMQ ignores it. Another id: the handler finds the row delivered.
    await dispatch('deliverCallback', { outboxId: row.id, series: 0 }, { jobId: row.jobId! })
    await dispatch('deliverCallback', { outboxId: row.id, series: 0 }, { jobId: `dup-${row.id}` })
    assert.isTrue(await until(async () => (await jobState(`dup-${row.id}`)) === 'completed', 5000))
    const duplicate = await queue('callbacks').getJob(`dup-${row.id}`)
    assert.deepEqual(duplicate?.returnvalue, { result: 'skipped', reason: 'delivered' })
    assert.deepEqual(
      await deliverCallback(
        { outboxId: row.id, series: 0 },
        { id: 'manual', lastJobAttempt: false }
      ),
      {
        result: 'skipped',
        reason: 'delivered',
      }
    )

    // Two jobs racing on one pending row: one posts, the other backs off.
    await stopWorker()
    stopWorker = async () => {}
    const second = await expiredPayment(who, 'CB5', receiver.url())
    const outcomes = await Promise.all(
      ['race-a', 'race-b'].map((id) =>
        deliverCallback({ outboxId: second.row.id, series: 0 }, { id, lastJobAttempt: false })
      )
    )
    assert.sameDeepMembers(
      outcomes.map((outcome) => outcome.result),
      ['delivered', 'skipped']
    )
    assert.lengthOf(receiver.calls, 2)
    assert.lengthOf(await attemptsOf(row), 1)
    assert.lengthOf(await attemptsOf(second.row), 1)
  })

  test('with private targets refused, a loopback notify_url gets no request and fails at once', async ({
    assert,
  }) => {
    restoreGuard = configureCallbacks({ allowPrivateTargets: false })
    const who = await trustedPayer()
    // An IP literal (checked before connecting) and a name (checked in the lookup).
    const literal = await expiredPayment(who, 'CB6', receiver.url('/cb', '127.0.0.1'))
    const named = await expiredPayment(who, 'CB7', receiver.url('/cb', 'localhost'))

    for (const { row } of [literal, named]) {
      assert.equal(await settledState(row), 'failed')
      assert.equal(row.attempts, 1)
      assert.include(row.lastError, PRIVATE_TARGET_ERROR)
      const attempts = await attemptsOf(row)
      assert.lengthOf(attempts, 1)
      assert.isNull(attempts[0].httpStatus)
      assert.include(attempts[0].error, PRIVATE_TARGET_ERROR)
      const jobId = callbackJobId(row, 0)
      assert.isTrue(await until(async () => (await jobState(jobId)) === 'failed', 5000))
      assert.equal((await queue('callbacks').getJob(jobId))?.attemptsMade, 1, 'not retried')
    }
    assert.equal(receiver.connections, 0)
    assert.lengthOf(receiver.calls, 0)
    assert.include((await attemptsOf(literal.row))[0].error, '(127.0.0.1 → 127.0.0.1)')
    assert.match((await attemptsOf(named.row))[0].error!, /\(localhost → (127\.0\.0\.1|::1)\)/)

    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '100.64.0.1',
      '169.254.169.254',
      '0.0.0.0',
      '224.0.0.1',
      '::1',
      '::',
      'fd00::1',
      'fe80::1',
      'ff02::1',
      '::ffff:10.0.0.1',
    ]) {
      assert.isTrue(isForbiddenAddress(address), address)
    }
    for (const address of ['8.8.8.8', '100.128.0.1', '172.32.0.1', '2001:4860:4860::8888']) {
      assert.isFalse(isForbiddenAddress(address), address)
    }
  })

  test('a row written in a rolled-back transaction is never enqueued nor delivered', async ({
    assert,
  }) => {
    const who = await trustedPayer()
    const response = await signedPost(
      '/payment/create',
      who,
      authBody(who, {
        merchant_order_id: 'CB8',
        amount: '100.00',
        bank: 'KTB',
        account_name: 'Customer',
        account_no: '1234567890',
        notify_url: receiver.url(),
      })
    )
    const order = await PaymentOrder.findByOrFail(
      'platform_order_id',
      response.json.data.platform_order_id
    )

    let writtenId: number | null = null
    await assert.rejects(
      () =>
        db.transaction(async (trx) => {
          writtenId = await writePaymentCallback(trx, order, who.merchant, 'FAIL')
          throw new Error('roll back')
        }),
      'roll back'
    )
    assert.isNumber(writtenId)
    assert.lengthOf(await db.from('callback_outbox'), 0)
    assert.equal(
      await jobState(callbackJobId({ platformOrderId: order.platformOrderId, status: 'FAIL' }, 0)),
      'unknown'
    )
    assert.deepEqual(await dispatchPendingCallbacks(), { pending: 0, enqueued: 0 })
    await sleep(500)
    assert.equal(receiver.connections, 0)

    // The same change committed is delivered.
    assert.isTrue(await expirePayment(order.id, LATER()))
    const row = await CallbackOutbox.findByOrFail('order_id', order.id)
    assert.notEqual(row.id, writtenId)
    assert.equal(await settledState(row), 'delivered')
    assert.lengthOf(receiver.calls, 1)
  })

  test('callbacks:resend delivers the callback again in a new series, audited', async ({
    assert,
  }) => {
    const who = await trustedPayer()
    const { order, row } = await expiredPayment(who, 'CB9', receiver.url())
    assert.equal(await settledState(row), 'delivered')

    const result = await ace('callbacks:resend', order.platformOrderId)
    assert.equal(result.code, 0, result.output)
    assert.include(result.output, `queued as ${callbackJobId(row, 1)}`)
    assert.isTrue(await until(async () => receiver.calls.length === 2, 10_000))
    assert.equal(await settledState(row), 'delivered')
    assert.equal(row.series, 1)
    assert.equal(row.attempts, 1)
    assert.equal(row.jobId, `callback-${order.platformOrderId}-FAIL-resend-1`)
    assert.isTrue(receiver.calls[1].signatureValid)
    assert.isTrue(receiver.calls[1].body.equals(receiver.calls[0].body))

    const attempts = await attemptsOf(row)
    assert.deepEqual(
      attempts.map((a) => [a.series, a.attempt, a.httpStatus]),
      [
        [0, 1, 200],
        [1, 1, 200],
      ]
    )
    const audits = await db.from('audit_logs').where('action', 'callback.resend')
    assert.lengthOf(audits, 1)
    assert.match(audits[0].actor, /^cli:/)
    assert.equal(audits[0].subject_id, order.platformOrderId)

    const unknown = await ace('callbacks:resend', 'XXXPNOSUCHORDER000000000')
    assert.equal(unknown.code, 1)
    assert.include(unknown.output, 'No callback')
  })

  test('callbacks:resend: the audit row holds each row before and after and commits with the new series', async ({
    assert,
  }) => {
    const who = await trustedPayer()
    const { order, row } = await expiredPayment(who, 'CB12', receiver.url())
    assert.equal(await settledState(row), 'delivered')

    const missing = await resendCallback({ platform_order_id: '' }, { name: 'test' }).catch(
      (error) => error
    )
    assert.instanceOf(missing, ActionError)
    assert.deepEqual(missing.errors, [
      { field: 'platform_order_id', message: 'platform_order_id is required' },
    ])
    const unknown = await resendCallback(
      { platform_order_id: 'XXXPNOSUCHORDER000000000' },
      { name: 'test' }
    ).catch((error) => error)
    assert.instanceOf(unknown, ActionError)
    assert.isTrue(unknown.notFound)
    const cli = await ace('callbacks:resend', 'XXXPNOSUCHORDER000000000')
    assert.equal(cli.code, 1, cli.output)
    assert.include(cli.output, unknown.errors[0].message)

    // The audit row cannot be stored (request_id is at most 128 characters): the row keeps its series.
    await assert.rejects(() =>
      resendCallback(
        { platform_order_id: order.platformOrderId },
        { name: 'test', requestId: 'r'.repeat(200) }
      )
    )
    await row.refresh()
    assert.equal(row.state, 'delivered')
    assert.equal(row.series, 0)
    assert.lengthOf(await AuditLog.query().where('action', 'callback.resend'), 0)

    const operator = { name: 'operator:ops@example.test', operatorId: 3, requestId: 'req-9' }
    const resent = await resendCallback(
      { platform_order_id: ` ${order.platformOrderId} ` },
      operator
    )
    assert.deepEqual(resent, [
      {
        outboxId: row.id,
        status: 'FAIL',
        previousState: 'delivered',
        series: 1,
        jobId: callbackJobId(row, 1),
        queued: true,
      },
    ])
    const [audit] = await AuditLog.query().where('action', 'callback.resend')
    assert.equal(audit.actor, operator.name)
    assert.equal(audit.operatorId, 3)
    assert.equal(audit.requestId, 'req-9')
    assert.deepEqual([audit.subjectType, audit.subjectId], ['payment', order.platformOrderId])
    assert.deepEqual(audit.beforeValues, { FAIL: { state: 'delivered', series: 0, attempts: 1 } })
    assert.deepEqual(audit.afterValues, { FAIL: { state: 'pending', series: 1, attempts: 0 } })
    assert.equal(await settledState(row), 'delivered')
    assert.equal(row.series, 1)
  })

  test('dispatchPendingCallbacks enqueues pending rows whose job was lost or never added', async ({
    assert,
  }) => {
    await stopWorker()
    stopWorker = async () => {}
    const who = await trustedPayer()
    const lost = await expiredPayment(who, 'CB10', receiver.url())
    const never = await expiredPayment(who, 'CB11', receiver.url())
    assert.equal(await jobState(callbackJobId(lost.row, 0)), 'waiting')
    assert.deepEqual(await dispatchPendingCallbacks(), { pending: 2, enqueued: 0 }, 'jobs exist')

    await queue('callbacks').obliterate({ force: true })
    // As if Redis had been down when the second row committed.
    await db.from('callback_outbox').where('id', never.row.id).update({ enqueued_at: null })
    assert.equal(await jobState(callbackJobId(lost.row, 0)), 'unknown')

    stopWorker = startTestWorker('callbacks')
    await dispatch('dispatchPendingCallbacks', {}, { jobId: 'test-dispatch-pending' })
    assert.equal(await settledState(lost.row), 'delivered')
    assert.equal(await settledState(never.row), 'delivered')
    assert.isTrue(
      await until(async () => (await jobState('test-dispatch-pending')) === 'completed', 5000)
    )
    const sweep = await queue('callbacks').getJob('test-dispatch-pending')
    assert.deepEqual(sweep?.returnvalue, { pending: 2, enqueued: 2 })
    assert.lengthOf(receiver.calls, 2)
    assert.isNotNull((await never.row.refresh()).enqueuedAt)
  })
})
