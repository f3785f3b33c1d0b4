import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { BATCH_CONNECTION } from '#config/database'
import {
  batchTransaction,
  COMMIT,
  refuseUnless,
  statement,
  type BatchTransaction,
} from '#core/sql_batch'

/**
 * Batch transactions (app/core/sql_batch.ts): START TRANSACTION leaves with
 * the first batch and COMMIT with the last, so these check what Lucid's
 * transaction used to guarantee: nothing is seen before the commit, a
 * failure anywhere undoes everything, and every connection returns to the pool.
 */

const TABLE = 'sql_batch_probe'

async function rows() {
  const [found] = await db.rawQuery(`SELECT id, amount FROM ${TABLE} ORDER BY id`)
  return found.map((row: { id: number; amount: number }) => [Number(row.id), Number(row.amount)])
}

function insert(id: number, amount: number | null) {
  return statement(`INSERT INTO ${TABLE} (id, amount) VALUES (?, ?)`, [id, amount])
}

function poolInUse() {
  const pool = (db.connection(BATCH_CONNECTION).getWriteClient().client as any).pool
  return pool.numUsed() + pool.numPendingAcquires()
}

test.group('sql batches: one transaction, begun and committed inside the batches', (group) => {
  group.setup(async () => {
    await db.rawQuery(
      `CREATE TABLE IF NOT EXISTS ${TABLE} (id INT PRIMARY KEY, amount INT NOT NULL) ENGINE=InnoDB`
    )
    return async () => {
      await db.rawQuery(`DROP TABLE IF EXISTS ${TABLE}`)
    }
  })
  group.each.setup(async () => {
    await db.rawQuery(`DELETE FROM ${TABLE}`)
  })

  test('nothing is visible to others before the COMMIT batch, everything after it', async ({
    assert,
  }) => {
    await batchTransaction(async (trx) => {
      await trx.run([insert(1, 100)])
      // Autocommit would have made the row visible here.
      assert.deepEqual(await rows(), [])
      await trx.run([insert(2, 200), COMMIT])
    })
    assert.deepEqual(await rows(), [
      [1, 100],
      [2, 200],
    ])
    assert.equal(poolInUse(), 0)
  })

  test('a callback that throws after a batch undoes the batch', async ({ assert }) => {
    await assert.rejects(() =>
      batchTransaction(async (trx) => {
        await trx.run([insert(1, 100)])
        throw new Error('refused after the first batch')
      })
    )
    assert.deepEqual(await rows(), [])
    assert.equal(poolInUse(), 0)
  })

  test('a refused statement stops the batch before its COMMIT and undoes the ones before it', async ({
    assert,
  }) => {
    await assert.rejects(() =>
      batchTransaction(async (trx) => {
        await trx.run([insert(1, 100)])
        await trx.run([
          insert(2, 200),
          statement(
            `UPDATE ${TABLE} SET amount = ${refuseUnless('amount > ?', 'amount - ?')} WHERE id = 2`,
            [500, 500]
          ),
          COMMIT,
        ])
      })
    )
    assert.deepEqual(await rows(), [])
    assert.equal(poolInUse(), 0)
  })

  test('a callback that returns without a COMMIT batch is committed', async ({ assert }) => {
    const result = await batchTransaction(async (trx) => {
      const [inserted] = await trx.run([insert(7, 700)])
      const [[read]] = await trx.rawQuery(`SELECT amount FROM ${TABLE} WHERE id = 7`)
      return { affected: inserted.affectedRows, amount: Number(read.amount) }
    })
    assert.deepEqual(result, { affected: 1, amount: 700 })
    assert.deepEqual(await rows(), [[7, 700]])
  })

  test('results skip the START TRANSACTION: one result per statement sent', async ({ assert }) => {
    await batchTransaction(async (trx) => {
      const first = await trx.run([statement('SELECT 1 AS one')])
      assert.deepEqual(first.length, 1)
      assert.equal(Number(first[0][0].one), 1)
      const second = await trx.run([statement('SELECT 2 AS two'), insert(3, 300), COMMIT])
      assert.equal(second.length, 3)
      assert.equal(Number(second[0][0].two), 2)
      assert.equal(second[1].affectedRows, 1)
      await assert.rejects(() => trx.run([insert(4, 400)]), /already committed/)
    })
    assert.deepEqual(await rows(), [[3, 300]])
  })

  test('many transactions in a row, failed ones included, leave no connection taken', async ({
    assert,
  }) => {
    for (let id = 1; id <= 50; id++) {
      await batchTransaction(async (trx) => {
        await trx.run([insert(id, id % 2 === 0 ? id : null), COMMIT])
      }).catch(() => {})
      assert.equal(poolInUse(), 0, `connection of transaction ${id} not returned`)
    }
    assert.lengthOf(await rows(), 25)
    assert.equal(poolInUse(), 0)
  })

  test('a statement is prepared once on its connection, then executed with each batch', async ({
    assert,
  }) => {
    // A text of its own: no earlier test prepared it on this connection.
    const tag = `probe ${Date.now()} ${Math.random()}`
    const insertTagged = (id: number, amount: number) =>
      statement(`INSERT INTO ${TABLE} (id, amount) VALUES (?, ?) /* ${tag} */`, [id, amount])
    await batchTransaction(async (trx) => {
      const before = await sessionCounts(trx)
      await trx.run([insertTagged(1, 100)])
      await trx.run([insertTagged(2, 200), insertTagged(3, 300)])
      const after = await sessionCounts(trx)
      assert.equal(after.Com_prepare_sql - before.Com_prepare_sql, 1)
      assert.equal(after.Com_execute_sql - before.Com_execute_sql, 3)
      await trx.run([COMMIT])
    })
    assert.deepEqual(await rows(), [
      [1, 100],
      [2, 200],
      [3, 300],
    ])
  })

  test('a statement that cannot be prepared as it is sent is sent as text, with the same answer', async ({
    assert,
  }) => {
    await batchTransaction(async (trx) => {
      const before = await sessionCounts(trx)
      const [status, extra, list, identifier] = await trx.run([
        // MariaDB prepares no SHOW … LIKE ?
        statement('SHOW SESSION STATUS LIKE ?', ['Com_execute_sql']),
        // mysql2 ignores a value beyond the placeholders; EXECUTE would refuse it.
        statement('SELECT ? AS a', [1, 2]),
        // A list is written as several values (mysql2).
        statement('SELECT ? IN (?) AS found', [2, [1, 2, 3]]),
        // An identifier placeholder (mysql2).
        statement('SELECT ?? AS b FROM (SELECT 5 AS amount) AS t', ['amount']),
      ])
      assert.equal(status[0].Variable_name, 'Com_execute_sql')
      assert.equal(Number(extra[0].a), 1)
      assert.equal(Number(list[0].found), 1)
      assert.equal(Number(identifier[0].b), 5)
      const after = await sessionCounts(trx)
      assert.equal(after.Com_execute_sql - before.Com_execute_sql, 0)
    })
  })
})

/** The session's counts of PREPARE and EXECUTE statements, on the transaction's connection. */
async function sessionCounts(trx: BatchTransaction) {
  const [found] = await trx.run([
    statement("SHOW SESSION STATUS WHERE Variable_name IN ('Com_prepare_sql', 'Com_execute_sql')"),
  ])
  const counts: Record<string, number> = {}
  for (const row of found as Array<{ Variable_name: string; Value: string }>) {
    counts[row.Variable_name] = Number(row.Value)
  }
  return counts as { Com_prepare_sql: number; Com_execute_sql: number }
}
