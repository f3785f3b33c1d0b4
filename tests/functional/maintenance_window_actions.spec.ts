import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { DateTime } from 'luxon'
import AuditLog from '#core/audit_log'
import type { Actor } from '#core/actor'
import MaintenanceWindow from '#payments/models/maintenance_window'
import { scheduleMaintenanceWindow } from '#payments/actions/schedule_maintenance_window'
import { cancelMaintenanceWindow } from '#payments/actions/cancel_maintenance_window'
import { eligibleAccounts } from '#payments/deposit_pool'
import { createDepositAccount, resetDatabase } from '#tests/helpers/merchants'
import { byField, refusal } from '#tests/helpers/actions'

const OPERATOR: Actor = { name: 'operator:ops@example.test', operatorId: 3, ip: '198.51.100.4' }

/** "YYYY-MM-DD HH:mm" in Bangkok time, as an operator types it. */
function bangkok(time: DateTime) {
  return time.setZone('Asia/Bangkok').toFormat('yyyy-LL-dd HH:mm')
}

async function counts() {
  const [windows, audits] = await Promise.all([
    db.from('deposit_maintenance_windows').count('* as total').first(),
    db.from('audit_logs').count('* as total').first(),
  ])
  return { windows: Number(windows.total), audits: Number(audits.total) }
}

async function selectable() {
  return (await eligibleAccounts('test-group', ['qr', 'transfer'], 10_000)).map(({ id }) => id)
}

test.group('maintenance window actions', (group) => {
  group.each.setup(() => resetDatabase())

  test('schedule for an account: Bangkok times, audited, out of selection until it ends', async ({
    assert,
  }) => {
    const account = await createDepositAccount()
    const to = DateTime.utc().plus({ hours: 2 }).startOf('minute')
    const window = await scheduleMaintenanceWindow(
      { deposit_account_id: String(account.id), to: bangkok(to), reason: 'KBANK app upgrade' },
      OPERATOR
    )
    assert.equal(window.depositAccountId, account.id)
    assert.isNull(window.bank)
    assert.equal(window.endsAt.toMillis(), to.toMillis(), 'read as GMT+7')
    assert.isBelow(Math.abs(window.startsAt.diffNow().as('seconds')), 5, 'from defaults to now')
    assert.deepEqual(await selectable(), [])

    const audit = await AuditLog.query()
      .where('action', 'maintenance_window.schedule')
      .firstOrFail()
    assert.equal(audit.actor, OPERATOR.name)
    assert.equal(audit.operatorId, 3)
    assert.equal(audit.ip, OPERATOR.ip)
    assert.equal(audit.subjectType, 'maintenance_window')
    assert.equal(audit.subjectId, String(window.id))
    assert.equal(audit.comment, 'KBANK app upgrade')
    assert.deepInclude(audit.afterValues!, {
      deposit_account_id: account.id,
      bank: null,
      to: to.setZone('Asia/Bangkok').toFormat('yyyy-LL-dd HH:mm:ss'),
      reason: 'KBANK app upgrade',
      cancelled_at: null,
    })
  })

  test('schedule for a bank with ISO times; a later window waits for its start', async ({
    assert,
  }) => {
    const kbank = await createDepositAccount({ bank: 'KBANK' })
    const scb = await createDepositAccount({ bank: 'SCB', channel: 'transfer' })
    const from = DateTime.utc().plus({ hours: 1 })
    const window = await scheduleMaintenanceWindow(
      {
        bank: 'scb',
        from: from.toISO(),
        to: from.plus({ hours: 1 }).setZone('UTC+7').toISO(),
        reason: 'SCB maintenance',
      },
      OPERATOR
    )
    assert.equal(window.bank, 'SCB')
    assert.equal(window.startsAt.toMillis(), from.toMillis())
    assert.sameMembers(await selectable(), [kbank.id, scb.id])
    await window.merge({ startsAt: DateTime.utc().minus({ minutes: 1 }) }).save()
    assert.deepEqual(await selectable(), [kbank.id])
  })

  test('schedule refusals name their field and write nothing', async ({ assert }) => {
    const account = await createDepositAccount()
    const soon = bangkok(DateTime.utc().plus({ hours: 1 }))
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [
        { to: soon, reason: 'r' },
        'deposit_account_id',
        'give deposit_account_id (one account) or bank',
      ],
      [
        { deposit_account_id: account.id, bank: 'KBANK', to: soon, reason: 'r' },
        'bank',
        'not both',
      ],
      [{ bank: 'KBANKX', to: soon, reason: 'r' }, 'bank', 'bank must be a bank code'],
      [
        { deposit_account_id: 'x', to: soon, reason: 'r' },
        'deposit_account_id',
        'deposit_account_id must be',
      ],
      [{ bank: 'KBANK', to: 'tomorrow', reason: 'r' }, 'to', 'to must be a Bangkok time'],
      [
        { bank: 'KBANK', from: '2026-13-40 25:00', to: soon, reason: 'r' },
        'from',
        'from must be a Bangkok time',
      ],
      [{ bank: 'KBANK', reason: 'r' }, 'to', 'to is required'],
      [{ bank: 'KBANK', to: soon }, 'reason', 'reason is required'],
      [
        { bank: 'KBANK', to: soon, reason: 'x'.repeat(256) },
        'reason',
        'reason must be at most 255',
      ],
      [
        {
          bank: 'KBANK',
          from: soon,
          to: bangkok(DateTime.utc().plus({ minutes: 30 })),
          reason: 'r',
        },
        'to',
        'to must be after from',
      ],
      [
        { bank: 'KBANK', from: '2020-01-01 00:00', to: '2020-01-01 02:00', reason: 'r' },
        'to',
        'to is in the past',
      ],
    ]
    for (const [input, field, message] of cases) {
      const error = await refusal(scheduleMaintenanceWindow(input, OPERATOR))
      assert.include(byField(error)[field], message, JSON.stringify(input))
    }
    const missing = await refusal(
      scheduleMaintenanceWindow({ deposit_account_id: 999999, to: soon, reason: 'r' }, OPERATOR)
    )
    assert.isTrue(missing.notFound)
    assert.equal(byField(missing).deposit_account_id, 'no deposit account with id 999999')
    assert.deepEqual(await counts(), { windows: 0, audits: 0 })
  })

  test('cancel brings the accounts back at once; audited; ended or cancelled windows refused', async ({
    assert,
  }) => {
    const account = await createDepositAccount()
    const window = await scheduleMaintenanceWindow(
      {
        deposit_account_id: account.id,
        to: bangkok(DateTime.utc().plus({ hours: 3 })),
        reason: 'r',
      },
      OPERATOR
    )
    assert.deepEqual(await selectable(), [])
    const cancelled = await cancelMaintenanceWindow(
      { id: String(window.id), comment: 'bank finished early' },
      OPERATOR
    )
    assert.isNotNull(cancelled.cancelledAt)
    assert.equal(cancelled.cancelledBy, OPERATOR.name)
    assert.deepEqual(await selectable(), [account.id])

    const audit = await AuditLog.query().where('action', 'maintenance_window.cancel').firstOrFail()
    assert.equal(audit.subjectId, String(window.id))
    assert.equal(audit.comment, 'bank finished early')
    assert.deepEqual(audit.beforeValues, { cancelled_at: null })
    assert.match(String(audit.afterValues!.cancelled_at), /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)

    const before = await counts()
    const again = await refusal(cancelMaintenanceWindow({ id: window.id }, OPERATOR))
    assert.equal(byField(again).id, `maintenance window ${window.id} is already cancelled`)
    const ended = await MaintenanceWindow.create({
      bank: 'SCB',
      startsAt: DateTime.utc().minus({ hours: 2 }),
      endsAt: DateTime.utc().minus({ hours: 1 }),
      reason: 'r',
      createdBy: 'test',
    })
    const tooLate = await refusal(cancelMaintenanceWindow({ id: ended.id }, OPERATOR))
    assert.include(byField(tooLate).id, 'already ended at')
    const unknown = await refusal(cancelMaintenanceWindow({ id: 424242 }, OPERATOR))
    assert.isTrue(unknown.notFound)
    const badId = await refusal(cancelMaintenanceWindow({ id: 'one' }, OPERATOR))
    assert.include(byField(badId).id, 'id must be a maintenance window id')
    assert.deepEqual(await counts(), { ...before, windows: before.windows + 1 })
  })
})
