import { test } from '@japa/runner'
import { createServer as createNetServer, type AddressInfo } from 'node:net'
import { Agent } from 'node:https'
import { rm } from 'node:fs/promises'
import { DateTime } from 'luxon'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import env from '#start/env'
import PaymentOrder from '#payments/models/payment_order'
import PayoutOrder from '#payouts/models/payout_order'
import { expirePayment } from '#payments/actions/expire_payment'
import { completePayout } from '#payouts/actions/complete_payout'
import { configureCallbacks } from '#callbacks/settings'
import { queue } from '#core/queue/queue_manager'
import {
  API_ERROR_IDENTIFIERS,
  CallbackError,
  callbackDedupKey,
  callbackOrderKind,
  formatAmount,
  GatewayApiError,
  GatewayNetworkError,
  MerchantClient,
  parseCallback,
  sameAmount,
  toSatang,
  UnexpectedResponseError,
  verifyAndParseCallback,
  verifyCallback,
  type ApiErrorIdentifier,
  type BankCode,
  type MerchantClientError,
  type PaymentCreateInput,
  type RetryEvent,
  type RetryPolicy,
} from '#client/index'
import { clientFor } from '#tests/helpers/merchant_client'
import { startRecordingProxy, type RecordingProxy } from '#tests/helpers/recording_proxy'
import { startCallbackReceiver, type CallbackReceiver } from '#tests/helpers/callback_receiver'
import { startTestWorker, until } from '#tests/helpers/worker'
import { sandboxSlip } from '#tests/helpers/slips'
import { testServers } from '#tests/helpers/servers'
import {
  createDepositAccount,
  createDepositMerchant,
  createPayoutMerchant,
  resetDatabase,
  type TestMerchant,
} from '#tests/helpers/merchants'

/**
 * The reference merchant client (client/) against the real gateway over
 * HTTPS: every endpoint, its error types, retries that send the same signed
 * bytes, and callback verification.
 */

const CUSTOMER = {
  bank: 'KBANK',
  account_name: 'Somchai Jaidee',
  account_no: '1234567890',
} as const

function payment(merchantOrderId: string, fields: Partial<PaymentCreateInput> = {}) {
  return { merchant_order_id: merchantOrderId, amount: '150.00', ...CUSTOMER, ...fields }
}

/** The error a promise rejects with (fails the test when it resolves). */
async function rejection<E extends Error = MerchantClientError>(promise: Promise<unknown>) {
  try {
    await promise
  } catch (error) {
    return error as E
  }
  throw new Error('expected the call to fail')
}

async function count(table: string) {
  return Number((await db.from(table).count('* as total').first()).total)
}

/** The client of a merchant through the recording proxy, retrying quickly. */
function proxiedClient(
  who: TestMerchant,
  proxy: RecordingProxy,
  retries: Partial<RetryPolicy> = {}
) {
  const retried: RetryEvent[] = []
  const client = clientFor(who, {
    baseUrl: proxy.url,
    retries: { baseDelayMs: 10, jitter: false, ...retries },
    onRetry: (event) => retried.push(event),
  })
  return { client, retried }
}

test.group('merchant client: every endpoint', (group) => {
  const slipFolders: string[] = []
  group.each.setup(() => resetDatabase())
  group.each.teardown(async () => {
    const root = env.get('DRIVE_FS_ROOT') ?? app.makePath('storage')
    for (const uuid of slipFolders.splice(0)) {
      await rm(`${root}/slips/${uuid}`, { recursive: true, force: true })
    }
  })

  test('balance, withdraw create and query, settlement create and query', async ({ assert }) => {
    const who = await createPayoutMerchant(5000_00, {
      withdrawFeeFlat: 5_00,
      withdrawFeeRateBps: 0,
      settlementFeeFlat: 25_00,
    })
    const client = clientFor(who)

    assert.deepEqual(await client.balance(), {
      balance: 5000,
      freeze_balance: 0,
      unsettle_balance: 0,
    })

    const withdraw = await client.withdrawCreate({
      merchant_order_id: 'CW1',
      amount: 100, // a number is sent as "100.00"
      ...CUSTOMER,
    })
    assert.deepEqual(Object.keys(withdraw), [
      'platform_order_id',
      'merchant_order_id',
      'order_datetime',
      'amount',
      'bank',
      'account_no',
      'account_name',
    ])
    assert.equal(withdraw.platform_order_id[3], 'W')
    assert.equal(withdraw.amount, 100)
    assert.equal(withdraw.bank, 'KBANK')
    const withdrawStatus = await client.withdrawQuery({
      platform_order_id: withdraw.platform_order_id,
    })
    assert.equal(withdrawStatus.status, 'open')
    assert.isNull(withdrawStatus.done_datetime)
    assert.equal(withdrawStatus.merchant_order_id, 'CW1')

    const settlement = await client.settlementCreate({
      merchant_order_id: 'CS1',
      amount: '1000.00',
      ...CUSTOMER,
    })
    assert.equal(settlement.platform_order_id[3], 'M')
    assert.equal(settlement.status, 'open')
    assert.equal(settlement.fee, 25)
    const settlementStatus = await client.settlementQuery({
      platform_order_id: settlement.platform_order_id,
    })
    assert.equal(settlementStatus.status, 'open')
    assert.isNull(settlementStatus.done_datetime)

    // Integer satang, never float arithmetic: what the two holds took.
    const held =
      toSatang(withdraw.amount) + 5_00 + toSatang(settlement.amount) + toSatang(settlement.fee)
    const balance = await client.balance()
    assert.equal(formatAmount(toSatang(balance.freeze_balance)), formatAmount(held))
    assert.equal(toSatang(balance.balance), 5000_00 - held)
    client.close()
  })

  test('payment create (QR, transfer, flex) and query', async ({ assert }) => {
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'qr' })
    const transferAccount = await createDepositAccount({ channel: 'transfer' })
    const client = clientFor(who)

    const qr = await client.paymentCreate(payment('CP1', { amount: 100.5 }))
    assert.equal(qr.payment_type, 'QR')
    assert.equal(qr.platform_order_id[3], 'P')
    assert.equal(qr.merchant_order_id, 'CP1')
    assert.equal(qr.amount, 100.5)
    assert.isAtLeast(toSatang(qr.transfer_amount), toSatang(qr.amount))
    assert.match(qr.qrcode, /^000201/)
    assert.equal(qr.payment_url, `https://pay.example.test/pay/${qr.uuid}`)

    const transfer = await client.paymentCreateTransfer(payment('CP2'))
    assert.equal(transfer.payment_type, 'TRANSFER')
    assert.isNull(transfer.qrcode)
    assert.equal(transfer.deposit_bank, transferAccount.bank)
    assert.equal(transfer.deposit_account_no, transferAccount.accountNo)
    assert.equal(transfer.deposit_account_name, transferAccount.accountName)

    const flex = await client.paymentCreateFlex(payment('CP3'))
    assert.equal(flex.payment_type, 'FLEX')
    assert.equal(flex.payment_url, `https://pay.example.test/pay/${flex.uuid}`)
    assert.notProperty(flex, 'qrcode')

    for (const created of [qr, transfer, flex]) {
      const status = await client.paymentQuery({ platform_order_id: created.platform_order_id })
      assert.deepEqual(status, {
        platform_order_id: created.platform_order_id,
        merchant_order_id: created.merchant_order_id,
        order_datetime: created.order_datetime,
        amount: created.amount,
        status: 'open',
        expire_datetime: created.expire_datetime,
        payment_datetime: null,
      })
    }
    client.close()
  })

  test('slip upload; a second slip within 5 minutes is a typed 429 with Retry-After, not retried', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'qr' })
    const client = clientFor(who)
    const order = await client.paymentCreate(payment('CSLIP1'))
    slipFolders.push(order.uuid)

    const uploaded = await client.slipUpload({
      platform_order_id: order.platform_order_id,
      image_base64: (await sandboxSlip({ amount: 150_00 })).toString('base64'),
    })
    assert.equal(uploaded.msg, 'slip upload successful.')
    assert.isString(uploaded.verification_msg)

    const again = await rejection<GatewayApiError>(
      client.slipUpload({
        platform_order_id: order.platform_order_id,
        image_base64: (await sandboxSlip({ amount: 150_00 })).toString('base64'),
      })
    )
    assert.instanceOf(again, GatewayApiError)
    assert.equal(again.status, 429)
    assert.equal(again.error, 'too-many-requests')
    assert.isAbove(again.retryAfterSeconds!, 0)
    assert.equal(again.attempts, 1, 'too-many-requests is not retried by default')
    client.close()
  })
})

test.group('merchant client: errors as types', (group) => {
  group.each.setup(() => resetDatabase())

  /** Asserts a GatewayApiError answered once (never retried). */
  function assertApiError(
    assert: any,
    error: unknown,
    status: number,
    identifier: ApiErrorIdentifier
  ) {
    assert.instanceOf(error, GatewayApiError)
    const apiError = error as GatewayApiError
    assert.equal(apiError.status, status, apiError.message)
    assert.equal(apiError.code, status)
    assert.equal(apiError.error, identifier, apiError.message)
    assert.isTrue(apiError.is(identifier))
    assert.isTrue(apiError.listed)
    assert.isAbove(apiError.message.length, 0)
    assert.equal(apiError.attempts, 1)
    assert.include(API_ERROR_IDENTIFIERS, apiError.error)
  }

  test('the gateway refusals: status, identifier, message, data', async ({ assert }) => {
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'qr' })
    const client = clientFor(who)

    const wrongSecret = clientFor(who, { secret: 'not-the-secret' })
    assertApiError(assert, await rejection(wrongSecret.balance()), 403, 'signature-error')
    const wrongToken = clientFor(who, { token: 'not-the-token' })
    assertApiError(assert, await rejection(wrongToken.balance()), 403, 'authentication-failed')

    const tooSmall = await rejection(client.paymentCreate(payment('CE1', { amount: '10.00' })))
    assertApiError(assert, tooSmall, 400, 'invalid-inputs')
    const unknownBank = await rejection(
      client.paymentCreate(payment('CE2', { bank: 'NOPE' as BankCode }))
    )
    assertApiError(assert, unknownBank, 422, 'invalid-inputs')
    assert.equal(unknownBank.message, 'invalid bank code')

    const created = await client.paymentCreate(payment('CE3'))
    const duplicate = await rejection(
      client.paymentCreate(payment('CE3', { account_name: 'Another customer' }))
    )
    assertApiError(assert, duplicate, 409, 'duplicate-entry')

    const missing = `${created.platform_order_id.slice(0, 12)}ZZZZZZZZZZZZ`
    const notFound = await rejection(client.paymentQuery({ platform_order_id: missing }))
    assertApiError(assert, notFound, 404, 'not-found')
    assert.equal(notFound.endpoint, '/payment/query')

    const disabled = clientFor(await createDepositMerchant({ paymentEnabled: false }))
    const denied = await rejection(disabled.paymentCreateFlex(payment('CE4')))
    assertApiError(assert, denied, 403, 'permission-denied')

    // Callers branch on the identifier; the union makes a typo a compile error.
    const handling = (error: GatewayApiError) => {
      switch (error.error) {
        case 'duplicate-entry':
          return 'query the existing order'
        case 'service-unavailable':
        case 'channel-limit-reached':
          return 'retry later'
        default:
          return 'do not retry'
      }
    }
    assert.equal(handling(duplicate as GatewayApiError), 'query the existing order')
    for (const c of [client, wrongSecret, wrongToken, disabled]) c.close()
  })

  test('inputs that cannot be sent are refused before anything is sent', async ({ assert }) => {
    const who = await createDepositMerchant()
    const client = clientFor(who)
    assert.throws(
      () => client.prepare('/payment/create', payment('X', { amount: 100.123 })),
      /2 decimals/
    )
    assert.throws(
      () => client.prepare('/payment/create', payment('X', { amount: 0.1 + 0.2 })),
      /2 decimals/
    )
    assert.throws(
      () => client.prepare('/payment/create', payment('X', { amount: '-5' })),
      /2 decimals/
    )
    assert.throws(
      () => client.prepare('/balance', { time: 1 } as unknown as Record<string, never>),
      /set by the client/
    )
    assert.throws(() => clientFor(who, { baseUrl: testServers.httpUrl }), /https/)

    // What is sent: the credentials and time first, the fields in order, the amount with 2 decimals.
    const prepared = client.prepare('/payment/create', payment('X1', { amount: 20.5 }))
    const body = JSON.parse(prepared.body.toString('utf8'))
    assert.deepEqual(Object.keys(body), [
      'merchant_id',
      'token',
      'time',
      'merchant_order_id',
      'amount',
      'bank',
      'account_name',
      'account_no',
    ])
    assert.equal(body.amount, '20.50')
    assert.equal(body.time, prepared.time)
    assert.isTrue(Number.isInteger(body.time))
    assert.match(prepared.signature, /^[0-9a-f]{64}$/)
  })

  test('no answer is a GatewayNetworkError: refused (retried, never sent) and TLS (not retried)', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    // A port nobody listens on.
    const probe = createNetServer()
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
    const port = (probe.address() as AddressInfo).port
    await new Promise((resolve) => probe.close(resolve))

    const retried: RetryEvent[] = []
    const refused = await rejection<GatewayNetworkError>(
      clientFor(who, {
        baseUrl: `https://127.0.0.1:${port}`,
        retries: { retries: 1, baseDelayMs: 1 },
        onRetry: (event) => retried.push(event),
      }).balance()
    )
    assert.instanceOf(refused, GatewayNetworkError)
    assert.equal(refused.failure, 'connection-refused')
    assert.equal(refused.code, 'ECONNREFUSED')
    assert.equal(refused.attempts, 2)
    assert.isFalse(refused.mayHaveReachedGateway)
    assert.deepEqual(
      retried.map((event) => [event.attempt, event.cause]),
      [[1, 'connection-refused']]
    )

    // The test gateway's self-signed certificate, not trusted: a TLS failure, never retried.
    const untrusted = await rejection<GatewayNetworkError>(
      clientFor(who, { ca: undefined }).balance()
    )
    assert.instanceOf(untrusted, GatewayNetworkError)
    assert.equal(untrusted.failure, 'tls')
    assert.equal(untrusted.attempts, 1)
    assert.isFalse(untrusted.mayHaveReachedGateway)

    // rejectUnauthorized: false accepts it (development only).
    const insecure = clientFor(who, { ca: undefined, rejectUnauthorized: false })
    assert.property(await insecure.balance(), 'balance')
    insecure.close()
  })

  test('an answer without the envelope is an UnexpectedResponseError', async ({ assert }) => {
    const who = await createDepositMerchant()
    const proxy = await startRecordingProxy()
    try {
      proxy.script([
        { status: 502, headers: { 'content-type': 'text/html' }, body: '<h1>Bad gateway</h1>' },
      ])
      const { client } = proxiedClient(who, proxy)
      const error = await rejection<UnexpectedResponseError>(client.balance())
      assert.instanceOf(error, UnexpectedResponseError)
      assert.equal(error.status, 502)
      assert.equal(error.bodyExcerpt, '<h1>Bad gateway</h1>')
      assert.equal(error.attempts, 1)
      client.close()
    } finally {
      await proxy.close()
    }
  })
})

test.group('merchant client: a retry sends the same bytes', (group) => {
  let proxy: RecordingProxy
  group.setup(async () => {
    proxy = await startRecordingProxy()
    return () => proxy.close()
  })
  group.each.setup(() => resetDatabase())

  /** Every request the proxy saw carried the same bytes and X-SIGNATURE. */
  function assertSameRequest(assert: any, times: number) {
    assert.lengthOf(proxy.requests, times)
    const [first, ...others] = proxy.requests
    assert.match(first.signature!, /^[0-9a-f]{64}$/)
    for (const other of others) {
      assert.equal(other.signature, first.signature)
      assert.isTrue(other.body.equals(first.body), 'the same bytes')
    }
  }

  test('an answer lost after /withdraw/create ran: the retry gets the original answer, one payout', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(1000_00)
    const { client, retried } = proxiedClient(who, proxy)
    proxy.script(['lose-answer'])

    const result = await client.call('/withdraw/create', {
      merchant_order_id: 'RW1',
      amount: '100.00',
      ...CUSTOMER,
    })
    assertSameRequest(assert, 2)
    assert.equal(result.attempts, 2)
    assert.equal(result.signature, proxy.requests[0].signature)
    assert.deepEqual(
      retried.map((event) => [event.attempt, event.cause, event.signature]),
      [[1, 'socket-hang-up', result.signature]]
    )
    // The first attempt ran on the gateway; the retry was answered what it was answered.
    const lost = JSON.parse(proxy.requests[0].gatewayAnswer!.text)
    assert.deepEqual(result.data, lost.data)
    assert.equal(await count('payout_orders'), 1)
    assert.deepEqual(await clientFor(who).balance(), {
      balance: 900,
      freeze_balance: 100,
      unsettle_balance: 0,
    })
    client.close()
  })

  test('a timeout on /payment/create: the same bytes again, one order', async ({ assert }) => {
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'qr' })
    // The options a merchant writes: no test helper.
    const retried: RetryEvent[] = []
    const slow = new MerchantClient({
      baseUrl: proxy.url,
      merchantId: who.merchantId,
      token: who.token,
      secret: who.secret,
      ca: testServers.certificate,
      timeoutMs: 1500,
      retries: { retries: 2, baseDelayMs: 10, retryOn: ['timeout'] },
      onRetry: (event) => retried.push(event),
    })
    proxy.script([{ delayMs: 3000 }])

    const result = await slow.call('/payment/create', payment('RP1'))
    assertSameRequest(assert, 2)
    assert.equal(result.attempts, 2)
    assert.deepEqual(
      retried.map((event) => event.cause),
      ['timeout']
    )
    assert.deepEqual(result.data, JSON.parse(proxy.requests[0].gatewayAnswer!.text).data)
    assert.equal(await count('payment_orders'), 1)
    slow.close()
  })

  test('503 with Retry-After: waited for, then the same bytes; a 503 platform gate is not retried', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'qr' })
    const { client, retried } = proxiedClient(who, proxy)
    const outage = JSON.stringify({
      code: 503,
      error: 'service-unavailable',
      success: false,
      message: 'service temporarily unavailable; retry with backoff',
    })
    proxy.script([{ status: 503, headers: { 'retry-after': '1' }, body: outage }])
    const started = Date.now()
    const created = await client.call('/payment/create', payment('R503'))
    assert.isAtLeast(Date.now() - started, 1000, 'Retry-After was honoured')
    assertSameRequest(assert, 2)
    assert.equal(created.attempts, 2)
    assert.deepEqual(
      retried.map((event) => [event.cause, event.delayMs]),
      [['service-unavailable', 1000]]
    )

    // The deposit API switched off: platform state, no Retry-After; thrown at once.
    proxy.script([
      {
        status: 503,
        body: JSON.stringify({
          code: 503,
          error: 'service-unavailable',
          success: false,
          message: 'the deposit API is switched off for this platform',
          data: { code: 'killswitch_off' },
        }),
      },
    ])
    const gated = await rejection<GatewayApiError>(client.paymentCreate(payment('RGATE')))
    assert.instanceOf(gated, GatewayApiError)
    assert.equal(gated.error, 'service-unavailable')
    assert.deepEqual(gated.data, { code: 'killswitch_off' })
    assert.equal(gated.attempts, 1)
    assert.lengthOf(proxy.requests, 1)
    client.close()
  })

  test('retries exhausted: a network error; the prepared request sent again learns the outcome', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(1000_00)
    const { client } = proxiedClient(who, proxy, { retries: 2 })
    proxy.script(['lose-answer', 'lose-answer', 'lose-answer'])

    const prepared = client.prepare('/withdraw/create', {
      merchant_order_id: 'RX1',
      amount: '250.00',
      ...CUSTOMER,
    })
    const lost = await rejection<GatewayNetworkError>(client.send(prepared))
    assert.instanceOf(lost, GatewayNetworkError)
    assert.equal(lost.failure, 'socket-hang-up')
    assert.equal(lost.attempts, 3)
    assert.isTrue(lost.mayHaveReachedGateway)
    assertSameRequest(assert, 3)

    // Later (within the gateway's time tolerance): the same prepared bytes once more.
    const outcome = await client.send(prepared)
    assertSameRequest(assert, 4)
    assert.deepEqual(outcome.data, JSON.parse(proxy.requests[0].gatewayAnswer!.text).data)
    assert.equal(outcome.data.amount, 250)
    assert.equal(await count('payout_orders'), 1)

    // No retries at all, and none past the signing window.
    for (const retries of [{ retries: 0 }, { windowMs: 5, baseDelayMs: 50 }]) {
      const strict = proxiedClient(who, proxy, retries)
      proxy.script(['lose-answer'])
      const error = await rejection<GatewayNetworkError>(strict.client.balance())
      assert.equal(error.attempts, 1)
      assert.lengthOf(strict.retried, 0)
      strict.client.close()
    }
    client.close()
  })

  test('a custom agent: its connections are used and kept alive', async ({ assert }) => {
    const who = await createDepositMerchant()
    let connections = 0
    class CountingAgent extends Agent {
      createConnection(...args: Parameters<Agent['createConnection']>) {
        connections++
        return super.createConnection(...args)
      }
    }
    const agent = new CountingAgent({ keepAlive: true, maxSockets: 1 })
    const client = clientFor(who, { agent })
    for (let i = 0; i < 3; i++) assert.property(await client.balance(), 'balance')
    assert.equal(connections, 1)
    client.close() // not the caller's agent
    assert.property(await client.balance(), 'balance')
    agent.destroy()
  })
})

test.group('merchant client: callbacks', (group) => {
  let receiver: CallbackReceiver
  let stopWorker: () => Promise<void>

  group.setup(async () => {
    receiver = await startCallbackReceiver()
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
    receiver.reset()
    stopWorker = startTestWorker('callbacks')
    return () => stopWorker()
  })
  group.each.timeout(30_000)

  /** The receiver's call at `path`, once it arrived: raw bytes and X-Signature as received. */
  async function received(path: string) {
    if (!(await until(async () => receiver.calls.some((call) => call.path === path), 10_000))) {
      throw new Error(`no callback arrived at ${path}`)
    }
    const call = receiver.calls.find((entry) => entry.path === path)!
    return { body: call.body, signature: call.headers['x-signature'] }
  }

  test('payment FAIL, withdraw SUCCESS, settlement FAIL: verified and parsed', async ({
    assert,
  }) => {
    const payer = await createDepositMerchant()
    receiver.trust(payer.merchantId, payer.secret)
    await createDepositAccount({ channel: 'qr' })
    const created = await clientFor(payer).paymentCreate(
      payment('CB1', { amount: '100.00', notify_url: receiver.url('/payment') })
    )
    const order = await PaymentOrder.findByOrFail('platform_order_id', created.platform_order_id)
    assert.isTrue(await expirePayment(order.id, DateTime.utc().plus({ hours: 1 })))

    const paymentCall = await received('/payment')
    assert.isTrue(verifyCallback(paymentCall.body, paymentCall.signature, payer.secret))
    const paid = verifyAndParseCallback(paymentCall.body, paymentCall.signature, payer.secret)
    assert.equal(paid.mode, 'PAYMENT')
    if (paid.mode !== 'PAYMENT') return
    assert.equal(paid.status, 'FAIL')
    assert.equal(paid.platform_order_id, created.platform_order_id)
    assert.equal(paid.merchant_order_id, 'CB1')
    assert.equal(paid.merchant_id, payer.merchantId)
    assert.isTrue(sameAmount(paid.amount, created.amount))
    assert.isTrue(Number.isSafeInteger(paid.timestamp) && paid.timestamp > 1e12, 'milliseconds')
    assert.equal(callbackOrderKind(paid), 'payment')
    assert.equal(callbackDedupKey(paid), `${created.platform_order_id}:FAIL`)

    const payee = await createPayoutMerchant(5000_00)
    receiver.trust(payee.merchantId, payee.secret)
    const client = clientFor(payee)
    const withdraw = await client.withdrawCreate({
      merchant_order_id: 'CBW1',
      amount: '100.00',
      ...CUSTOMER,
      notify_url: receiver.url('/withdraw'),
    })
    const settlement = await client.settlementCreate({
      merchant_order_id: 'CBM1',
      amount: '1000.00',
      ...CUSTOMER,
      notify_url: receiver.url('/settlement'),
    })
    for (const [id, outcome] of [
      [withdraw.platform_order_id, { success: true }],
      [settlement.platform_order_id, { success: false, reason: 'account closed' }],
    ] as const) {
      const payout = await PayoutOrder.findByOrFail('platform_order_id', id)
      await PayoutOrder.query().where('id', payout.id).update({ status: 'pending' })
      assert.isTrue(await completePayout(payout.id, outcome))
    }

    const withdrawCall = await received('/withdraw')
    const done = verifyAndParseCallback(withdrawCall.body, withdrawCall.signature, payee.secret)
    assert.equal(done.mode, 'WITHDRAW')
    if (done.mode !== 'WITHDRAW') return
    assert.equal(done.status, 'SUCCESS')
    assert.equal(callbackOrderKind(done), 'withdraw')
    assert.equal(done.bank, 'KBANK')
    assert.equal(done.account_no, CUSTOMER.account_no)
    assert.isTrue(sameAmount(done.amount, withdraw.amount))

    const settlementCall = await received('/settlement')
    const failed = parseCallback(settlementCall.body)
    assert.isTrue(verifyCallback(settlementCall.body, settlementCall.signature, payee.secret))
    assert.equal(failed.mode, 'WITHDRAW')
    assert.equal(failed.status, 'FAIL')
    assert.equal(callbackOrderKind(failed), 'settlement')
    assert.equal(failed.platform_order_id, settlement.platform_order_id)

    // What a receiver must refuse.
    const { body, signature } = paymentCall
    const tampered = Buffer.from(body)
    tampered[tampered.indexOf('"amount":') + 9] = '9'.charCodeAt(0)
    assert.isFalse(verifyCallback(tampered, signature, payer.secret))
    assert.isFalse(verifyCallback(body, signature, payee.secret), 'another secret')
    assert.isFalse(verifyCallback(body, String(signature).toUpperCase(), payer.secret))
    assert.isFalse(verifyCallback(body, String(signature).slice(0, 63), payer.secret))
    assert.isFalse(verifyCallback(body, `${signature}00`, payer.secret))
    assert.isFalse(verifyCallback(body, undefined, payer.secret))
    assert.isFalse(verifyCallback(body, [String(signature)], payer.secret))
    assert.isFalse(verifyCallback(body, '', payer.secret))
    const refused = await rejection<CallbackError>(
      (async () => verifyAndParseCallback(tampered, signature, payer.secret))()
    )
    assert.instanceOf(refused, CallbackError)
    assert.equal(refused.reason, 'signature')
  })

  test('parseCallback refuses what is not a callback of the spec', async ({ assert }) => {
    const valid = {
      merchant_id: 'TEST0001',
      platform_order_id: 'TSTP20260101ABCDEFGHJKLM',
      merchant_order_id: 'A1',
      mode: 'PAYMENT',
      amount: 100,
      status: 'PAID',
      timestamp: Date.now(),
    }
    assert.equal(parseCallback(Buffer.from(JSON.stringify(valid))).status, 'PAID')
    const cases: Array<[unknown, RegExp]> = [
      ['not json', /not JSON/],
      [[], /not a JSON object/],
      [{ ...valid, status: 'SUCCESS' }, /PAID or FAIL/],
      [{ ...valid, mode: 'REFUND' }, /unknown mode/],
      [{ ...valid, amount: '100.00' }, /amount must be a number/],
      [{ ...valid, amount: 100.001 }, /2 decimals/],
      [{ ...valid, timestamp: '1' }, /timestamp/],
      [{ ...valid, platform_order_id: 'TSTW20260101ABCDEFGHJKLM' }, /marker P/],
      [{ ...valid, mode: 'WITHDRAW', status: 'SUCCESS' }, /marker W or M/],
      [
        {
          ...valid,
          mode: 'WITHDRAW',
          status: 'SUCCESS',
          platform_order_id: 'TSTM20260101ABCDEFGHJKLM',
        },
        /bank must be a string/,
      ],
    ]
    for (const [body, message] of cases) {
      const raw = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body))
      const error = await rejection<CallbackError>((async () => parseCallback(raw))())
      assert.instanceOf(error, CallbackError)
      assert.equal(error.reason, 'malformed')
      assert.match(error.message, message)
    }
  })
})
