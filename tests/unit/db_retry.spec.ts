import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { onDeadlockRetry, withDeadlockRetry, type DeadlockRetryEvent } from '#core/db_retry'

function serverError(errno: number, code = 'ER_SOMETHING') {
  return Object.assign(new Error(`errno ${errno}`), { errno, code })
}

/** An operation failing with `errors` in turn, then returning 'done'; counts its runs. */
function failing(...errors: Error[]) {
  let runs = 0
  const operation = async () => {
    runs++
    const error = errors.shift()
    if (error) throw error
    return 'done'
  }
  return { operation, runs: () => runs }
}

test.group('withDeadlockRetry', (group) => {
  let events: DeadlockRetryEvent[]
  group.each.setup(() => {
    events = []
    return onDeadlockRetry((event) => events.push(event))
  })

  test('re-runs a deadlock victim, a lock wait timeout and a non-primary Galera node', async ({
    assert,
  }) => {
    const { operation, runs } = failing(serverError(1213), serverError(1205), serverError(1047))
    assert.equal(await withDeadlockRetry(operation), 'done')
    assert.equal(runs(), 4)
    assert.deepEqual(events, [
      { errno: 1213, attempt: 1 },
      { errno: 1205, attempt: 2 },
      { errno: 1047, attempt: 3 },
    ])
  })

  test('passes any other error through at once', async ({ assert }) => {
    const { operation, runs } = failing(serverError(1062, 'ER_DUP_ENTRY'))
    await assert.rejects(() => withDeadlockRetry(operation), 'errno 1062')
    assert.equal(runs(), 1)
    assert.deepEqual(events, [])
  })

  test('stops after the given number of attempts and throws the last error', async ({ assert }) => {
    const { operation, runs } = failing(...Array.from({ length: 9 }, () => serverError(1213)))
    await assert.rejects(() => withDeadlockRetry(operation, { attempts: 3 }), 'errno 1213')
    assert.equal(runs(), 3)
    assert.deepEqual(
      events.map((event) => event.attempt),
      [1, 2]
    )
  })

  test('a lost connection is re-run only for a body declared idempotent', async ({ assert }) => {
    const lost = () =>
      Object.assign(new Error('Connection lost'), { code: 'PROTOCOL_CONNECTION_LOST' })
    const once = failing(lost())
    await assert.rejects(() => withDeadlockRetry(once.operation), 'Connection lost')
    assert.equal(once.runs(), 1)

    const idempotent = failing(lost())
    assert.equal(await withDeadlockRetry(idempotent.operation, { idempotent: true }), 'done')
    assert.deepEqual(events, [{ errno: 2013, attempt: 1 }])
  })

  test('a pooled connection found already closed is a lost connection: re-run for an idempotent body, surfaced for others', async ({
    assert,
  }) => {
    // mysql2's error for a command on a connection that broke while idle.
    const closed = () =>
      Object.assign(new Error("Can't add new command when connection is in closed state"), {
        fatal: true,
      })
    const lost = () =>
      Object.assign(new Error('Connection lost'), { code: 'PROTOCOL_CONNECTION_LOST' })
    // The writer died mid-COMMIT; the re-runs first get connections it closed.
    const rerun = failing(lost(), closed(), closed())
    assert.equal(await withDeadlockRetry(rerun.operation, { idempotent: true }), 'done')
    assert.equal(rerun.runs(), 4)
    assert.deepEqual(events, [
      { errno: 2013, attempt: 1 },
      { errno: 2013, attempt: 2 },
      { errno: 2013, attempt: 3 },
    ])

    const once = failing(closed())
    await assert.rejects(() => withDeadlockRetry(once.operation), /closed state/)
    assert.equal(once.runs(), 1)
  })

  test('after a lost connection an idempotent body keeps trying while the writer moves, past the attempt count, until the budget is spent', async ({
    assert,
  }) => {
    const lost = () =>
      Object.assign(new Error('Connection lost'), { code: 'PROTOCOL_CONNECTION_LOST' })
    const refused = () => Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })
    // The writer died mid-COMMIT, then eight connects are refused: more than
    // the 5 attempts, well within the budget.
    const moving = failing(lost(), ...Array.from({ length: 8 }, refused))
    assert.equal(await withDeadlockRetry(moving.operation, { idempotent: true }), 'done')
    assert.equal(moving.runs(), 10)

    // A refused connect with no lost connection before it is not retried.
    const down = failing(refused())
    await assert.rejects(
      () => withDeadlockRetry(down.operation, { idempotent: true }),
      'connect ECONNREFUSED'
    )
    assert.equal(down.runs(), 1)

    // The budget ends it: the caller answers 503 after about six seconds.
    const gone = failing(lost(), ...Array.from({ length: 200 }, refused))
    const started = Date.now()
    await assert.rejects(
      () => withDeadlockRetry(gone.operation, { idempotent: true }),
      'connect ECONNREFUSED'
    )
    const elapsed = Date.now() - started
    assert.isAtLeast(elapsed, 5900)
    assert.isBelow(elapsed, 8000)
  }).timeout(15000)

  test('a listener that throws does not fail the retry; removed listeners are not called', async ({
    assert,
  }) => {
    const stop = onDeadlockRetry(() => {
      throw new Error('metrics down')
    })
    let removedCalls = 0
    onDeadlockRetry(() => removedCalls++)()
    try {
      assert.equal(await withDeadlockRetry(failing(serverError(1213)).operation), 'done')
    } finally {
      stop()
    }
    assert.equal(removedCalls, 0)
    assert.lengthOf(events, 1)
  })

  test('a COMMIT the server refuses throws instead of returning as committed', async ({
    assert,
  }) => {
    // Galera refuses a conflicting transaction at COMMIT; on one server, a
    // session killed before its COMMIT fails the same statement.
    const outcome = db.transaction(async (trx) => {
      const [[session]] = await trx.rawQuery('SELECT CONNECTION_ID() AS id')
      await db.rawQuery(`KILL CONNECTION ${Number(session.id)}`)
      return 'committed'
    })
    await assert.rejects(() => outcome)
  })
})
