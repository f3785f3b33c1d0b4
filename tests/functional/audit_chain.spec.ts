import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { recordAudit } from '#core/audit'
import type { Actor } from '#core/actor'
import {
  AuditChainError,
  sealAuditLog,
  startAuditChain,
  verifyAuditChain,
  type ChainProblem,
} from '#core/audit_chain'
import { HANDLERS } from '#jobs/handlers'
import { JOBS, SCHEDULES } from '#jobs/jobs'
import verifyAuditChainJob from '#jobs/verify_audit_chain_job'
import { registry } from '#metrics/registry'
import { forgetCachedSources, refreshSources } from '#metrics/sources'
import { ace } from '#tests/helpers/ace'
import { signedInOverHttp } from '#tests/helpers/admin_session'
import { createTestMerchant, resetDatabase } from '#tests/helpers/merchants'

const OPERATOR: Actor = {
  name: 'operator:alice@example.com',
  operatorId: 7,
  ip: '203.0.113.9',
  requestId: 'req-audit-chain',
}

/** One audit row as an operator's action writes it: JSON values with nested objects, Thai text. */
async function audit(action: string, id: string, after: Record<string, unknown> = {}) {
  const entry = await db.transaction((trx) =>
    recordAudit(trx, OPERATOR, {
      action,
      target: { type: 'merchant', id },
      before: { name: 'ร้านค้า', limits: { hour: 10, day: 100 }, fee: '1.50' },
      after: { limits: { day: 200, hour: 10 }, name: 'ร้านค้า ใหม่', fee: '1.50', ...after },
      reason: { code: 'merchant_request', comment: 'asked by phone' },
      details: { z: [3, 1, 2], a: { nested: true } },
    })
  )
  return Number(entry.id)
}

/**
 * What someone with the gateway's database rights does: drops the trigger
 * that refuses the change, makes it, and creates the trigger again.
 */
async function tamper(
  table: 'audit_logs' | 'audit_seals',
  event: 'update' | 'delete',
  sql: string
) {
  const trigger = `${table}_no_${event}`
  await db.rawQuery(`DROP TRIGGER ${trigger}`)
  try {
    await db.rawQuery(sql)
  } finally {
    await db.rawQuery(
      `CREATE TRIGGER ${trigger} BEFORE ${event.toUpperCase()} ON ${table}
       FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = '${table} is append-only'`
    )
  }
}

function named(problems: ChainProblem[], kind: ChainProblem['kind']) {
  return problems.filter((problem) => problem.kind === kind).map((problem) => problem.auditLogId)
}

async function sealCount() {
  const [[row]] = await db.rawQuery('SELECT COUNT(*) AS total FROM audit_seals')
  return Number(row.total)
}

test.group('Audit chain: sealing and verification', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    // The reset empties audit_chain_head too: start the chain as the migration does.
    await startAuditChain()
  })

  test('rows of real actions and of recordAudit are sealed in one chain; verify is green', async ({
    assert,
  }) => {
    await createTestMerchant()
    await audit('merchant.configure', 'M1')
    await audit('merchant.configure', 'M2', { note: 'ไม่มี', amount: 12.5 })

    const { sealed, lastSeq, chain } = await sealAuditLog()
    const rows = await db.from('audit_logs').orderBy('id').select('id', 'action', 'actor')
    assert.isTrue(chain)
    assert.equal(sealed, rows.length)
    assert.equal(lastSeq, rows.length)
    // The chain starts with the row that says so, written by the system.
    assert.deepInclude(rows[0], { action: 'audit.chain_start', actor: 'system' })
    const seals = await db.from('audit_seals').orderBy('seq').select('seq', 'audit_log_id')
    assert.deepEqual(
      seals.map((seal) => [Number(seal.seq), Number(seal.audit_log_id)]),
      rows.map((row, index) => [index + 1, Number(row.id)])
    )
    // Nothing more to seal: a second run adds nothing.
    assert.equal((await sealAuditLog()).sealed, 0)

    const result = await verifyAuditChain()
    assert.isTrue(result.ok, JSON.stringify(result.problems))
    assert.equal(result.sealed, rows.length)
    assert.equal(result.start?.auditLogId, Number(rows[0].id))

    const verify = await ace('audit:verify')
    assert.equal(verify.code, 0, verify.output)
    assert.include(verify.output, `${rows.length} row(s) sealed from audit row #${rows[0].id}`)
  })

  test('a row rewritten in the database is named by verify, audit:verify, the job, /metrics and the audit page', async ({
    assert,
  }) => {
    const first = await audit('merchant.configure', 'M1')
    const second = await audit('platform.configure', 'P1')
    const third = await audit('merchant.configure', 'M3')
    await sealAuditLog()
    assert.isTrue((await verifyAuditChain()).ok)

    await tamper(
      'audit_logs',
      'update',
      `UPDATE audit_logs SET after_values = JSON_SET(after_values, '$.fee', '0.00') WHERE id = ${second}`
    )
    await tamper(
      'audit_logs',
      'update',
      `UPDATE audit_logs SET actor = 'system' WHERE id = ${third}`
    )
    // The triggers are back: the application still cannot change a row.
    await assert.rejects(() => db.rawQuery(`UPDATE audit_logs SET actor = 'x' WHERE id = ${first}`))

    const result = await verifyAuditChain()
    assert.isFalse(result.ok)
    const changed = result.problems.filter((problem) => problem.kind === 'changed')
    assert.deepEqual(
      changed.map((problem) => [problem.auditLogId, problem.fields]),
      [
        [second, ['after_values']],
        [third, ['actor']],
      ]
    )
    assert.equal(changed[0].action, 'platform.configure')
    assert.equal(changed[0].target, 'merchant:P1')
    // Each seal is checked on its own: the links are intact, only the rows changed.
    assert.lengthOf(named(result.problems, 'broken_link'), 0)

    const verify = await ace('audit:verify')
    assert.equal(verify.code, 1)
    assert.include(verify.output, `audit row #${second} (platform.configure on merchant:P1)`)
    assert.include(verify.output, 'after_values changed')
    assert.include(verify.output, `audit row #${third}`)

    // The daily job records the same result; monitoring reads it.
    assert.deepInclude(await verifyAuditChainJob(), { ok: false, problems: 2 })
    forgetCachedSources()
    await refreshSources(10_000)
    const metric = await registry.getSingleMetric('gateway_audit_chain_ok')!.get()
    assert.equal(metric.values[0].value, 0)
    const problems = await registry.getSingleMetric('gateway_audit_chain_problems')!.get()
    assert.equal(problems.values[0].value, 2)

    // The audit page shows the result on top and flags the row.
    const { session } = await signedInOverHttp('auditor@example.com', 'viewer')
    const page = await session.get(`/admin/audit?target=merchant:P1`)
    assert.equal(page.status, 200)
    assert.include(page.text, 'Audit chain broken.')
    const flaggedRow = new RegExp(
      `<tr data-audit-id="${second}" class="seal-flagged">[\\s\\S]*?does not match its seal[\\s\\S]*?</tr>`
    )
    assert.match(page.text, flaggedRow)
    assert.include(page.text, 'after_values changed')
    // The operator rows written since the last seal are waiting for the sealer.
    const recent = await session.get('/admin/audit?action=operator.')
    assert.include(recent.text, 'not yet sealed')
  })

  test('a deleted row, a removed seal and a forged head are named; the sealer refuses to extend such a chain', async ({
    assert,
  }) => {
    const ids = []
    for (let index = 0; index < 5; index++) ids.push(await audit('merchant.configure', `M${index}`))
    await sealAuditLog()

    await tamper('audit_logs', 'delete', `DELETE FROM audit_logs WHERE id = ${ids[1]}`)
    let result = await verifyAuditChain()
    assert.deepEqual(named(result.problems, 'deleted'), [ids[1]])
    const verify = await ace('audit:verify')
    assert.equal(verify.code, 1)
    assert.include(verify.output, `audit row #${ids[1]}, sealed by seal`)
    assert.include(verify.output, 'is gone (deleted)')

    // A seal taken out of the middle breaks the link; one taken off the end disagrees with the head.
    const [[middle]] = await db.rawQuery(
      `SELECT seq FROM audit_seals WHERE audit_log_id = ${ids[2]}`
    )
    await tamper('audit_seals', 'delete', `DELETE FROM audit_seals WHERE seq = ${middle.seq}`)
    await tamper('audit_seals', 'delete', 'DELETE FROM audit_seals ORDER BY seq DESC LIMIT 1')
    result = await verifyAuditChain()
    assert.lengthOf(named(result.problems, 'broken_link'), 1)
    assert.isTrue(
      result.problems.some((p) => p.kind === 'head' && p.detail.includes('seals were removed'))
    )
    // Rows whose seal was removed and that are older than 10 minutes show as unsealed.
    const later = await verifyAuditChain(new Date(Date.now() + 11 * 60_000))
    assert.includeMembers(named(later.problems, 'unsealed'), [ids[2], ids[4]])

    // The sealer would seal those rows again as they are now: it refuses.
    await assert.rejects(() => sealAuditLog(), AuditChainError)

    // Nor can the head be moved back by hand without the key.
    await db.rawQuery('UPDATE audit_chain_head SET last_seq = last_seq - 1')
    result = await verifyAuditChain()
    assert.isTrue(result.problems.some((p) => p.kind === 'head' && p.detail.includes('MAC')))
  })

  test('a row inserted behind the sealer is reported once it is 10 minutes old; a fresh one is not', async ({
    assert,
  }) => {
    await audit('merchant.configure', 'M1')
    // An id the application used and rolled back: a hole below the rows sealed next.
    let hole = 0
    await db
      .transaction(async (trx) => {
        hole = Number((await recordAudit(trx, OPERATOR, { action: 'rolled.back' })).id)
        throw new Error('roll back')
      })
      .catch(() => {})
    await audit('merchant.configure', 'M2')
    await sealAuditLog()
    assert.isTrue((await verifyAuditChain()).ok)

    // Inserted by hand (INSERT is not refused): one in the hole two days back, one at the end
    // an hour back; and a fresh row of the application the sealer has not reached yet.
    const insert = (id: number | null, minutesAgo: number) =>
      db.rawQuery(
        `INSERT INTO audit_logs (${id === null ? '' : 'id, '}actor, action, subject_type, subject_id, created_at)
         VALUES (${id === null ? '' : '?, '}'operator:mallory@example.com', 'merchant.configure', 'merchant', 'M9',
                 DATE_SUB(UTC_TIMESTAMP(3), INTERVAL ? MINUTE))`,
        id === null ? [minutesAgo] : [id, minutesAgo]
      )
    await insert(hole, 2 * 24 * 60)
    await insert(null, 60)
    const [[{ id: backdated }]] = await db.rawQuery('SELECT MAX(id) AS id FROM audit_logs')
    const fresh = await audit('merchant.configure', 'M3')

    let result = await verifyAuditChain()
    assert.isFalse(result.ok)
    assert.deepEqual(named(result.problems, 'unsealed'), [hole, Number(backdated)])
    assert.equal(result.unsealed, 2)
    assert.notInclude(named(result.problems, 'unsealed'), fresh)
    const verify = await ace('audit:verify')
    assert.equal(verify.code, 1)
    assert.include(verify.output, `audit row #${hole} (merchant.configure on merchant:M9)`)
    assert.include(verify.output, 'has no seal')

    // The sealer takes the rows past its last seal, the backdated one included, and says
    // that it sealed it late; a hole older than a day it leaves for verify to keep reporting.
    await sealAuditLog()
    result = await verifyAuditChain()
    assert.deepEqual(named(result.problems, 'unsealed'), [hole])
    assert.deepEqual(result.sealedLate.ids, [Number(backdated)])
  })

  test('two sealers at once neither fork the chain nor seal a row twice', async ({ assert }) => {
    const written = await Promise.all(
      Array.from({ length: 40 }, (_, index) => audit('merchant.configure', `M${index}`))
    )
    const runs = await Promise.all([sealAuditLog(), sealAuditLog(), sealAuditLog()])
    assert.equal(
      runs.reduce((total, run) => total + run.sealed, 0),
      written.length + 1 // and the chain_start row
    )
    const seals = await db.from('audit_seals').orderBy('seq').select('seq', 'audit_log_id')
    assert.deepEqual(
      seals.map((seal) => Number(seal.seq)),
      seals.map((_, index) => index + 1)
    )
    assert.equal(new Set(seals.map((seal) => Number(seal.audit_log_id))).size, seals.length)
    assert.isTrue((await verifyAuditChain()).ok)

    // The unique key makes a second seal of a row impossible, whoever writes it.
    await assert.rejects(
      () =>
        db.table('audit_seals').insert({
          audit_log_id: written[0],
          prev_hash: '0'.repeat(64),
          hash: '0'.repeat(64),
          field_digests: '{}',
          sealed_at: new Date(),
        }),
      /Duplicate entry/
    )
  })

  test('seals are append-only; the reset between tests still empties the tables', async ({
    assert,
  }) => {
    await audit('merchant.configure', 'M1')
    await sealAuditLog()
    await assert.rejects(
      () => db.rawQuery("UPDATE audit_seals SET hash = REPEAT('0', 64)"),
      /append-only/
    )
    await assert.rejects(() => db.rawQuery('DELETE FROM audit_seals'), /append-only/)
    await assert.rejects(() => db.rawQuery('DELETE FROM audit_logs'), /append-only/)

    // TRUNCATE is not a row event: the triggers do not stop the tests' reset.
    await resetDatabase()
    assert.equal(await sealCount(), 0)
    const [[logs]] = await db.rawQuery('SELECT COUNT(*) AS total FROM audit_logs')
    assert.equal(Number(logs.total), 0)
    // Without a chain the sealer does nothing (and never starts one by itself).
    await audit('merchant.configure', 'M2')
    assert.deepEqual(await sealAuditLog(), { sealed: 0, lastSeq: 0, chain: false })
    const result = await verifyAuditChain()
    assert.isFalse(result.ok)
    assert.include(result.problems[0].detail, 'no head row')
  })

  test('the worker seals every 10 s and verifies daily', async ({ assert }) => {
    assert.deepInclude(SCHEDULES, { id: 'seal-audit-log', job: 'sealAuditLog', everyMs: 10_000 })
    assert.deepInclude(SCHEDULES, {
      id: 'verify-audit-chain',
      job: 'verifyAuditChain',
      everyMs: 24 * 3_600_000,
    })
    const seal = await HANDLERS[JOBS.sealAuditLog.name]()
    await audit('merchant.configure', 'M1')
    assert.deepInclude(await seal({} as never), { sealed: 2, chain: true })
    assert.deepInclude(await verifyAuditChainJob(), { ok: true, problems: 0, sealed: 2 })
    forgetCachedSources()
    await refreshSources(10_000)
    const ok = await registry.getSingleMetric('gateway_audit_chain_ok')!.get()
    assert.equal(ok.values[0].value, 1)
    const unsealed = await registry.getSingleMetric('gateway_audit_chain_unsealed_rows')!.get()
    assert.equal(unsealed.values[0].value, 0)
  })
})
