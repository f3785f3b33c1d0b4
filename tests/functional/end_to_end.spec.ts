import { test } from '@japa/runner'
import { execFile, spawn } from 'node:child_process'
import { promisify } from 'node:util'
import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import PaymentOrder from '#payments/models/payment_order'
import { configureCallbacks } from '#callbacks/settings'
import { queue } from '#core/queue/queue_manager'
import { settleDuePayments } from '#payments/actions/settle_payment'
import { verifyLedger } from '#ledger/verify'
import { startTestWorker, until } from '#tests/helpers/worker'
import { startCallbackReceiver, type CallbackReceiver } from '#tests/helpers/callback_receiver'
import {
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
} from '#tests/helpers/merchants'
import { clientFor } from '#tests/helpers/merchant_client'
import { verifyAndParseCallback } from '#client/index'

const CUSTOMER = { bank: 'KTB', account_name: 'Customer', account_no: '1234567890' } as const

const exec = promisify(execFile)

test.group('end to end: deposit, sandbox bank, statement, callback, settlement', (group) => {
  let receiver: CallbackReceiver
  group.each.setup(async () => {
    await resetDatabase()
    for (const name of ['payments', 'callbacks', 'reconciliation'] as const) {
      await queue(name).obliterate({ force: true })
    }
    receiver = await startCallbackReceiver()
    const restore = configureCallbacks({ extraCa: receiver.certificate, allowPrivateTargets: true })
    return async () => {
      restore()
      await receiver.close()
    }
  })
  group.each.timeout(60_000)

  test('create → sandbox:pay → PAID callback verified by the merchant → settle → balance', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 200 })
    receiver.trust(who.merchantId, who.secret)
    await createDepositAccount({ channel: 'qr' })
    const client = clientFor(who)
    const stopWorker = startTestWorker('callbacks')
    try {
      const created = await client.paymentCreate({
        merchant_order_id: 'E2E1',
        amount: '500.00',
        ...CUSTOMER,
        notify_url: receiver.url('/paid'),
      })
      const id = created.platform_order_id

      // The customer pays: the sandbox bank writes the statement line; it is imported and matched.
      await exec(process.execPath, ['ace.js', 'sandbox:pay', id], {
        cwd: app.appRoot.pathname,
        env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'silent' },
      })

      assert.isTrue(
        await until(async () => receiver.calls.length > 0, 10_000),
        'no callback arrived'
      )
      const [call] = receiver.calls
      assert.isTrue(call.signatureValid)
      assert.deepEqual(call.problems, [])
      // What the merchant's receiver does: verify the raw bytes, then parse.
      const body = verifyAndParseCallback(call.body, call.headers['x-signature'], who.secret)
      assert.equal(body.platform_order_id, id)
      assert.equal(body.merchant_order_id, 'E2E1')
      assert.equal(body.mode, 'PAYMENT')
      assert.equal(body.status, 'PAID')
      assert.include(call.body.toString('utf8'), '"amount":500.00')

      assert.deepEqual(await client.balance(), {
        balance: 0,
        freeze_balance: 0,
        unsettle_balance: 490,
      })

      // The settlement schedule moves it into the withdrawable balance.
      assert.equal(await settleDuePayments({ ignoreDelay: true }), 1)
      assert.deepEqual(await client.balance(), {
        balance: 490,
        freeze_balance: 0,
        unsettle_balance: 0,
      })
      assert.equal((await client.paymentQuery({ platform_order_id: id })).status, 'settled_paid')

      // Exactly one callback, whatever ran twice.
      await new Promise((resolve) => setTimeout(resolve, 500))
      assert.lengthOf(receiver.calls, 1)
      assert.deepEqual((await verifyLedger()).drifts, [])
    } finally {
      await stopWorker()
      client.close()
    }
  })

  test('killing a worker in the middle of its jobs loses nothing and duplicates nothing', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ orderTtlSeconds: 1 })
    receiver.trust(who.merchantId, who.secret)
    await createDepositAccount({ channel: 'qr' })
    // Slow answers keep deliveries in flight when the worker dies.
    receiver.script([], 200)
    const client = clientFor(who)
    const orders: string[] = []
    for (let i = 0; i < 12; i++) {
      const created = await client.paymentCreate({
        merchant_order_id: `K${i}`,
        amount: '100.00',
        ...CUSTOMER,
        notify_url: receiver.url('/k'),
      })
      orders.push(created.platform_order_id)
    }
    client.close()

    const caPath = join(await mkdtemp(join(tmpdir(), 'gateway-ca-')), 'receiver.pem')
    await writeFile(caPath, receiver.certificate)
    // A real `queue:work` process takes the expiry and callback jobs, and is killed with SIGKILL mid-way.
    const worker = spawn(
      process.execPath,
      ['ace.js', 'queue:work', '--queues=payments', '--queues=callbacks'],
      {
        cwd: app.appRoot.pathname,
        env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'silent', CALLBACK_CA_PATH: caPath },
        stdio: 'ignore',
      }
    )
    await until(async () => receiver.calls.length >= 2, 20_000)
    worker.kill('SIGKILL')
    await new Promise((resolve) => worker.once('exit', resolve))

    // A new worker (in this process) finishes what the dead one left.
    const stopPayments = startTestWorker('payments')
    const stopCallbacks = startTestWorker('callbacks')
    try {
      const allDone = await until(async () => {
        const open = await PaymentOrder.query()
          .whereIn('platform_order_id', orders)
          .where('status', 'open')
        const pending = await db.from('callback_outbox').where('state', 'pending')
        return open.length === 0 && pending.length === 0
      }, 40_000)
      assert.isTrue(allDone, 'every order expired and every callback delivered')
    } finally {
      await stopPayments()
      await stopCallbacks()
    }
    const rows = await db.from('callback_outbox').where('status', 'FAIL')
    assert.lengthOf(rows, 12)
    const delivered = new Set(
      receiver.calls
        .filter((call) => call.signatureValid)
        .map((call) => JSON.parse(call.body.toString()).platform_order_id)
    )
    assert.equal(delivered.size, 12, 'every order reached the merchant')
    // Nothing duplicated in state: one FAIL row per order, each order expired once.
    const failRows = await db
      .from('callback_outbox')
      .where('status', 'FAIL')
      .countDistinct('order_id as orders')
      .first()
    assert.equal(Number(failRows.orders), 12)
    // Delivery is at-least-once (spec: "duplicate deliveries are possible"): a post the
    // merchant answered just before the kill is sent again, at most once per job in flight.
    assert.isAtMost(receiver.calls.length, 12 + 5)
  })
})
