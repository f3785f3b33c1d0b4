import { test } from '@japa/runner'
import vine from '@vinejs/vine'
import db from '@adonisjs/lucid/services/db'
import { cliActor, type Actor } from '#core/actor'
import { validateInput } from '#core/validation'
import { registerApprovableAction } from '#approvals/approvable_actions'
import { askOrApplyFromShell } from '#approvals/maker_checker'
import { approveRequest } from '#approvals/actions/approve_request'
import { mailPendingNotifications, recordBreakGlass } from '#notifications/notifications'
import { startMetricsServer, type MetricsServer } from '#metrics/metrics_server'
import { forgetCachedSources } from '#metrics/sources'
import { AdminSession, signedInOverHttp } from '#tests/helpers/admin_session'
import { mailsTo, waitForMail } from '#tests/helpers/mailbox'
import { resetDatabase } from '#tests/helpers/merchants'

/*
 * Four eyes on where money goes, the generic part: a maker-checker change
 * asked in the back-office waits for a second admin; from the shell it is a
 * break-glass use. Either way every admin sees a notice until they
 * acknowledge it, every other admin gets it by mail (over real SMTP to the
 * test process's server), and /metrics counts it.
 */

/** A money-directing change of a test setting (a row of its own table), registered as the real ones are. */
const schema = vine.object({ key: vine.string(), value: vine.string() })
type Data = { key: string; value: string }

async function settingOf(key: string) {
  const row = await db.from('test_settings').where('setting_key', key).first()
  return row ? String(row.value) : null
}

registerApprovableAction<Data, any>({
  name: 'test.redirect_money',
  kind: 'test_redirect',
  approverRole: 'admin',
  sensitive: true,
  describe: (data) => `send ${data.key}'s money to ${data.value}`,
  validate: (input) => validateInput(vine.compile(schema), input),
  prepare: async (_trx, data) => ({
    target: { type: 'test_setting', id: data.key, amount: null, reviewedBy: null },
    now: await settingOf(data.key),
  }),
  change: (data, prepared) => ({
    before: { value: prepared.now ?? '—' },
    after: { value: data.value },
  }),
  run: async (trx, _prepared, data) => {
    await trx.rawQuery(
      'INSERT INTO test_settings (setting_key, value) VALUES (?, ?) ON DUPLICATE KEY UPDATE value = VALUES(value)',
      [data.key, data.value]
    )
    return { value: data.value }
  },
})

function redirect(key: string, value: string, actor: Actor) {
  return db.transaction(async (trx) => {
    const input = { key, value }
    const prepared = {
      target: { type: 'test_setting', id: key, amount: null, reviewedBy: null },
      now: await settingOf(key),
    }
    return askOrApplyFromShell(trx, {
      action: 'test.redirect_money',
      target: prepared.target,
      input,
      prepared,
      actor,
      reason: { comment: 'test' },
      summary: `sent ${key}'s money to ${value}`,
      run: async () => {
        await trx.rawQuery(
          'INSERT INTO test_settings (setting_key, value) VALUES (?, ?) ON DUPLICATE KEY UPDATE value = VALUES(value)',
          [key, value]
        )
        return value
      },
    })
  })
}

function text(html: string) {
  return html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/\s+/g, ' ')
}

test.group('four eyes on where money goes: requests, break-glass, notices', (group) => {
  let metrics: MetricsServer
  group.setup(async () => {
    await db.rawQuery(
      'CREATE TABLE IF NOT EXISTS test_settings (setting_key VARCHAR(40) PRIMARY KEY, value VARCHAR(80) NOT NULL)'
    )
    metrics = await startMetricsServer({ port: 0, host: '127.0.0.1', role: 'web' })
    return async () => {
      await metrics.close()
      await db.rawQuery('DROP TABLE IF EXISTS test_settings')
    }
  })
  group.each.setup(async () => {
    await resetDatabase()
    await db.from('test_settings').delete()
  })

  test('one admin alone changes nothing; a second admin carries out the change as stored; both learn of it', async ({
    assert,
  }) => {
    const alice = await signedInOverHttp('alice@example.com', 'admin')
    const bob = await signedInOverHttp('bob@example.com', 'admin')
    const olga = await signedInOverHttp('olga@example.com', 'operator')
    const aliceActor = { name: 'operator:alice@example.com', operatorId: alice.operator.id }
    const bobActor = { name: 'operator:bob@example.com', operatorId: bob.operator.id }

    const asked = await redirect('m1', 'KBANK:1234567890', aliceActor)
    assert.isNotNull(asked.request)
    assert.isNull(await settingOf('m1'), 'nothing changes on one admin’s click')
    assert.deepEqual(asked.request!.changeAfter, { value: 'KBANK:1234567890' })
    assert.deepEqual(asked.request!.changeBefore, { value: '—' })

    // The requester cannot carry it out; another admin can, exactly as stored.
    await assert.rejects(
      () => approveRequest({ approval_request_id: asked.request!.id, comment: 'mine' }, aliceActor),
      /another operator must approve it/
    )
    // The card shows the change to the approver.
    const queue = await bob.session.get('/admin/review/approvals')
    assert.include(text(queue.text), 'value — KBANK:1234567890')
    await approveRequest(
      { approval_request_id: asked.request!.id, comment: 'checked with the merchant' },
      bobActor
    )
    assert.equal(await settingOf('m1'), 'KBANK:1234567890')

    // Every admin sees the notice; an operator sees none and cannot acknowledge one.
    const bobsDashboard = text((await bob.session.get('/admin')).text)
    assert.include(bobsDashboard, 'Needs your attention (1)')
    assert.include(
      bobsDashboard,
      `alice@example.com asks to send m1's money to KBANK:1234567890 (approval request #${asked.request!.id})`
    )
    const olgasDashboard = (await olga.session.get('/admin')).text
    assert.notInclude(olgasDashboard, 'dashboard-notices')
    assert.notInclude(olgasDashboard, 'notices-link')
    const csrf = AdminSession.csrfOf(await olga.session.get('/admin'))
    const forged = await olga.session.post('/admin/notifications/acknowledge', { all: '1' }, csrf)
    assert.equal(forged.status, 403)

    // Acknowledging takes it off that admin's dashboard only.
    const bobCsrf = AdminSession.csrfOf(await bob.session.get('/admin'))
    const acked = await bob.session.post(
      '/admin/notifications/acknowledge',
      { all: '1', back: 'dashboard' },
      bobCsrf
    )
    assert.equal(acked.headers.location, '/admin')
    assert.notInclude((await bob.session.get('/admin')).text, 'dashboard-notices')
    // Alice is not told of her own request; another admin still is until they acknowledge.
    assert.notInclude((await alice.session.get('/admin')).text, 'dashboard-notices')
    const ackAudit = await db.from('audit_logs').where('action', 'notification.acknowledge')
    assert.lengthOf(ackAudit, 1)

    // Mailed to every other admin, never to the one who asked; two sweeps at once mail it once.
    const [first, second] = await Promise.all([
      mailPendingNotifications(),
      mailPendingNotifications(),
    ])
    assert.equal(first + second, 1)
    assert.isNotNull(
      await waitForMail('bob@example.com', (m) => m.subject.includes('test.redirect_money'))
    )
    assert.lengthOf(mailsTo('alice@example.com'), 0)
    assert.lengthOf(mailsTo('olga@example.com'), 0)
    assert.equal(await mailPendingNotifications(), 0)
    assert.lengthOf(
      mailsTo('bob@example.com').filter((m) => m.subject.includes('test.redirect_money')),
      1
    )
  })

  test('from the shell the change applies at once, as a break-glass use every admin is told of and /metrics counts', async ({
    assert,
  }) => {
    const alice = await signedInOverHttp('alice@example.com', 'admin')
    const done = await redirect('m2', 'SCB:9876543210', cliActor())
    assert.isNull(done.request)
    assert.equal(await settingOf('m2'), 'SCB:9876543210')

    const audit = await db.from('audit_logs').where('action', 'break_glass.use').first()
    assert.equal(audit.subject_id, 'm2')
    assert.match(String(audit.actor), /^cli:/)
    const notices = await db.from('notifications').where('kind', 'break_glass')
    assert.lengthOf(notices, 1)
    assert.include(
      text((await alice.session.get('/admin')).text),
      "(break-glass, from the server) sent m2's money to SCB:9876543210"
    )
    assert.include((await alice.session.get('/admin')).text, 'id="notice-count">1<')

    await mailPendingNotifications()
    const mail = await waitForMail('alice@example.com', (m) => m.subject.includes('break-glass'))
    assert.isNotNull(mail)
    assert.include(mail!.text, "sent m2's money to SCB:9876543210")

    // A second use, recorded by any action through the same function, counts too.
    await db.transaction((trx) =>
      recordBreakGlass(trx, cliActor(), { action: 'test.other', summary: 'did something else' })
    )
    forgetCachedSources()
    const scraped = await (await fetch(`http://127.0.0.1:${metrics.port}/metrics`)).text()
    assert.match(scraped, /^gateway_break_glass_uses\{process="web"\} 2$/m)
  })

  test('a request waits alone: a second one on the same target is refused until the first is decided', async ({
    assert,
  }) => {
    const alice = await signedInOverHttp('alice@example.com', 'admin')
    const actor = { name: 'operator:alice@example.com', operatorId: alice.operator.id }
    await redirect('m3', 'BBL:1111111111', actor)
    await assert.rejects(
      () => redirect('m3', 'BBL:2222222222', { name: 'cli:root' }),
      /already pending/
    )
    assert.isNull(await settingOf('m3'))
    forgetCachedSources()
    const scraped = await (await fetch(`http://127.0.0.1:${metrics.port}/metrics`)).text()
    assert.match(scraped, /^gateway_sensitive_requests_pending\{process="web"\} 1$/m)
  })
})
