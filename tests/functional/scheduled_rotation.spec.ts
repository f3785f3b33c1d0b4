import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { DateTime } from 'luxon'
import AuditLog from '#core/audit_log'
import MerchantCredential from '#merchants/models/merchant_credential'
import ScheduledCredentialRotation from '#merchants/models/scheduled_credential_rotation'
import { scheduleCredentialRotation } from '#merchants/actions/schedule_credential_rotation'
import { cancelScheduledRotation } from '#merchants/actions/cancel_scheduled_rotation'
import {
  performDueRotations,
  performScheduledRotation,
} from '#merchants/actions/perform_scheduled_rotation'
import { viewCredentialHandover } from '#merchants/actions/view_credential_handover'
import { revokeExpiredCredentials } from '#merchants/actions/revoke_expired_credentials'
import { dispatch, queue } from '#core/queue/queue_manager'
import type { Actor } from '#core/actor'
import { ace, lastJsonLine } from '#tests/helpers/ace'
import { byField, refusal } from '#tests/helpers/actions'
import { startTestWorker, until } from '#tests/helpers/worker'
import {
  TEST_ACTOR,
  authBody,
  createTestMerchant,
  resetDatabase,
  signedPost,
  type TestMerchant,
} from '#tests/helpers/merchants'

/** A rotation scheduled at once (not from the back-office). */
async function scheduleNow(input: Record<string, unknown>, actor: Actor) {
  const scheduled = await scheduleCredentialRotation(input, actor)
  if (scheduled.outcome !== 'scheduled') throw new Error('expected the rotation to be scheduled')
  return scheduled
}

/** An operator at the server's shell: scheduling applies at once (break-glass). */
const SHELL: Actor = {
  name: 'cli:sec',
  ip: '203.0.113.50',
  requestId: 'req-schedule',
}

/** The handover row a scheduled rotation made. */
function handoverOf(rotationId: number) {
  return db.from('credential_handovers').where('rotation_id', rotationId).first()
}

const inSeconds = (seconds: number) => DateTime.now().plus({ seconds }).toISO()!

async function audits(action: string) {
  return AuditLog.query().where('action', action).orderBy('id')
}

async function credentialCount(who: TestMerchant) {
  return Number(
    (await db.from('merchant_credentials').where('merchant_id', who.merchant.id).count('* as n'))[0]
      .n
  )
}

const balance = (who: TestMerchant, secret?: string, token?: string) => {
  const caller = { ...who, token: token ?? who.token }
  return signedPost('/balance', caller, authBody(caller), { secret: secret ?? who.secret })
}

test.group('scheduled credential rotation: actions', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.timeout(60_000)

  test('schedule: field errors for run_at, what to rotate and grace; nothing written', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    const past = await refusal(
      scheduleCredentialRotation(
        { merchant_id: who.merchantId, run_at: inSeconds(-60), secret: true },
        TEST_ACTOR
      )
    )
    assert.deepEqual(byField(past), { run_at: 'run_at must be in the future' })
    const garbage = await refusal(
      scheduleCredentialRotation(
        {
          merchant_id: who.merchantId,
          run_at: 'tomorrow',
          token: 'perhaps',
          grace_seconds: 2_592_001,
        },
        TEST_ACTOR
      )
    )
    assert.deepEqual(byField(garbage), {
      run_at:
        'run_at must be an ISO 8601 time such as 2030-01-31T02:00:00+07:00 (without an offset: Bangkok time)',
      token: 'token must be on or off',
      grace_seconds: 'grace_seconds must be a whole number from 0 to 2592000',
    })
    assert.deepEqual(
      byField(
        await refusal(scheduleCredentialRotation({ merchant_id: who.merchantId }, TEST_ACTOR))
      ),
      { run_at: 'run_at is required' }
    )
    assert.deepEqual(
      byField(
        await refusal(
          scheduleCredentialRotation(
            { merchant_id: who.merchantId, run_at: inSeconds(3600) },
            TEST_ACTOR
          )
        )
      ),
      { token: 'choose what to rotate: token, secret or both' }
    )
    const unknown = await refusal(
      scheduleCredentialRotation(
        { merchant_id: 'NOSUCH1', run_at: inSeconds(3600), secret: true },
        TEST_ACTOR
      )
    )
    assert.isTrue(unknown.notFound)
    assert.lengthOf(await ScheduledCredentialRotation.all(), 0)
    assert.lengthOf(await audits('merchant.credentials.schedule_rotation'), 0)

    const cli = await ace('merchant:schedule-rotation', who.merchantId, '--at=2001-01-01T00:00:00Z')
    assert.equal(cli.code, 1, cli.output)
    assert.include(cli.output, 'run_at must be in the future')
    assert.lengthOf(await ScheduledCredentialRotation.all(), 0)
  })

  test('schedule is audited; a time without an offset is Bangkok time', async ({ assert }) => {
    const who = await createTestMerchant()
    const runAt = DateTime.now().setZone('Asia/Bangkok').plus({ days: 1 }).startOf('second')
    const { rotation } = await scheduleNow(
      {
        merchant_id: who.merchantId,
        run_at: runAt.toFormat("yyyy-LL-dd'T'HH:mm:ss"),
        secret: 'on',
        grace_seconds: '3600',
        comment: 'planned yearly rotation',
      },
      SHELL
    )
    assert.equal(rotation.runAt.toMillis(), runAt.toMillis())
    const [entry] = await audits('merchant.credentials.schedule_rotation')
    assert.equal(entry.subjectId, who.merchantId)
    assert.equal(entry.actor, SHELL.name)
    assert.isNull(entry.operatorId)
    const [glass] = await audits('break_glass.use')
    assert.equal(glass.actor, SHELL.name)
    assert.equal(glass.details!.action, 'merchant.schedule_rotation')
    assert.equal(entry.comment, 'planned yearly rotation')
    assert.deepInclude(entry.afterValues!, {
      id: rotation.id,
      token: false,
      secret: true,
      grace_seconds: 3600,
      status: 'scheduled',
      requested_by: SHELL.name,
      run_at: runAt.toUTC().toISO(),
    })
  })

  test('cancel: only a scheduled rotation; a cancelled one never runs', async ({ assert }) => {
    const who = await createTestMerchant()
    const { rotation } = await scheduleNow(
      { merchant_id: who.merchantId, run_at: inSeconds(1), secret: true },
      TEST_ACTOR
    )
    const cancelled = await cancelScheduledRotation(
      { merchant_id: who.merchantId, rotation_id: rotation.id, comment: 'not needed' },
      SHELL
    )
    assert.equal(cancelled.rotation.status, 'cancelled')
    const [entry] = await audits('merchant.credentials.cancel_rotation')
    assert.deepInclude(entry.beforeValues!, { status: 'scheduled' })
    assert.deepInclude(entry.afterValues!, { status: 'cancelled' })
    assert.equal(entry.comment, 'not needed')

    const again = await refusal(
      cancelScheduledRotation({ merchant_id: who.merchantId, rotation_id: rotation.id }, TEST_ACTOR)
    )
    assert.deepEqual(byField(again), {
      rotation_id: `rotation ${rotation.id} is cancelled; only a scheduled one can be cancelled`,
    })
    const other = await createTestMerchant()
    const elsewhere = await refusal(
      cancelScheduledRotation(
        { merchant_id: other.merchantId, rotation_id: rotation.id },
        TEST_ACTOR
      )
    )
    assert.isTrue(elsewhere.notFound)

    assert.isFalse(await performScheduledRotation(rotation.id, DateTime.utc().plus({ minutes: 1 })))
    assert.equal(await credentialCount(who), 1)
    assert.lengthOf(await audits('merchant.credentials.cancel_rotation'), 1)
  })

  test('a rotation whose merchant secret cannot be decrypted fails, audited; nothing else changes', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    const { rotation } = await scheduleNow(
      { merchant_id: who.merchantId, run_at: inSeconds(1), token: true },
      TEST_ACTOR
    )
    await db
      .from('merchant_credentials')
      .where('merchant_id', who.merchant.id)
      .update({ secret_encrypted: 'damaged' })
    assert.isFalse(await performScheduledRotation(rotation.id, DateTime.utc().plus({ minutes: 1 })))
    await rotation.refresh()
    assert.equal(rotation.status, 'failed')
    assert.match(rotation.failure!, /cannot be decrypted/)
    assert.equal(await credentialCount(who), 1)
    const [entry] = await audits('merchant.credentials.rotation_failed')
    assert.equal(entry.actor, 'system')
    assert.deepInclude(entry.afterValues!, { status: 'failed' })
    assert.lengthOf(await audits('merchant.credentials.rotate'), 0)
  })

  test('the sweep performs a due rotation whose job was lost, and revokes ended grace periods', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    const rotation = await ScheduledCredentialRotation.create({
      merchantId: who.merchant.id,
      rotateToken: true,
      rotateSecret: true,
      graceSeconds: 0,
      runAt: DateTime.utc().minus({ seconds: 5 }),
      status: 'scheduled',
      requestedBy: 'test',
    })
    assert.equal(await performDueRotations(), 1)
    assert.equal(await performDueRotations(), 0)
    await rotation.refresh()
    assert.equal(rotation.status, 'done')
    assert.equal((await balance(who)).status, 403)

    // Grace 0: the rotation revoked the previous credential itself.
    assert.equal(await revokeExpiredCredentials(), 0)
    const previous = await MerchantCredential.query()
      .where('merchant_id', who.merchant.id)
      .whereNotNull('revoked_at')
    assert.lengthOf(previous, 1)
  })
})

test.group('scheduled credential rotation: the worker', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    // Rotation ids start again after a reset: jobs of earlier runs would take their job ids.
    await queue('operations').obliterate({ force: true })
  })
  group.each.timeout(60_000)

  test('a worker rotates at run_at; the old secret works until grace end, then the sweep revokes it', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    const stop = startTestWorker('operations')
    try {
      const { rotation } = await scheduleNow(
        { merchant_id: who.merchantId, run_at: inSeconds(1.5), secret: true, grace_seconds: 3 },
        SHELL
      )
      assert.equal(rotation.status, 'scheduled')
      assert.equal((await balance(who)).status, 200)

      assert.isTrue(
        await until(async () => (await rotation.refresh()).status === 'done', 15_000),
        'the delayed job runs the rotation'
      )
      assert.isTrue(rotation.doneAt! >= rotation.runAt)
      assert.equal(await credentialCount(who), 2)
      const [rotated] = await audits('merchant.credentials.rotate')
      assert.equal(rotated.actor, 'system')
      assert.include(rotated.details!, {
        rotation_id: rotation.id,
        requested_by: SHELL.name,
        secret_rotated: true,
        token_rotated: false,
        grace_seconds: 3,
      })

      // The new secret, shown once to whoever asked (here the shell): it works at once,
      // beside the old one in grace.
      const revealed = await viewCredentialHandover(
        { merchant_id: who.merchantId, rotation_id: rotation.id },
        SHELL
      )
      assert.lengthOf(revealed.secret!, 48)
      assert.isUndefined(revealed.token)
      assert.equal((await balance(who, revealed.secret)).status, 200)
      assert.equal((await balance(who)).status, 200, 'the old secret works during the grace period')
      const [reveal] = await audits('merchant.credentials.handover')
      assert.equal(reveal.actor, SHELL.name)
      assert.notInclude(JSON.stringify(reveal.$attributes), revealed.secret!)
      const handover = await handoverOf(rotation.id)
      assert.isNull(handover.secret_encrypted)
      assert.equal(handover.viewed_by, SHELL.name)
      await rotation.refresh()
      assert.isNull(rotation.newSecretEncrypted)
      const twice = await refusal(
        viewCredentialHandover({ merchant_id: who.merchantId, rotation_id: rotation.id }, SHELL)
      )
      assert.match(byField(twice).rotation_id, /were already shown, to you at /)

      // Running the job again (a second delivery) rotates nothing.
      const repeat = await dispatch(
        'performCredentialRotation',
        { rotationId: rotation.id },
        { jobId: `rotation-${rotation.id}-again` }
      )
      assert.isTrue(
        await until(async () => (await repeat.getState()) === 'completed', 10_000),
        'the repeated job completes'
      )
      assert.deepEqual((await queue('operations').getJob(repeat.id!))?.returnvalue, {
        rotated: false,
      })
      assert.equal(await credentialCount(who), 2)
      assert.lengthOf(await audits('merchant.credentials.rotate'), 1)

      // Grace ends: the old secret stops; the sweep job records the revocation.
      assert.isTrue(
        await until(async () => (await balance(who)).status === 403, 10_000),
        'the old secret stops at the end of the grace period'
      )
      const sweep = await dispatch('sweepCredentials', {}, { jobId: 'test-sweep-credentials' })
      assert.isTrue(await until(async () => (await sweep.getState()) === 'completed', 10_000))
      const revoked = await MerchantCredential.query()
        .where('merchant_id', who.merchant.id)
        .whereNotNull('revoked_at')
      assert.lengthOf(revoked, 1)
      const [revocation] = await audits('merchant.credentials.revoke')
      assert.equal(revocation.actor, 'system')
      assert.equal(revocation.subjectId, who.merchantId)
      assert.equal(revocation.reasonCode, 'grace_ended')
      assert.deepEqual(revocation.afterValues, {
        revoked: [
          {
            credential_id: revoked[0].id,
            token_hint: revoked[0].tokenHint,
            grace_ended_at: revoked[0].expiresAt!.toUTC().toISO(),
          },
        ],
      })
      assert.equal(await revokeExpiredCredentials(), 0, 'revoking again changes nothing')
      assert.equal((await balance(who, revealed.secret)).status, 200)
    } finally {
      await stop()
    }
  })

  test('merchant:schedule-rotation, merchant:rotations and --reveal over the CLI', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    const scheduled = await ace(
      'merchant:schedule-rotation',
      who.merchantId,
      `--at=${inSeconds(3600)}`,
      '--token',
      '--grace=60',
      '--json'
    )
    assert.equal(scheduled.code, 0, scheduled.output)
    const printed = lastJsonLine(scheduled.stdout)
    assert.include(printed, { token: true, secret: false, grace_seconds: 60, status: 'scheduled' })

    const listed = lastJsonLine((await ace('merchant:rotations', who.merchantId, '--json')).stdout)
    assert.deepEqual(
      listed.rotations.map((row: { id: number; status: string }) => [row.id, row.status]),
      [[printed.id, 'scheduled']]
    )
    assert.deepEqual(
      listed.credentials.map((row: { state: string }) => row.state),
      ['current']
    )

    const early = await ace('merchant:rotations', who.merchantId, `--reveal=${printed.id}`)
    assert.equal(early.code, 1, early.output)
    assert.include(
      early.output,
      `rotation ${printed.id} of merchant ${who.merchantId} has no new values (not run yet, or none)`
    )

    // Due now: the sweep carries it out; the CLI reveals the token once.
    await ScheduledCredentialRotation.query()
      .where('id', printed.id)
      .update({ run_at: DateTime.utc().minus({ seconds: 1 }).toJSDate() })
    assert.equal(await performDueRotations(), 1)
    const revealed = await ace(
      'merchant:rotations',
      who.merchantId,
      `--reveal=${printed.id}`,
      '--json'
    )
    assert.equal(revealed.code, 0, revealed.output)
    const values = lastJsonLine(revealed.stdout)
    assert.lengthOf(values.token, 40)
    assert.equal((await balance(who, undefined, values.token)).status, 200)
    const twice = await ace('merchant:rotations', who.merchantId, `--reveal=${printed.id}`)
    assert.equal(twice.code, 1)
    assert.include(twice.output, 'were already shown')

    const second = await ace(
      'merchant:schedule-rotation',
      who.merchantId,
      `--at=${inSeconds(3600)}`,
      '--json'
    )
    const secondId = lastJsonLine(second.stdout).id
    const cancelled = await ace(
      'merchant:schedule-rotation',
      who.merchantId,
      `--cancel=${secondId}`
    )
    assert.equal(cancelled.code, 0, cancelled.output)
    assert.equal((await ScheduledCredentialRotation.findOrFail(secondId)).status, 'cancelled')
  })
})
