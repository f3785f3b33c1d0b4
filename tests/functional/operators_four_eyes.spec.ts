import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { DateTime } from 'luxon'
import Operator from '#operators/models/operator'
import ApprovalRequest from '#approvals/models/approval_request'
import { checkPassword } from '#operators/sign_in'
import { encryptTotpSecret, newTotpSecret } from '#operators/totp'
import { decisionRights } from '#approvals/approval_rules'
import { AdminSession, signedInOverHttp } from '#tests/helpers/admin_session'
import { PASSWORD } from '#tests/helpers/admin'
import { mailsTo, waitForMail } from '#tests/helpers/mailbox'
import { resetDatabase } from '#tests/helpers/merchants'
import type { RawResponse } from '#tests/helpers/http'

/*
 * Four eyes on who may decide (docs/decisions.md, "Four eyes: operators"):
 * inviting an operator or an admin, raising a role, re-enabling, a new
 * enrolment link and a second-factor reset wait for a second admin; the link
 * is mailed to the operator's own address, never shown; nobody approves
 * through an account the requester created, raised or re-enabled, nor a
 * request about their own account. Over HTTP, as the back-office is used.
 */

const OPERATORS = '/admin/operators'
const LINK = /\/admin\/welcome\/([A-Za-z0-9]{43})/

type Signed = Awaited<ReturnType<typeof signedInOverHttp>>

/** A POST from a signed-in session, with a CSRF token of one of its pages. */
async function post(who: Signed, path: string, form: Record<string, string>, page = OPERATORS) {
  const csrf = AdminSession.csrfOf(await who.session.get(page))
  return who.session.post(path, form, csrf)
}

function approve(who: Signed, id: number) {
  return post(
    who,
    `/admin/review/approvals/${id}/approve`,
    { reason_code: 'evidence_checked', comment: 'asked on the phone', back: OPERATORS },
    '/admin/account'
  )
}

function change(who: Signed, target: Operator, form: Record<string, string>) {
  return post(who, `${OPERATORS}/${target.id}`, form)
}

async function pendingOn(email: string) {
  return ApprovalRequest.query()
    .where('target_type', 'operator')
    .where('target_id', email)
    .where('status', 'pending')
    .orderBy('id')
}

/** The text a page shows, entities decoded enough for the messages. */
function shown(page: RawResponse) {
  return page.text.replace(/&#39;|&#x27;/g, "'").replace(/&quot;/g, '"')
}

/**
 * The next mail with an enrolment link to `email`, after the `since` first
 * ones (the mailbox lives as long as the test process).
 */
async function mailedLink(email: string, since: number) {
  const mail = await waitForMail(
    email,
    (m) => LINK.test(m.text) && mailsTo(email).indexOf(m) >= since
  )
  if (!mail) throw new Error(`no enrolment link mailed to ${email}`)
  return mail
}

/** Follows a mailed link: chooses the password, then (as the enrol page would) a second factor. */
async function enrolThroughMail(text: string, email: string) {
  const token = LINK.exec(text)![1]
  const visitor = new AdminSession()
  const welcome = await visitor.get(`/admin/welcome/${token}`)
  if (welcome.status !== 200) throw new Error(`the mailed link answers ${welcome.status}`)
  const set = await visitor.post(
    `/admin/welcome/${token}`,
    { password: PASSWORD, password_confirmation: PASSWORD },
    AdminSession.csrfOf(welcome)
  )
  if (set.headers.location !== '/admin/enrol') throw new Error('the password was not accepted')
  const secret = newTotpSecret()
  const operator = await Operator.findByOrFail('email', email)
  operator.merge({ totpSecretEncrypted: encryptTotpSecret(secret), totpEnabledAt: DateTime.utc() })
  await operator.save()
  return { session: await AdminSession.signIn(email, secret), operator, secret, token }
}

test.group('operators: four eyes on who may decide (HTTP)', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.timeout(60_000)

  test('an admin asks for a second admin: no account until another admin approves; the requester cannot approve; the link is mailed, never shown', async ({
    assert,
  }) => {
    const a = await signedInOverHttp('a@example.com', 'admin')
    const c = await signedInOverHttp('c@example.com', 'admin')

    const asked = await post(a, OPERATORS, {
      email: 'B@example.com',
      role: 'admin',
      comment: 'second on-call admin',
    })
    assert.equal(asked.headers.location, OPERATORS)
    assert.isNull(await Operator.findBy('email', 'b@example.com'))
    const [request] = await pendingOn('b@example.com')
    assert.equal(request.action, 'operator.create')
    assert.equal(request.requestedBy, a.operator.id)
    assert.deepEqual(request.changeBefore, { account: 'none' })
    assert.deepEqual(request.changeAfter, {
      account: 'created',
      email: 'b@example.com',
      role: 'admin',
    })
    // Sensitive: every admin is told.
    const [notice] = await db.from('notifications').where('approval_request_id', request.id)
    assert.equal(notice.kind, 'request')

    const mine = shown(await a.session.get(OPERATORS))
    assert.include(mine, `approval request #${request.id} opened: waits for a second admin`)
    assert.include(mine, `id="pending-request-${request.id}"`)
    assert.notInclude(mine, `id="approve-request-${request.id}"`)
    assert.include(mine, 'Withdraw')
    assert.notMatch(mine, LINK)

    // The requester's own approval, forged: refused, nothing created.
    await approve(a, request.id)
    assert.include(shown(await a.session.get(OPERATORS)), 'another operator must approve it')
    await request.refresh()
    assert.equal(request.status, 'pending')
    assert.isNull(await Operator.findBy('email', 'b@example.com'))

    // A second admin sees Approve, and approving creates the account as asked.
    assert.include((await c.session.get(OPERATORS)).text, `id="approve-request-${request.id}"`)
    const since = mailsTo('b@example.com').length
    await approve(c, request.id)
    await request.refresh()
    assert.equal(request.status, 'approved')
    const b = await Operator.findByOrFail('email', 'b@example.com')
    assert.equal(b.role, 'admin')
    assert.equal(b.createdBy, a.operator.id)
    assert.equal(b.createdByActor, 'operator:a@example.com')
    assert.isNull(b.password)
    assert.deepEqual(request.result, {
      email: 'b@example.com',
      role: 'admin',
      enrolment_link_mailed_to: 'b@example.com',
    })

    // The link went to b's own address, and nowhere else.
    const mail = await mailedLink('b@example.com', since)
    const token = LINK.exec(mail.text)![1]
    for (const page of [await a.session.get(OPERATORS), await c.session.get(OPERATORS)]) {
      assert.notInclude(page.text, token)
      assert.notMatch(page.text, LINK)
    }
    assert.notInclude(JSON.stringify(await db.from('audit_logs')), token)
    assert.notInclude(JSON.stringify(await db.from('approval_requests')), token)
    assert.notInclude(JSON.stringify(await db.from('notifications')), token)

    // b follows it: the password is chosen there.
    await enrolThroughMail(mail.text, 'b@example.com')
    assert.isNotNull(await checkPassword('b@example.com', PASSWORD))

    // Asking again for an existing address is refused beside the email.
    await post(a, OPERATORS, { email: 'b@example.com', role: 'operator' })
    assert.include(
      shown(await a.session.get(OPERATORS)),
      'an operator with email b@example.com already exists'
    )
  })

  test('the issue: an admin created or raised by the requester never approves their requests; nobody approves a request about their own account', async ({
    assert,
  }) => {
    const a = await signedInOverHttp('a@example.com', 'admin')
    const c = await signedInOverHttp('c@example.com', 'admin')

    // a creates b, approved by c; b enrols through the mailed link.
    await post(a, OPERATORS, { email: 'b@example.com', role: 'admin' })
    const [create] = await pendingOn('b@example.com')
    const sinceB = mailsTo('b@example.com').length
    await approve(c, create.id)
    const b = await enrolThroughMail(
      (await mailedLink('b@example.com', sinceB)).text,
      'b@example.com'
    )

    // A viewer (c's) is created at once (it decides nothing); its link is mailed too.
    const sinceV = mailsTo('v@example.com').length
    await post(c, OPERATORS, { email: 'v@example.com', role: 'viewer' })
    const viewerPage = shown(await c.session.get(OPERATORS))
    assert.include(viewerPage, 'The enrolment link was mailed to <strong>v@example.com</strong>')
    assert.notMatch(viewerPage, LINK)
    const v = await Operator.findByOrFail('email', 'v@example.com')
    assert.equal(v.createdBy, c.operator.id)

    // a asks to raise v to admin: b, created by a, sees no Approve and is refused.
    await change(a, v, { change: 'role', role: 'admin' })
    const [raise] = await pendingOn('v@example.com')
    assert.equal(raise.action, 'operator.raise')
    assert.deepEqual(raise.changeBefore, { email: 'v@example.com', role: 'viewer' })
    assert.deepEqual(raise.changeAfter, { email: 'v@example.com', role: 'admin' })
    assert.equal((await Operator.findOrFail(v.id)).role, 'viewer')
    const bPage = (await b.session.get(OPERATORS)).text
    assert.include(bPage, `id="pending-request-${raise.id}"`)
    assert.notInclude(bPage, `id="approve-request-${raise.id}"`)
    const forged = { operator: b.operator, session: b.session, secret: b.secret } as Signed
    await approve(forged, raise.id)
    assert.include(
      shown(await b.session.get(OPERATORS)),
      `your account was created by a@example.com, who asked for approval request #${raise.id}`
    )
    await raise.refresh()
    assert.equal(raise.status, 'pending')
    await approve(c, raise.id)
    const raised = await Operator.findOrFail(v.id)
    assert.equal(raised.role, 'admin')
    assert.equal(raised.raisedBy, a.operator.id)
    const vSignedIn = await enrolThroughMail(
      (await mailedLink('v@example.com', sinceV)).text,
      'v@example.com'
    )
    const vs = { operator: raised, session: vSignedIn.session, secret: '' } as Signed

    // a's next request: neither b (created by a) nor v (raised by a) may approve it.
    await post(a, OPERATORS, { email: 'd@example.com', role: 'operator' })
    const [next] = await pendingOn('d@example.com')
    await approve(forged, next.id)
    await approve(vs, next.id)
    assert.include(
      shown(await vs.session.get(OPERATORS)),
      'your account was raised by a@example.com'
    )
    await next.refresh()
    assert.equal(next.status, 'pending')
    assert.isNull(await Operator.findBy('email', 'd@example.com'))
    await approve(c, next.id)
    assert.isNotNull(await Operator.findBy('email', 'd@example.com'))

    // c asks for a new link for v: v may not approve a request about their own account.
    await change(c, raised, { change: 'new_link' })
    const [link] = await pendingOn('v@example.com')
    assert.equal(link.action, 'operator.new_link')
    assert.notInclude((await vs.session.get(OPERATORS)).text, `id="approve-request-${link.id}"`)
    await approve(vs, link.id)
    assert.include(shown(await vs.session.get(OPERATORS)), 'is about your own account')
    await link.refresh()
    assert.equal(link.status, 'pending')

    // The same rules as the buttons.
    const rights = (who: Operator, request: ApprovalRequest) =>
      decisionRights(who, {
        requestedBy: request.requestedBy,
        reviewedBy: request.reviewedBy,
        approverRole: 'admin',
        targetType: request.targetType,
        targetId: request.targetId,
      }).approve
    const fresh = async (email: string) => Operator.findByOrFail('email', email)
    assert.isFalse(rights(await fresh('b@example.com'), raise))
    assert.isTrue(rights(await fresh('c@example.com'), raise))
    assert.isFalse(rights(await fresh('v@example.com'), link))
    assert.isTrue(rights(await fresh('a@example.com'), link))
  })

  test('New link, Reset 2FA and Enable on another admin open requests; on approval the link is mailed to that admin, never shown; Disable and a lower role apply at once', async ({
    assert,
  }) => {
    const a = await signedInOverHttp('a@example.com', 'admin')
    const c = await signedInOverHttp('c@example.com', 'admin')
    const e = await signedInOverHttp('e@example.com', 'admin')

    await change(a, e.operator, { change: 'new_link', comment: 'forgot the password' })
    const [link] = await pendingOn('e@example.com')
    assert.equal(link.action, 'operator.new_link')
    const asked = shown(await a.session.get(OPERATORS))
    assert.include(asked, `approval request #${link.id} opened: waits for a second admin`)
    assert.notMatch(asked, LINK)
    // Nothing changed yet: e's password works, e is still signed in.
    assert.isNotNull(await checkPassword('e@example.com', PASSWORD))
    assert.equal((await e.session.get('/admin/account')).status, 200)

    const since = mailsTo('e@example.com').length
    await approve(c, link.id)
    assert.isNull(await checkPassword('e@example.com', PASSWORD))
    const mail = await mailedLink('e@example.com', since)
    assert.include(mail.text, 'your previous password no longer works')
    assert.notMatch((await c.session.get(OPERATORS)).text, LINK)
    assert.notMatch((await a.session.get(OPERATORS)).text, LINK)
    // e's sessions ended with the approval.
    assert.equal((await e.session.get('/admin/account')).headers.location, '/admin/login')
    const [audit] = await db
      .from('audit_logs')
      .where('action', 'operator.update')
      .where('subject_id', 'e@example.com')
    const details = typeof audit.details === 'string' ? JSON.parse(audit.details) : audit.details
    assert.equal(details.enrolment_link_mailed_to, 'e@example.com')
    assert.equal(details.requested_by, 'operator:a@example.com')
    assert.equal(audit.actor, 'operator:c@example.com')

    // Reset 2FA: a request, carried out on approval.
    await change(a, e.operator, { change: 'reset_second_factor' })
    const [reset] = await pendingOn('e@example.com')
    assert.equal(reset.action, 'operator.reset_2fa')
    assert.isNotNull((await Operator.findOrFail(e.operator.id)).totpEnabledAt)
    await approve(c, reset.id)
    assert.isNull((await Operator.findOrFail(e.operator.id)).totpEnabledAt)

    // Disable and lowering a role take access away: at once.
    await change(a, e.operator, { change: 'disable' })
    assert.isNotNull((await Operator.findOrFail(e.operator.id)).disabledAt)
    await change(a, e.operator, { change: 'role', role: 'viewer' })
    assert.equal((await Operator.findOrFail(e.operator.id)).role, 'viewer')
    assert.lengthOf(await pendingOn('e@example.com'), 0)

    // Enabling gives it back: a request; re-enabled by the requester on approval.
    await change(a, e.operator, { change: 'enable' })
    const [enable] = await pendingOn('e@example.com')
    assert.equal(enable.action, 'operator.enable')
    assert.deepEqual(enable.changeAfter, {
      email: 'e@example.com',
      role: 'viewer',
      access: 'enabled',
    })
    assert.isNotNull((await Operator.findOrFail(e.operator.id)).disabledAt)
    await approve(c, enable.id)
    const enabled = await Operator.findOrFail(e.operator.id)
    assert.isNull(enabled.disabledAt)
    assert.equal(enabled.enabledBy, a.operator.id)

    // A second request of the same kind while one waits is refused.
    await change(a, e.operator, { change: 'role', role: 'operator' })
    const [waiting] = await pendingOn('e@example.com')
    await change(a, e.operator, { change: 'role', role: 'admin' })
    assert.include(
      shown(await a.session.get(OPERATORS)),
      `approval request #${waiting.id} (operator_raise on operator e@example.com) was already asked by you`
    )
    assert.lengthOf(await pendingOn('e@example.com'), 1)
  })

  test('roles: the Operators page and its forms are an admin’s; a viewer or an operator is refused, forged POSTs included', async ({
    assert,
  }) => {
    const admin = await signedInOverHttp('admin@example.com', 'admin')
    const viewer = await signedInOverHttp('viewer@example.com', 'viewer')
    const operator = await signedInOverHttp('ops@example.com', 'operator')

    // The admin's page: every change for others, none for themselves, and the invite form.
    const page = (await admin.session.get(OPERATORS)).text
    for (const other of [viewer.operator, operator.operator]) {
      for (const form of ['role', 'access', 'reset', 'link']) {
        assert.include(page, `id="operator-${other.id}-${form}"`)
      }
    }
    assert.notInclude(page, `id="operator-${admin.operator.id}-role"`)
    assert.include(page, 'id="operator-new-form"')

    await post(admin, OPERATORS, { email: 'new@example.com', role: 'admin' })
    const [request] = await pendingOn('new@example.com')

    for (const who of [viewer, operator]) {
      assert.equal((await who.session.get(OPERATORS)).status, 403)
      const forms: Array<[string, Record<string, string>]> = [
        [OPERATORS, { email: 'sneaky@example.com', role: 'admin' }],
        [`${OPERATORS}/${who.operator.id}`, { change: 'role', role: 'admin' }],
        [`${OPERATORS}/${viewer.operator.id}`, { change: 'new_link' }],
      ]
      for (const [path, form] of forms) {
        const forged = await post(who, path, form, '/admin/account')
        assert.equal(forged.status, 403, `${who.operator.role} POST ${path}`)
      }
    }
    // An operator may decide in the queues, but not on an admin's request; a viewer not at all.
    assert.equal((await approve(viewer, request.id)).status, 403)
    await approve(operator, request.id)
    assert.include(
      shown(await operator.session.get('/admin/review/approvals')),
      'needs the admin role'
    )
    await request.refresh()
    assert.equal(request.status, 'pending')
    assert.isNull(await Operator.findBy('email', 'sneaky@example.com'))
    assert.isNull(await Operator.findBy('email', 'new@example.com'))
    assert.equal((await Operator.findOrFail(operator.operator.id)).role, 'operator')
    assert.lengthOf(await pendingOn('viewer@example.com'), 0)
  })
})
