import { test } from '@japa/runner'
import {
  createMerchant,
  merchantClient,
  startWeb,
  startWorker,
} from '#tests/faults/helpers/gateway'
import { isSuccess, type ApiResponse } from '#tests/faults/helpers/client'
import { DATABASE, world } from '#tests/faults/helpers/world'
import { sleep } from '#tests/faults/helpers/processes'
import { Scenario } from '#tests/faults/helpers/scenario'

async function withdrawalsNamed(merchantId: number, merchantOrderId: string) {
  const [row] = await world().mariadb.query(
    'SELECT COUNT(*) AS n FROM payout_orders WHERE merchant_id = ? AND merchant_order_id = ?',
    [merchantId, merchantOrderId],
    DATABASE
  )
  return Number(row.n)
}

const describe = (response: ApiResponse) =>
  response.status === 0
    ? `no answer (${response.error})`
    : response.json?.success === true
      ? `${response.status} success (${response.json.data?.platform_order_id})`
      : `${response.status} ${response.json?.error ?? response.text.slice(0, 80)}`

test.group('a. replay', () => {
  test('the same signed bytes of /withdraw/create create one withdrawal, on any web process', async ({
    assert,
  }) => {
    const s = new Scenario('a. replay of a signed /withdraw/create (duplicate check off)')
    try {
      const merchant = await createMerchant('replay', 10_000_00)
      const [web1, web2] = await Promise.all([startWeb('web-1'), startWeb('web-2')])
      s.track(web1.process)
      s.track(web2.process)
      s.track(await startWorker())
      const client = merchantClient(merchant, web1)
      const notifyUrl = world().receiver.url
      let replays = 0
      let replaysAnswered = 0

      // 1. A request, then its exact bytes again: once more in sequence, then
      // four at once split over the two web processes.
      const fields = client.withdrawFields('1234567890', '20.00', notifyUrl)
      const body = client.body(fields)
      const first = await client.post('/withdraw/create', body)
      s.expect(isSuccess(first), `first create: ${describe(first)}`)
      const again = [await client.post('/withdraw/create', body)]
      again.push(
        ...(await Promise.all(
          [web1, web2, web1, web2].map((web) =>
            client.post('/withdraw/create', body, { baseUrl: web.url })
          )
        ))
      )
      const answer = first.json?.data?.platform_order_id
      for (const response of again) {
        replays++
        if (isSuccess(response) && response.text === first.text) replaysAnswered++
        else
          s.failures.push(
            `replayed bytes answered ${describe(response)}, expected the first answer (${answer})`
          )
      }
      const created = await withdrawalsNamed(merchant.id, fields.merchant_order_id)
      s.expect(created === 1, `replays of one request created ${created} withdrawals`)

      // 2. Bytes never seen before, sent six times at once to both processes:
      // one runs, the others wait for it and are answered what it was.
      const raceFields = client.withdrawFields('1234567891', '20.00', notifyUrl)
      const raceBody = client.body(raceFields)
      const race = await Promise.all(
        [web1, web2, web1, web2, web1, web2].map((web) =>
          client.post('/withdraw/create', raceBody, { baseUrl: web.url })
        )
      )
      const raceAnswers = new Set(race.filter(isSuccess).map((response) => response.text))
      const raceSucceeded = race.filter(isSuccess).length
      replays += race.length - 1
      replaysAnswered +=
        raceSucceeded === race.length && raceAnswers.size === 1 ? race.length - 1 : 0
      s.expect(
        raceSucceeded === race.length && raceAnswers.size === 1,
        `6 identical concurrent requests: ${raceSucceeded} succeeded with ${raceAnswers.size} different answers, expected 6 with one (${race.map(describe).join(', ')})`
      )
      const raceCreated = await withdrawalsNamed(merchant.id, raceFields.merchant_order_id)
      s.expect(
        raceCreated === 1,
        `6 identical concurrent requests created ${raceCreated} withdrawals`
      )

      // 3. The same fields in a fresh request (new time, so new bytes and
      // signature) is a new withdrawal: the merchant's duplicate check is off.
      const sentAt = JSON.parse(body).time as number
      while (Math.floor(Date.now() / 1000) <= sentAt) await sleep(100)
      const fresh = await client.post('/withdraw/create', client.body(fields), {
        baseUrl: web2.url,
      })
      s.expect(isSuccess(fresh), `fresh request with the same fields: ${describe(fresh)}`)
      const afterFresh = await withdrawalsNamed(merchant.id, fields.merchant_order_id)
      s.expect(afterFresh === 2, `after a fresh request ${afterFresh} withdrawals, expected 2`)

      // 4. The first process killed, a new one started: the first request's
      // bytes are still answered what they were (the answer is in the
      // database, with the order).
      await web1.process.kill()
      const web3 = await startWeb('web-3')
      s.track(web3.process)
      const afterRestart = await client.post('/withdraw/create', body, { baseUrl: web3.url })
      replays++
      if (isSuccess(afterRestart) && afterRestart.text === first.text) replaysAnswered++
      else s.failures.push(`after a restart the bytes were answered ${describe(afterRestart)}`)
      const afterAll = await withdrawalsNamed(merchant.id, fields.merchant_order_id)
      s.expect(afterAll === 2, `after a restart ${afterAll} withdrawals, expected 2`)

      s.report.add('replays sent', replays)
      s.report.add('replays answered with the original answer', replaysAnswered)
      s.report.add(
        'withdrawals per replayed request',
        `${created} (sequential), ${raceCreated} (concurrent)`
      )
      s.report.add(
        'fresh request, same fields',
        fresh.status === 200 ? 'accepted' : describe(fresh)
      )
      await s.settle(merchant, 45_000)
    } catch (error) {
      s.failures.push(`harness: ${(error as Error).stack ?? error}`)
    } finally {
      await s.close(assert)
    }
  })
})
