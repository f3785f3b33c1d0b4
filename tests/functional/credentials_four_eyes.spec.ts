import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import ApprovalRequest from '#approvals/models/approval_request'
import ScheduledCredentialRotation from '#merchants/models/scheduled_credential_rotation'
import { approveRequest } from '#approvals/actions/approve_request'
import { rotateCredentials } from '#merchants/actions/rotate_credentials'
import { scheduleCredentialRotation } from '#merchants/actions/schedule_credential_rotation'
import { performScheduledRotation } from '#merchants/actions/perform_scheduled_rotation'
import { viewCredentialHandover } from '#merchants/actions/view_credential_handover'
import { byField, refusal } from '#tests/helpers/actions'
import { operatorActor } from '#tests/helpers/decisions'
import { ace, lastJsonLine } from '#tests/helpers/ace'
import {
  authBody,
  createTestMerchant,
  resetDatabase,
  signedPost,
  type TestMerchant,
} from '#tests/helpers/merchants'

const balance = (who: TestMerchant, values: { token?: string; secret?: string } = {}) => {
  const caller = { ...who, token: values.token ?? who.token }
  return signedPost('/balance', caller, authBody(caller), { secret: values.secret ?? who.secret })
}

const credentialCount = async (who: TestMerchant) =>
  Number(
    (await db.from('merchant_credentials').where('merchant_id', who.merchant.id).count('* as n'))[0]
      .n
  )

/** Every row a secret must never reach: requests, the audit log, the notices. */
async function storedText() {
  const rows = await Promise.all([
    db.from('approval_requests'),
    db.from('audit_logs'),
    db.from('notifications'),
  ])
  return JSON.stringify(rows)
}

const json = (value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value)

async function setUp() {
  const who = await createTestMerchant()
  const alice = await operatorActor('alice@example.com', 'admin')
  const bob = await operatorActor('bob@example.com', 'admin')
  return { who, alice, bob }
}

test.group('merchant credentials: four eyes', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.timeout(60_000)

  test('one admin asking to rotate changes nothing; a second admin carries it out as stored; the requester sees the values once', async ({
    assert,
  }) => {
    const { who, alice, bob } = await setUp()
    const asked = await rotateCredentials(
      { merchant_id: who.merchantId, token: 'on', secret: 'on', grace_seconds: 0, comment: 'leak' },
      alice.actor
    )
    assert.equal(asked.outcome, 'approval_requested')
    const request = asked.request!
    assert.equal(request.action, 'merchant.rotate_credentials')
    assert.equal(request.kind, 'credential_rotation')
    assert.deepEqual(request.changeBefore, { token: `…${who.token.slice(-4)}`, secret: 'current' })
    assert.include(request.changeAfter!, { previous_work_for: 'none: revoked at once' })
    // Nothing changed: the old token and secret still sign, no credential was added.
    assert.equal((await balance(who)).status, 200)
    assert.equal(await credentialCount(who), 1)
    // Every admin is told.
    const notices = await db.from('notifications').where('kind', 'request')
    assert.lengthOf(notices, 1)
    assert.equal(notices[0].approval_request_id, request.id)

    // A second request on the same merchant waits for the first.
    const again = await refusal(
      scheduleCredentialRotation(
        {
          merchant_id: who.merchantId,
          run_at: DateTime.now().plus({ days: 1 }).toISO(),
          secret: 'on',
        },
        bob.actor
      )
    )
    assert.include(byField(again).run_at, `approval request #${request.id}`)

    // The requester cannot approve.
    const own = await refusal(approveRequest({ approval_request_id: request.id }, alice.actor))
    assert.include(byField(own).general, 'another operator must approve it')
    assert.equal((await balance(who)).status, 200)

    // Bob approves: rotated as stored (grace 0: the old credentials stop at once).
    await approveRequest({ approval_request_id: request.id, comment: 'checked' }, bob.actor)
    assert.equal(await credentialCount(who), 2)
    assert.equal((await balance(who)).status, 403, 'the old credentials were revoked')
    await request.refresh()
    assert.equal(request.status, 'approved')
    assert.include(request.result!, { merchant_id: who.merchantId, token_rotated: true })
    const [audit] = await db.from('audit_logs').where('action', 'merchant.credentials.rotate')
    assert.equal(audit.actor, bob.actor.name)
    assert.include(json(audit.details), {
      approval_request_id: request.id,
      requested_by: alice.actor.name,
    })

    // Bob cannot see the new values; alice sees them once.
    const handoverId = Number(request.result!.handover_id)
    const byBob = await refusal(
      viewCredentialHandover({ merchant_id: who.merchantId, handover_id: handoverId }, bob.actor)
    )
    assert.include(
      byField(byBob).handover_id,
      'shown only to whoever asked for the rotation (alice@example.com)'
    )
    const shown = await viewCredentialHandover(
      { merchant_id: who.merchantId, handover_id: handoverId },
      alice.actor
    )
    assert.lengthOf(shown.token!, 40)
    assert.lengthOf(shown.secret!, 48)
    assert.equal((await balance(who, { token: shown.token, secret: shown.secret })).status, 200)
    const twice = await refusal(
      viewCredentialHandover({ merchant_id: who.merchantId, handover_id: handoverId }, alice.actor)
    )
    assert.match(byField(twice).handover_id, /were already shown, to you at .*never shown again/)
    const handover = await db.from('credential_handovers').where('id', handoverId).first()
    assert.isNull(handover.token_encrypted)
    assert.isNull(handover.secret_encrypted)
    assert.equal(handover.viewed_by, alice.actor.name)

    // The values are nowhere in the requests, the audit log or the notices.
    const text = await storedText()
    assert.notInclude(text, shown.token!)
    assert.notInclude(text, shown.secret!)
    assert.lengthOf(await db.from('audit_logs').where('action', 'merchant.credentials.handover'), 1)
  })

  test('a scheduled rotation asked in the back-office is scheduled only on approval; the worker keeps its values for the requester', async ({
    assert,
  }) => {
    const { who, alice, bob } = await setUp()
    const asked = await scheduleCredentialRotation(
      {
        merchant_id: who.merchantId,
        run_at: DateTime.now().plus({ hours: 2 }).toISO(),
        secret: 'on',
        grace_seconds: '3600',
      },
      alice.actor
    )
    assert.equal(asked.outcome, 'approval_requested')
    assert.lengthOf(await ScheduledCredentialRotation.all(), 0, 'nothing scheduled yet')
    assert.equal(asked.request!.action, 'merchant.schedule_rotation')

    await approveRequest({ approval_request_id: asked.request!.id }, bob.actor)
    const [rotation] = await ScheduledCredentialRotation.all()
    assert.equal(rotation.status, 'scheduled')
    assert.equal(rotation.requestedBy, alice.actor.name)
    assert.equal(rotation.requestedByOperatorId, alice.operator.id)

    assert.isTrue(await performScheduledRotation(rotation.id, DateTime.utc().plus({ hours: 3 })))
    const handover = await db.from('credential_handovers').where('rotation_id', rotation.id).first()
    assert.equal(handover.operator_id, alice.operator.id)
    await rotation.refresh()
    assert.isNull(rotation.newSecretEncrypted, 'the rotation row keeps no value')

    const byBob = await refusal(
      viewCredentialHandover({ merchant_id: who.merchantId, handover_id: handover.id }, bob.actor)
    )
    assert.property(byField(byBob), 'handover_id')
    // Nor from the shell: a rotation asked in the back-office is handed to its requester there.
    const shell = await ace('merchant:rotations', who.merchantId, `--reveal=${rotation.id}`)
    assert.equal(shell.code, 1, shell.output)
    assert.include(shell.output, 'shown only to whoever asked for the rotation')
    const shown = await viewCredentialHandover(
      { merchant_id: who.merchantId, handover_id: handover.id },
      alice.actor
    )
    assert.equal((await balance(who, { secret: shown.secret })).status, 200)
    const text = await storedText()
    assert.notInclude(text, shown.secret!)
  })

  test('merchant:rotate from the shell applies at once, prints the values once, and is a break-glass use every admin is told of', async ({
    assert,
  }) => {
    const { who } = await setUp()
    const rotated = await ace('merchant:rotate', who.merchantId, '--grace=0', '--json')
    assert.equal(rotated.code, 0, rotated.output)
    const values = lastJsonLine(rotated.stdout)
    assert.equal((await balance(who, { token: values.token, secret: values.secret })).status, 200)
    assert.equal((await balance(who)).status, 403)
    assert.lengthOf(await ApprovalRequest.all(), 0)

    const [glass] = await db.from('audit_logs').where('action', 'break_glass.use')
    assert.equal(glass.subject_id, who.merchantId)
    assert.include(json(glass.details), { action: 'merchant.rotate_credentials' })
    const [notice] = await db.from('notifications').where('kind', 'break_glass')
    assert.equal(notice.action, 'merchant.rotate_credentials')
    assert.include(notice.summary, `rotated the token and secret of merchant ${who.merchantId}`)
    const text = await storedText()
    assert.notInclude(text, values.token)
    assert.notInclude(text, values.secret)
    // Nothing is kept for a later view: the shell saw them.
    assert.lengthOf(await db.from('credential_handovers'), 0)

    // Scheduling from the shell: at once, break-glass too; cancelling is immediate everywhere.
    const scheduled = await ace(
      'merchant:schedule-rotation',
      who.merchantId,
      `--at=${DateTime.now().plus({ days: 1 }).toISO()}`,
      '--json'
    )
    assert.equal(scheduled.code, 0, scheduled.output)
    assert.lengthOf(await db.from('audit_logs').where('action', 'break_glass.use'), 2)
  })
})
