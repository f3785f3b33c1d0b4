import { test } from '@japa/runner'
import Platform from '#merchants/models/platform'
import ApprovalRequest from '#approvals/models/approval_request'
import { configurePlatform } from '#merchants/actions/configure_platform'
import { approveRequest } from '#approvals/actions/approve_request'
import { rejectRequest } from '#approvals/actions/reject_request'
import { decisionRights } from '#approvals/approval_rules'
import { pendingRequestsOn } from '#admin/queries/approvals'
import { cliActor, type Actor } from '#core/actor'
import { byField, refusal } from '#tests/helpers/actions'
import { ace, lastJsonLine } from '#tests/helpers/ace'
import { createDepositMerchant, resetDatabase } from '#tests/helpers/merchants'
import { auditRows, operatorActor } from '#tests/helpers/decisions'

/*
 * The platform's four-eyes threshold and deposit switch as the back-office
 * changes them (an operator actor), and the command line's break-glass.
 */

async function admins() {
  return {
    dave: await operatorActor('dave@example.com', 'admin'),
    erin: await operatorActor('erin@example.com', 'admin'),
    olga: await operatorActor('olga@example.com', 'operator'),
    vera: await operatorActor('vera@example.com', 'viewer'),
  }
}

const threshold = async () => (await Platform.findByOrFail('code', 'test')).fourEyesThreshold

function approve(id: number, actor: Actor) {
  return approveRequest(
    { approval_request_id: id, comment: 'checked with the finance lead' },
    actor
  )
}

test.group('platform four eyes: the threshold in the back-office', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await createDepositMerchant()
  })

  test('lowering the threshold (or setting one where none was) applies at once', async ({
    assert,
  }) => {
    const { dave } = await admins()
    assert.isNull(await threshold())

    const set = await configurePlatform(
      { code: 'test', four_eyes_threshold: '50,000.00', comment: 'big payments need two' },
      dave.actor
    )
    assert.deepEqual(set.changed, ['four_eyes_threshold'])
    assert.lengthOf(set.requests, 0)
    assert.equal(await threshold(), 50_000_00)

    const lower = await configurePlatform(
      { code: 'test', four_eyes_threshold: '10000' },
      dave.actor
    )
    assert.deepEqual(lower.changed, ['four_eyes_threshold'])
    assert.lengthOf(lower.requests, 0)
    assert.equal(await threshold(), 10_000_00)

    const rows = await auditRows('platform.configure')
    assert.lengthOf(rows, 2)
    assert.equal(rows[0].actor, 'operator:dave@example.com')
    assert.deepEqual(rows[0].before_values, { four_eyes_threshold: null })
    assert.deepEqual(rows[0].after_values, { four_eyes_threshold: '50000.00' })
    assert.deepEqual(rows[1].after_values, { four_eyes_threshold: '10000.00' })
    assert.lengthOf(await ApprovalRequest.all(), 0)
  })

  test('raising or removing it opens a request and changes nothing; a second one is refused', async ({
    assert,
  }) => {
    const { dave, erin } = await admins()
    await configurePlatform({ code: 'test', four_eyes_threshold: '10000.00' }, cliActor())

    const raise = await configurePlatform(
      { code: 'test', four_eyes_threshold: '50,000.00', comment: 'too many requests' },
      dave.actor
    )
    assert.deepEqual(raise.changed, [])
    assert.lengthOf(raise.requests, 1)
    const request = raise.requests[0]
    assert.equal(request.kind, 'four_eyes_threshold')
    assert.equal(request.action, 'platform.four_eyes_threshold')
    assert.equal(request.targetType, 'platform')
    assert.equal(request.targetId, 'test')
    assert.equal(request.requestedByActor, 'operator:dave@example.com')
    assert.equal(await threshold(), 10_000_00)
    assert.lengthOf(await auditRows('approval.request'), 1)

    const second = await refusal(
      configurePlatform({ code: 'test', four_eyes_threshold: 'none' }, erin.actor)
    )
    assert.include(byField(second).general, 'already pending')
    assert.equal(await threshold(), 10_000_00)

    // The platform page lists it: what, by whom, since when.
    const pending = await pendingRequestsOn('platform', 'test')
    assert.lengthOf(pending, 1)
    assert.equal(pending[0].id, request.id)
    assert.equal(pending[0].what, 'set the four-eyes threshold of platform test to 50000.00')
    assert.equal(pending[0].requested_by, 'operator:dave@example.com')
    assert.equal(pending[0].approver_role, 'admin')
    assert.isString(pending[0].requested)
  })

  test('a second admin approves: the threshold is applied and audited with the request', async ({
    assert,
  }) => {
    const { dave, erin } = await admins()
    await configurePlatform({ code: 'test', four_eyes_threshold: '10000.00' }, cliActor())
    const { requests } = await configurePlatform(
      { code: 'test', four_eyes_threshold: 'none' },
      dave.actor
    )
    const approved = await approve(requests[0].id, erin.actor)
    assert.equal(approved.status, 'approved')
    assert.isNull(await threshold())
    const last = (await auditRows('platform.configure')).at(-1)!
    assert.equal(last.actor, 'operator:erin@example.com')
    assert.deepEqual(last.before_values, { four_eyes_threshold: '10000.00' })
    assert.deepEqual(last.after_values, { four_eyes_threshold: null })
    assert.equal(last.details.approval_request_id, requests[0].id)
    assert.equal(last.details.requested_by, 'operator:dave@example.com')
    assert.lengthOf(await pendingRequestsOn('platform', 'test'), 0)
  })

  test('the requesting admin cannot approve their own request, nor can an operator; the page shows buttons accordingly', async ({
    assert,
  }) => {
    const { dave, erin, olga, vera } = await admins()
    await configurePlatform({ code: 'test', four_eyes_threshold: '10000.00' }, cliActor())
    const { requests } = await configurePlatform(
      { code: 'test', four_eyes_threshold: '20000.00' },
      dave.actor
    )
    const id = requests[0].id

    const own = await refusal(approve(id, dave.actor))
    assert.include(byField(own).general, 'another operator must approve it')
    const operator = await refusal(approve(id, olga.actor))
    assert.include(byField(operator).general, 'needs the admin role')
    const operatorReject = await refusal(
      rejectRequest(
        { approval_request_id: id, reason_code: 'other', comment: 'not mine to decide' },
        olga.actor
      )
    )
    assert.include(byField(operatorReject).general, 'needs the admin role')
    assert.equal(await threshold(), 10_000_00)
    assert.equal((await ApprovalRequest.findOrFail(id)).status, 'pending')

    const [row] = await pendingRequestsOn('platform', 'test')
    const rights = (who: { operator: Parameters<typeof decisionRights>[0] }) =>
      decisionRights(who.operator, {
        requestedBy: row.requested_by_id,
        reviewedBy: row.reviewed_by_id,
        approverRole: row.approver_role,
      })
    assert.deepEqual(rights(dave), { own: true, approve: false, reject: true })
    assert.deepEqual(rights(erin), { own: false, approve: true, reject: true })
    assert.deepEqual(rights(olga), { own: false, approve: false, reject: false })
    assert.deepEqual(rights(vera), { own: false, approve: false, reject: false })

    await approve(id, erin.actor)
    assert.equal(await threshold(), 20_000_00)
  })

  test('lowering the threshold while a raise waits closes the raise as superseded', async ({
    assert,
  }) => {
    const { dave, erin } = await admins()
    await configurePlatform({ code: 'test', four_eyes_threshold: '10000.00' }, cliActor())
    const { requests } = await configurePlatform(
      { code: 'test', four_eyes_threshold: '90000.00' },
      dave.actor
    )
    const lower = await configurePlatform(
      { code: 'test', four_eyes_threshold: '5000.00' },
      erin.actor
    )
    assert.deepEqual(lower.changed, ['four_eyes_threshold'])
    assert.deepEqual(
      lower.superseded.map((request) => request.id),
      [requests[0].id]
    )
    assert.equal(await threshold(), 5_000_00)
    const closed = await ApprovalRequest.findOrFail(requests[0].id)
    assert.equal(closed.status, 'superseded')
    assert.isNull(closed.pendingKey)
    const late = await refusal(approve(requests[0].id, erin.actor))
    assert.include(byField(late).approval_request_id, 'already superseded')
    assert.equal(await threshold(), 5_000_00)
  })
})

test.group('platform four eyes: the command line break-glass', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await createDepositMerchant()
  })

  test('platform:configure --deposits on switches deposits on and closes the pending re-enable request as superseded', async ({
    assert,
  }) => {
    const { dave, erin } = await admins()
    await configurePlatform({ code: 'test', deposit_enabled: 'off' }, dave.actor)
    const { requests } = await configurePlatform(
      { code: 'test', deposit_enabled: 'on', comment: 'bank says all clear' },
      dave.actor
    )
    assert.lengthOf(requests, 1)
    assert.equal(requests[0].kind, 'enable_deposits')
    assert.isFalse((await Platform.findByOrFail('code', 'test')).depositEnabled)

    const result = await ace(
      'platform:configure',
      'test',
      '--deposits=on',
      '--comment=no second admin reachable',
      '--json'
    )
    assert.equal(result.code, 0, result.output)
    const printed = lastJsonLine(result.stdout)
    assert.isTrue(printed.deposit_enabled)
    assert.deepEqual(printed.superseded_requests, [requests[0].id])
    assert.isTrue((await Platform.findByOrFail('code', 'test')).depositEnabled)

    const closed = await ApprovalRequest.findOrFail(requests[0].id)
    assert.equal(closed.status, 'superseded')
    assert.isNull(closed.pendingKey)
    assert.match(closed.decidedByActor!, /^cli:/)
    assert.isNull(closed.decidedBy)
    assert.equal(closed.decisionReasonCode, 'superseded')
    assert.include(closed.decisionComment!, 'deposits switched on from the command line')

    const audit = await auditRows('approval.supersede')
    assert.lengthOf(audit, 1)
    assert.match(audit[0].actor, /^cli:/)
    assert.deepEqual(audit[0].before_values, { status: 'pending' })
    assert.deepEqual(audit[0].after_values, { status: 'superseded' })
    assert.equal(audit[0].details.approval_request_id, requests[0].id)
    const configured = (await auditRows('platform.configure')).at(-1)!
    assert.deepEqual(configured.details, {
      four_eyes: 'not required from the command line',
      superseded_requests: [requests[0].id],
    })

    const late = await refusal(approve(requests[0].id, erin.actor))
    assert.include(byField(late).approval_request_id, 'already superseded')
    assert.lengthOf(await pendingRequestsOn('platform', 'test'), 0)
  })

  test('a command-line threshold change closes a pending threshold request; an unrelated change does not', async ({
    assert,
  }) => {
    const { dave } = await admins()
    await configurePlatform({ code: 'test', four_eyes_threshold: '10000.00' }, cliActor())
    const { requests } = await configurePlatform(
      { code: 'test', four_eyes_threshold: 'none' },
      dave.actor
    )
    const renamed = await configurePlatform({ code: 'test', name: 'Test shop' }, cliActor())
    assert.lengthOf(renamed.superseded, 0)
    assert.equal((await ApprovalRequest.findOrFail(requests[0].id)).status, 'pending')

    const cli = await configurePlatform(
      { code: 'test', four_eyes_threshold: '20000.00' },
      cliActor()
    )
    assert.deepEqual(
      cli.superseded.map((request) => request.id),
      [requests[0].id]
    )
    assert.equal(await threshold(), 20_000_00)
    assert.equal((await ApprovalRequest.findOrFail(requests[0].id)).status, 'superseded')
  })
})
