import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { BATCH_CONNECTION } from '#config/database'
import { batchTransaction, COMMIT, refuseUnless, statement } from '#core/sql_batch'

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
})
