import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Operator from '#operators/models/operator'
import { createOperator } from '#operators/actions/create_operator'
import { updateOperator } from '#operators/actions/update_operator'
import { setOperatorPassword } from '#operators/actions/set_operator_password'
import { checkPassword, checkSecondFactor, enrolTotp } from '#operators/sign_in'
import { newTotpSecret, totpCode } from '#operators/totp'
import { ActionError } from '#core/validation'
import { approveRequest } from '#approvals/actions/approve_request'
import { ace, aceProcess, lastJsonLine } from '#tests/helpers/ace'
import { resetDatabase } from '#tests/helpers/merchants'

const cli = { name: 'cli:test' }
const origin = { ip: '127.0.0.1', requestId: 'test' }

/** operator:create's action from the server's shell: the account exists at once, with its link. */
async function createdFromShell(input: Record<string, unknown>) {
  const { operator, link } = await createOperator(input, cli)
  if (!operator || !link) throw new Error('the operator was not created at once')
  return { operator, link }
}

async function refusal(promise: Promise<unknown>) {
  try {
    await promise
  } catch (error) {
    if (error instanceof ActionError) return error.errors
    throw error
  }
  throw new Error('the action was expected to refuse, and it succeeded')
}

test.group('operators', (group) => {
  group.each.setup(() => resetDatabase())

  test('operator:create prints a one-time enrolment link; the password chosen through it is stored as argon2id', async ({
    assert,
  }) => {
    // The command as an operator types it, in its own process.
    const result = await aceProcess(
      'operator:create',
      '--email=Ops@Example.com',
      '--role=operator',
      '--json'
    )
    assert.equal(result.code, 0, result.output)
    const { email, role, enrolment_url: url } = lastJsonLine(result.stdout)
    assert.equal(email, 'ops@example.com')
    assert.equal(role, 'operator')
    assert.match(url, /^https:\/\/localhost:\d+\/admin\/welcome\/[A-Za-z0-9]{43}$/)
    const token = url.split('/').pop()
    const created = await Operator.findByOrFail('email', 'ops@example.com')
    assert.isNull(created.password)
    assert.isNull(await checkPassword('ops@example.com', ''))
    // Only the token's hash is kept; neither it nor the link is in the audit log.
    assert.notInclude(JSON.stringify(await db.from('operators')), token)
    assert.notInclude(JSON.stringify(await db.from('audit_logs')), token)

    const password = 'a long enough passphrase'
    assert.deepEqual(
      await refusal(
        setOperatorPassword({ token, password: 'short', password_confirmation: 'short' }, origin)
      ),
      [{ field: 'password', message: 'password must be at least 12 characters' }]
    )
    assert.deepEqual(
      await refusal(
        setOperatorPassword({ token, password, password_confirmation: 'other' }, origin)
      ),
      [{ field: 'password_confirmation', message: 'the two passwords differ' }]
    )
    await setOperatorPassword({ token, password, password_confirmation: password }, origin)
    const stored = await Operator.findByOrFail('email', 'ops@example.com')
    assert.match(stored.password!, /^\$argon2id\$/)
    assert.notInclude(JSON.stringify(await db.from('audit_logs')), password)
    assert.isNotNull(await checkPassword('OPS@example.com', password))
    assert.isNull(await checkPassword('ops@example.com', 'wrong'))
    // The link worked once.
    const used = await refusal(
      setOperatorPassword(
        { token, password: 'another passphrase', password_confirmation: 'another passphrase' },
        origin
      )
    )
    assert.match(used[0].message, /not valid/)

    // From the server's shell, beyond four eyes: applied at once, recorded as a break-glass use.
    assert.equal(created.createdByActor.startsWith('cli:'), true)
    assert.isNull(created.createdBy)
    const [glass] = await db.from('audit_logs').where('action', 'break_glass.use')
    assert.equal(glass.subject_id, 'ops@example.com')
    const [notice] = await db.from('notifications').where('kind', 'break_glass')
    assert.equal(notice.action, 'operator.create')
    assert.include(notice.summary, 'created operator ops@example.com (operator)')

    const again = await ace('operator:create', '--email=ops@example.com', '--role=viewer')
    assert.equal(again.code, 1)
    assert.include(again.output, 'an operator with email ops@example.com already exists')
    const bad = await ace('operator:create', '--email=not-an-email', '--role=boss')
    assert.equal(bad.code, 1)
    assert.include(bad.output, 'email must be an email address')
    assert.include(bad.output, 'role must be one of')
  })

  test('an expired link opens nothing; --new-link forgets the password and issues another', async ({
    assert,
  }) => {
    const { operator, link } = await createdFromShell({ email: 'a@example.com', role: 'admin' })
    const token = link.url.split('/').pop()!
    await db
      .from('operators')
      .where('id', operator.id)
      .update({
        enrolment_expires_at: new Date(Date.now() - 1000),
      })
    const password = 'a long enough passphrase'
    const expired = await refusal(
      setOperatorPassword({ token, password, password_confirmation: password }, origin)
    )
    assert.match(expired[0].message, /not valid/)

    const result = await ace('operator:update', 'a@example.com', '--new-link')
    assert.equal(result.code, 0, result.output)
    const fresh = result.stdout.match(/\/admin\/welcome\/([A-Za-z0-9]{43})/)![1]
    await setOperatorPassword({ token: fresh, password, password_confirmation: password }, origin)
    assert.isNotNull(await checkPassword('a@example.com', password))

    // A forgotten password: the old one stops working at once.
    const reset = await ace('operator:update', 'a@example.com', '--new-link', '--comment=forgot it')
    assert.equal(reset.code, 0, reset.output)
    assert.isNull(await checkPassword('a@example.com', password))
    const [audit] = await db
      .from('audit_logs')
      .where('action', 'operator.update')
      .orderBy('id', 'desc')
      .limit(1)
    assert.equal(audit.comment, 'forgot it')

    // operator:reset-2fa: a lost phone.
    const secret = newTotpSecret()
    await enrolTotp(operator.id, secret, totpCode(secret), origin)
    const lost = await ace('operator:reset-2fa', 'a@example.com', '--comment=lost phone')
    assert.equal(lost.code, 0, lost.output)
    assert.include(lost.output, 'second factor reset')
    assert.isNull((await Operator.findOrFail(operator.id)).totpEnabledAt)

    // Each of them was a break-glass use from the shell, notified to every admin.
    const uses = await db.from('notifications').where('kind', 'break_glass').orderBy('id')
    assert.deepEqual(
      uses.map((use) => use.action),
      ['operator.create', 'operator.new_link', 'operator.new_link', 'operator.reset_2fa']
    )
    assert.lengthOf(await db.from('audit_logs').where('action', 'break_glass.use'), 4)

    // A raise, an enabling and an unlock from the shell too; a disable stops access: not one.
    const raised = await ace('operator:update', 'a@example.com', '--role=viewer', '--disable')
    assert.equal(raised.code, 0, raised.output)
    assert.lengthOf(await db.from('notifications').where('kind', 'break_glass'), 4)
    const back = await ace('operator:update', 'a@example.com', '--role=admin', '--enable')
    assert.equal(back.code, 0, back.output)
    const unlock = await ace('operator:unlock', '--email=a@example.com')
    assert.equal(unlock.code, 0, unlock.output)
    const after = await db.from('notifications').where('kind', 'break_glass').orderBy('id')
    assert.deepEqual(
      after.slice(4).map((use) => use.action),
      ['operator.raise', 'operator.enable', 'operator.unlock']
    )
    const restored = await Operator.findOrFail(operator.id)
    assert.equal(restored.role, 'admin')
    assert.isNull(restored.disabledAt)
    assert.isNull(restored.raisedBy)
    assert.match(restored.raisedByActor!, /^cli:/)
  })

  test('the second factor: a code works once, a recovery code works once', async ({ assert }) => {
    const { operator } = await createdFromShell({ email: 'a@example.com', role: 'admin' })
    const secret = newTotpSecret()
    assert.isNull(await enrolTotp(operator.id, secret, '000000', origin))
    const codes = await enrolTotp(operator.id, secret, totpCode(secret), origin)
    assert.lengthOf(codes!, 10)
    // The enrolment code's step is used: only a later step passes.
    assert.equal(await checkSecondFactor(operator.id, totpCode(secret)), 'reused')
    const next = totpCode(secret, Date.now() + 30_000)
    assert.equal(await checkSecondFactor(operator.id, next), 'totp')
    assert.equal(await checkSecondFactor(operator.id, next), 'reused')
    assert.equal(await checkSecondFactor(operator.id, codes![3].toLowerCase()), 'recovery_code')
    assert.isNull(await checkSecondFactor(operator.id, codes![3]))
  })

  test('role change, disable and second-factor reset: audited, sessions ended, own access untouchable', async ({
    assert,
  }) => {
    const { operator: admin } = await createdFromShell({
      email: 'admin@example.com',
      role: 'admin',
    })
    const { operator, link } = await createdFromShell({
      email: 'ops@example.com',
      role: 'operator',
    })
    const password = 'a long enough passphrase'
    await setOperatorPassword(
      { token: link.url.split('/').pop(), password, password_confirmation: password },
      origin
    )
    await db.table('sessions').insert({
      id: 'session-1',
      data: '{}',
      user_id: String(operator.id),
      expires_at: new Date(Date.now() + 60_000),
    })
    const actor = { name: admin.actorName, operatorId: admin.id }

    const { changed } = await updateOperator(
      { email: 'ops@example.com', role: 'viewer', comment: 'moved team' },
      actor
    )
    assert.deepEqual(changed, ['role'])
    assert.lengthOf(await db.from('sessions').where('user_id', String(operator.id)), 0)

    await updateOperator({ email: 'ops@example.com', enabled: 'off' }, actor)
    assert.isNull(await checkPassword('ops@example.com', password!))
    // Enabling gives access back: in the back-office it waits for a second admin.
    const asked = await updateOperator({ email: 'ops@example.com', enabled: 'on' }, actor)
    assert.lengthOf(asked.requests, 1)
    assert.isNull(await checkPassword('ops@example.com', password!))
    const { operator: second } = await createdFromShell({
      email: 'second@example.com',
      role: 'admin',
    })
    await approveRequest(
      { approval_request_id: asked.requests[0].id, comment: 'back from leave' },
      { name: second.actorName, operatorId: second.id }
    )
    assert.isNotNull(await checkPassword('ops@example.com', password!))
    const enabled = await Operator.findOrFail(operator.id)
    assert.equal(enabled.enabledBy, admin.id)
    assert.equal(enabled.enabledByActor, 'operator:admin@example.com')

    const rows = await db
      .from('audit_logs')
      .where('action', 'operator.update')
      .orderBy('id')
      .select('actor', 'before_values', 'after_values', 'comment')
    const json = (value: any) => (typeof value === 'string' ? JSON.parse(value) : value)
    assert.equal(rows[0].actor, 'operator:admin@example.com')
    assert.deepEqual(json(rows[0].before_values), { role: 'operator' })
    assert.deepEqual(json(rows[0].after_values), { role: 'viewer' })
    assert.equal(rows[0].comment, 'moved team')
    assert.deepEqual(json(rows[1].after_values), { enabled: false })

    const own = await refusal(updateOperator({ email: 'admin@example.com', role: 'viewer' }, actor))
    assert.match(own[0].message, /cannot change your own/)
    const unknown = await refusal(updateOperator({ email: 'nobody@example.com' }, actor))
    assert.deepEqual(unknown, [{ field: 'email', message: 'no operator nobody@example.com' }])
  })

  test('audit_logs cannot be edited or deleted, even by SQL', async ({ assert }) => {
    await createdFromShell({ email: 'a@example.com', role: 'admin' })
    await assert.rejects(() => db.from('audit_logs').update({ action: 'x' }), /append-only/)
    await assert.rejects(() => db.from('audit_logs').delete(), /append-only/)
  })
})
