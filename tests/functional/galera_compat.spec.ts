import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import mysql from 'mysql2/promise'
import { withDeadlockRetry, onDeadlockRetry, type DeadlockRetryEvent } from '#core/db_retry'
import { postLedgerTransaction } from '#ledger/ledger'
import { paymentSettledPosting } from '#ledger/recipes'
import { DuplicatePostingError } from '#ledger/errors'
import { createDepositAccount, createTestMerchant, creditMerchant } from '#tests/helpers/merchants'
import { importStatement } from '#reconciliation/actions/import_statement'
import { GALERA_DATABASE, startTestGalera, type TestGalera } from '#tests/helpers/galera'

/**
 * Two transactions that meet at COMMIT: each waits (once, on its first run)
 * until the other has written too, so that both hold their row locks on
 * their own node and the cluster, not a local lock wait, decides between them.
 */
function meetingPoint(parties: number) {
  let arrived = 0
  let open!: () => void
  const opened = new Promise<void>((resolve) => (open = resolve))
  return async () => {
    if (++arrived >= parties) open()
    // Never wait forever: a side that cannot write (blocked) must not hang the test.
    await Promise.race([opened, new Promise((resolve) => setTimeout(resolve, 5_000))])
  }
}

function retriesSeen() {
  const events: DeadlockRetryEvent[] = []
  const stop = onDeadlockRetry((event) => events.push(event))
  return { events, stop }
}

async function balanceOn(connection: string, merchantId: number) {
  const row = await db
    .connection(connection)
    .from('merchant_balances')
    .where('merchant_id', merchantId)
    .first()
  return { available: Number(row.balance), unsettled: Number(row.unsettle_balance) }
}

test.group('galera compatibility (three-node cluster)', (group) => {
  let galera: TestGalera
  group.setup(async () => {
    galera = await startTestGalera()
    return () => galera.stop()
  })
  group.each.timeout(60_000)

  test('the migrations run on the cluster and every table has a primary key', async ({
    assert,
  }) => {
    const n3 = galera.nodes[2]
    // Read on a node that only received the schema through replication.
    const tables = await n3.query<{ TABLE_NAME: string; ENGINE: string }>(
      `SELECT TABLE_NAME, ENGINE FROM information_schema.TABLES
        WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE'`,
      [GALERA_DATABASE]
    )
    assert.isAbove(tables.length, 20)
    assert.deepEqual(
      tables.filter((table) => table.ENGINE !== 'InnoDB').map((table) => table.TABLE_NAME),
      []
    )
    const withoutKey = await n3.query<{ TABLE_NAME: string }>(
      `SELECT t.TABLE_NAME FROM information_schema.TABLES t
         LEFT JOIN information_schema.TABLE_CONSTRAINTS c
           ON c.TABLE_SCHEMA = t.TABLE_SCHEMA AND c.TABLE_NAME = t.TABLE_NAME
          AND c.CONSTRAINT_TYPE = 'PRIMARY KEY'
        WHERE t.TABLE_SCHEMA = ? AND t.TABLE_TYPE = 'BASE TABLE' AND c.CONSTRAINT_NAME IS NULL`,
      [GALERA_DATABASE]
    )
    assert.deepEqual(
      withoutKey.map((row) => row.TABLE_NAME),
      []
    )
  })

  test('two credits of one account on two nodes both commit once; the loser retried after 1213', async ({
    assert,
  }) => {
    const [n1, n2, n3] = galera.nodes
    const { merchant } = await createTestMerchant()
    const retries = retriesSeen()
    const meet = meetingPoint(2)
    // wsrep_sync_wait: node B must first have applied the merchant created on node A.
    const credit = (node: typeof n1, amount: number, reference: string) =>
      withDeadlockRetry(() =>
        db.connection(galera.connectionTo(node, { syncWait: 1 })).transaction(async (trx) => {
          await postLedgerTransaction(trx, {
            kind: 'test_adjustment',
            reference: { type: 'test', id: reference },
            legs: [
              { gateway: 'adjustments', amount: -amount },
              { merchantId: merchant.id, account: 'available', amount },
            ],
          })
          await meet()
        })
      )
    try {
      await Promise.all([credit(n1, 1_000, 'a'), credit(n2, 2_500, 'b')])
    } finally {
      retries.stop()
    }
    assert.isAtLeast(retries.events.length, 1)
    assert.isTrue(retries.events.every((event) => event.errno === 1213))

    const reader = galera.connectionTo(n3, { syncWait: 1 })
    assert.deepEqual(await balanceOn(reader, merchant.id), { available: 3_500, unsettled: 0 })
    const postings = await db
      .connection(reader)
      .from('ledger_transactions')
      .where('reference_type', 'test')
      .whereIn('reference_id', ['a', 'b'])
      .count('* as total')
    assert.equal(Number(postings[0].total), 2)
  })

  test('DB_SYNC_WAIT=1: a read on node B right after a commit on node A sees it', async ({
    assert,
  }) => {
    const [n1, n2] = galera.nodes
    const { merchant } = await createTestMerchant()
    // Node B applies nothing while a session holds the global read lock: any
    // read there is behind node A until it is released.
    const blocker = await mysql.createConnection({ host: '127.0.0.1', port: n2.port, user: 'root' })
    const plain = galera.connectionTo(n2)
    const synced = galera.connectionTo(n2, { syncWait: 1 })
    // Both pools hold a session already, so that the reads below only read.
    await Promise.all([
      db.connection(plain).rawQuery('SELECT 1'),
      db.connection(synced).rawQuery('SELECT 1'),
    ])
    let seenWithSyncWait: Promise<{ available: number; unsettled: number }>
    try {
      await blocker.query('FLUSH TABLES WITH READ LOCK')
      await db.connection(galera.connectionTo(n1)).transaction((trx) =>
        postLedgerTransaction(trx, {
          kind: 'test_adjustment',
          legs: [
            { gateway: 'adjustments', amount: -700 },
            { merchantId: merchant.id, account: 'available', amount: 700 },
          ],
        })
      )
      // Without wsrep_sync_wait node B answers at once, from before the commit.
      assert.equal((await balanceOn(plain, merchant.id)).available, 0)
      seenWithSyncWait = balanceOn(synced, merchant.id)
      await new Promise((resolve) => setTimeout(resolve, 300))
    } finally {
      await blocker.query('UNLOCK TABLES').catch(() => {})
      await blocker.end()
    }
    // With it, the read waited for node B to apply the commit.
    assert.equal((await seenWithSyncWait).available, 700)
  })

  test('the settlement posting of one order, run on two nodes at once, is made exactly once', async ({
    assert,
  }) => {
    const [n1, n2, n3] = galera.nodes
    const { merchant } = await createTestMerchant()
    await creditMerchant(merchant, 'unsettled', 9_000)
    const posting = paymentSettledPosting({
      merchantId: merchant.id,
      platformOrderId: 'PGALERA0001',
      net: 9_000,
    })!
    const retries = retriesSeen()
    const meet = meetingPoint(2)
    // What a settlement does in its transaction: post, keyed by the order, so
    // that whoever comes second finds the posting made.
    const settle = (node: typeof n1) =>
      withDeadlockRetry(() =>
        db.connection(galera.connectionTo(node, { syncWait: 1 })).transaction(async (trx) => {
          try {
            await postLedgerTransaction(trx, posting)
          } catch (error) {
            if (error instanceof DuplicatePostingError) return 'already settled'
            throw error
          }
          await meet()
          return 'settled'
        })
      )
    let outcomes: string[]
    try {
      outcomes = await Promise.all([settle(n1), settle(n2)])
    } finally {
      retries.stop()
    }
    assert.sameMembers(outcomes, ['settled', 'already settled'])
    assert.isAtLeast(retries.events.length, 1)
    assert.isTrue(retries.events.every((event) => event.errno === 1213))

    const reader = galera.connectionTo(n3, { syncWait: 1 })
    assert.deepEqual(await balanceOn(reader, merchant.id), { available: 9_000, unsettled: 0 })
    const made = await db
      .connection(reader)
      .from('ledger_transactions')
      .where({ kind: 'payment_settled', reference_id: 'PGALERA0001' })
      .count('* as total')
    assert.equal(Number(made[0].total), 1)
  })

  test('figures: a statement import is one write set per file; wsrep_sync_wait costs a read', async ({
    assert,
  }) => {
    const [n1, n2] = galera.nodes
    const status = async () => {
      const rows = await n1.query<{ Variable_name: string; Value: string }>(
        "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_replicated', 'wsrep_replicated_bytes')"
      )
      return Object.fromEntries(rows.map((row) => [row.Variable_name, Number(row.Value)]))
    }
    const account = await createDepositAccount()
    const LINES = 2_000
    const stamp = '2026-01-05 10:00'
    const content = [
      'date_time,direction,amount,reference,description',
      ...Array.from({ length: LINES }, (_, k) => `${stamp},credit,"${7_000 + k}.00",,N${k}`),
    ].join('\n')
    const before = await status()
    const started = performance.now()
    await importStatement(
      { deposit_account_id: account.id, file_name: 'galera.csv', content },
      { name: 'test' }
    )
    const importMs = performance.now() - started
    const after = await status()
    const stored = await db
      .from('statement_lines')
      .where('deposit_account_id', account.id)
      .count('* as total')
    assert.equal(Number(stored[0].total), LINES)

    const reads = async (connection: string) => {
      await db.connection(connection).rawQuery('SELECT 1')
      const start = performance.now()
      for (let i = 0; i < 200; i++) {
        await db.connection(connection).rawQuery('SELECT id FROM merchants WHERE id = 1')
      }
      return (performance.now() - start) / 200
    }
    const plainMs = await reads(galera.connectionTo(n2))
    const syncedMs = await reads(galera.connectionTo(n2, { syncWait: 1 }))
    console.log(
      JSON.stringify({
        statementLines: LINES,
        fileBytes: content.length,
        writeSets: after.wsrep_replicated - before.wsrep_replicated,
        replicatedBytes: after.wsrep_replicated_bytes - before.wsrep_replicated_bytes,
        importMs: Math.round(importMs),
        pointReadMs: { plain: plainMs.toFixed(3), syncWait1: syncedMs.toFixed(3) },
      })
    )
  })
})
