import { test } from '@japa/runner'
import { Agent, request } from 'node:https'
import { startSecondGateway } from '#tests/helpers/second_process'
import { signBody } from '#merchants/credentials'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  type TestMerchant,
} from '#tests/helpers/merchants'

/** A signed payment create on a keep-alive connection, as merchants' HTTP clients send them. */
function create(agent: Agent, baseUrl: string, who: TestMerchant, id: string) {
  const body = authBody(who, {
    merchant_order_id: id,
    amount: '100.00',
    bank: 'KBANK',
    account_name: 'Somchai',
    account_no: '1234567890',
  })
  const url = new URL(baseUrl)
  return new Promise<{ status: number | string; complete: boolean }>((resolve) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: '/payment/create-transfer',
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'x-signature': signBody(who.secret, Buffer.from(body)),
        },
      },
      (res) => {
        let text = ''
        res.on('data', (chunk) => (text += chunk))
        res.on('end', () => {
          let complete = false
          try {
            complete = typeof JSON.parse(text).success === 'boolean'
          } catch {}
          resolve({ status: res.statusCode!, complete })
        })
        res.on('error', () => resolve({ status: res.statusCode!, complete: false }))
      }
    )
    req.on('error', (error: NodeJS.ErrnoException) =>
      resolve({ status: error.code!, complete: true })
    )
    req.end(body)
  })
}

test.group('web process shutdown', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.timeout(90_000)

  test('SIGTERM under load on 20 keep-alive connections: answers stay whole and the process exits within the bound', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'transfer' })
    const gateway = await startSecondGateway({ env: { SHUTDOWN_TIMEOUT_MS: '4000' } })
    const agent = new Agent({
      keepAlive: true,
      maxSockets: 20,
      ca: undefined,
      rejectUnauthorized: false,
    })

    let sent = 0
    let running = true
    const answers: Array<{ status: number | string; complete: boolean }> = []
    const clients = Array.from({ length: 20 }, async () => {
      while (running) answers.push(await create(agent, gateway.url, who, `SD${sent++}`))
    })
    await new Promise((resolve) => setTimeout(resolve, 1500))
    const started = Date.now()
    await gateway.stop()
    const stoppedIn = Date.now() - started
    running = false
    await Promise.all(clients)
    agent.destroy()

    assert.isBelow(stoppedIn, 5000, `stopped in ${stoppedIn} ms`)
    const ok = answers.filter((answer) => answer.status === 200)
    assert.isAbove(ok.length, 20)
    // Every HTTP answer is a whole envelope; the rest found the port closed.
    assert.isTrue(
      answers.every((answer) => answer.complete),
      JSON.stringify(answers.filter((a) => !a.complete))
    )
  })

  test('SIGTERM after a load run: the process exits at once', async ({ assert }) => {
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'transfer' })
    const gateway = await startSecondGateway({ env: { SHUTDOWN_TIMEOUT_MS: '4000' } })
    const agent = new Agent({ keepAlive: true, maxSockets: 20, rejectUnauthorized: false })
    const answers = await Promise.all(
      Array.from({ length: 300 }, (_, i) => create(agent, gateway.url, who, `AL${i}`))
    )
    assert.equal(answers.filter((answer) => answer.status === 200).length, 300)

    const started = Date.now()
    await gateway.stop()
    assert.isBelow(Date.now() - started, 2000)
    agent.destroy()
  })
})
