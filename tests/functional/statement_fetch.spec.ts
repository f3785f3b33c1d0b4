import { test } from '@japa/runner'
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtemp, readFile, readdir, rm, unlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { DateTime } from 'luxon'
import MailComposer from 'nodemailer/lib/mail-composer/index.js'
import db from '@adonisjs/lucid/services/db'
import drive from '@adonisjs/drive/services/main'
import PaymentOrder from '#payments/models/payment_order'
import Operator from '#operators/models/operator'
import { approveRequest } from '#approvals/actions/approve_request'
import { formatAmount } from '#core/money'
import { gatewayPeriodStarts } from '#core/clock'
import { dispatch, queue } from '#core/queue/queue_manager'
import type { Actor } from '#core/actor'
import { statementFetchFailures, statementMissing } from '#metrics/registry'
import { fetchStatements } from '#reconciliation/fetch/fetch_statements'
import reconciliationConfig from '#config/reconciliation'
import { checkMissingStatements } from '#reconciliation/fetch/missing_statements'
import { readStatementSourceFigures } from '#reconciliation/fetch/source_metrics'
import { saveStatementSource } from '#reconciliation/fetch/save_statement_source'
import { decryptSourceSecret, findSource } from '#reconciliation/fetch/statement_sources'
import { SETUP_ACTOR } from '#tests/helpers/admin'
import { ace } from '#tests/helpers/ace'
import { AdminSession, signedInOverHttp } from '#tests/helpers/admin_session'
import {
  startSftpServer,
  sftpUnavailable,
  strangerFingerprint,
  type SftpServer,
} from '#tests/helpers/sftp_server'
import { imapUnavailable, startImapServer, type ImapServer } from '#tests/helpers/imap_server'
import { startTestWorker, until } from '#tests/helpers/worker'
import {
  createDepositAccount,
  createDepositMerchant,
  createPaymentOrder,
  resetDatabase,
  type TestMerchant,
} from '#tests/helpers/merchants'

/*
 * Statements fetched from the bank's own channels (docs/reconciliation.md,
 * "Statements fetched from the bank"), against real servers this process
 * starts: Debian's OpenSSH sshd with its sftp-server, and Dovecot's IMAP.
 */

const exec = promisify(execFile)
const SFTP_MISSING = sftpUnavailable()
const IMAP_MISSING = imapUnavailable()
const BANK = 'k-electronic-document@kasikornbank.example'

let sequence = 0

function createPayment(who: TestMerchant, amount = '100.00') {
  sequence += 1
  return createPaymentOrder(who, `FETCH${sequence}`, amount, '/payment/create', {
    notify_url: undefined,
  })
}

/** A deposit account with one open payment on it. */
async function accountWithOpenPayment(amount = '100.00') {
  const who = await createDepositMerchant()
  const account = await createDepositAccount()
  const order = await createPayment(who, amount)
  if (order.depositAccountId !== account.id) throw new Error('the payment is on another account')
  return { who, account, order }
}

/** A neutral-layout statement whose credit names the payment (docs/reconciliation.md). */
function statementPaying(order: PaymentOrder, note = '') {
  const at = DateTime.now().setZone('Asia/Bangkok').toFormat('yyyy-LL-dd HH:mm')
  return [
    'date_time,direction,amount,reference,description',
    `${at},credit,"${formatAmount(order.transferAmount)}",,PROMPTPAY ${order.platformOrderId}${note}`,
  ].join('\n')
}

async function importsOf(accountId: number) {
  return db.from('statement_imports').where('deposit_account_id', accountId).orderBy('id')
}

async function fetchedFilesOf(accountId: number) {
  return db.from('statement_fetched_files').where('deposit_account_id', accountId).orderBy('id')
}

async function alerts(action: string) {
  return db.from('notifications').where('kind', 'alert').where('action', action)
}

async function failureCount(sourceId: number) {
  const metric = await statementFetchFailures.get()
  return metric.values.find((value) => value.labels.source === String(sourceId))?.value ?? 0
}

async function gaugeValue(
  gauge: typeof statementMissing,
  sourceId: number
): Promise<number | undefined> {
  const metric = await gauge.get()
  return metric.values.find((value) => value.labels.source === String(sourceId))?.value
}

async function addSftpSource(
  server: SftpServer,
  accountId: number,
  extra: Record<string, unknown> = {}
) {
  sequence += 1
  const { id } = await saveStatementSource(
    {
      deposit_account_id: accountId,
      kind: 'sftp',
      name: `H2H ${sequence}`,
      host: server.host,
      port: server.port,
      username: server.username,
      secret: server.privateKey,
      host_key_fingerprint: server.hostKeyFingerprint,
      remote_dir: server.dropDir,
      file_pattern: '*.csv',
      ...extra,
    },
    SETUP_ACTOR
  )
  return id!
}

async function addImapSource(
  server: ImapServer,
  accountId: number,
  mailbox: string,
  extra: Record<string, unknown> = {}
) {
  sequence += 1
  const { id } = await saveStatementSource(
    {
      deposit_account_id: accountId,
      kind: 'imap',
      name: `Mail ${sequence}`,
      host: server.host,
      port: server.port,
      username: server.username,
      secret: server.password,
      imap_tls: 'implicit',
      tls_ca: server.certificate,
      mailbox,
      sender: BANK,
      ...extra,
    },
    SETUP_ACTOR
  )
  return id!
}

/** The receiving mail server's name in its Authentication-Results, trusted in these tests. */
const MAIL_SERVER = 'mx.gateway.test'

async function mail(options: {
  from: string
  filename: string
  content: string
  messageId: string
  /** Authentication-Results values, topmost first, as the receiving server put them on top. */
  authenticationResults?: string[]
}) {
  const built = await new MailComposer({
    from: options.from,
    to: 'finance@merchant.example',
    subject: 'Account statement',
    text: 'Your statement is attached.',
    messageId: options.messageId,
    date: new Date(),
    attachments: [
      { filename: options.filename, content: options.content, contentType: 'text/csv' },
    ],
  })
    .compile()
    .build()
  const received = (options.authenticationResults ?? [])
    .map((value) => `Authentication-Results: ${value}\r\n`)
    .join('')
  return Buffer.concat([Buffer.from(received), built])
}

async function paymentStatus(order: PaymentOrder) {
  return (await PaymentOrder.findOrFail(order.id)).status
}

test.group('statement fetch: SFTP (OpenSSH sftp-server)', (group) => {
  let server: SftpServer
  group.tap((t) => t.skip(Boolean(SFTP_MISSING), SFTP_MISSING ?? undefined))
  group.setup(async () => {
    if (SFTP_MISSING) return
    server = await startSftpServer()
  })
  group.teardown(async () => {
    await server?.stop()
  })
  group.each.setup(async () => {
    await resetDatabase()
    if (server) {
      for (const name of await readdir(server.dropDir)) await unlink(join(server.dropDir, name))
    }
  })
  group.each.timeout(60_000)

  test('a file dropped in the directory is imported once, fetched twice and by two fetches at once, and pays its payment', async ({
    assert,
  }) => {
    const { account, order } = await accountWithOpenPayment()
    // Two sources on one directory: two workers fetching the same file, without a shared lease.
    const first = await addSftpSource(server, account.id)
    const second = await addSftpSource(server, account.id)
    const statement = statementPaying(order)
    const path = await server.drop('STMT_KBANK_20261121.csv', statement)
    // Not a statement: the pattern leaves it.
    await server.drop('README.txt', 'not a statement')

    const results = await Promise.all([
      fetchStatements(first, { force: true }),
      fetchStatements(first, { force: true }),
      fetchStatements(second, { force: true }),
    ])
    // The same source twice at once: one of the two waits for the next round.
    assert.sameMembers(
      results.slice(0, 2).map((result) => result.status),
      ['ok', 'busy']
    )
    assert.equal(results[2].status, 'ok')
    const outcomes = results.flatMap((result) => result.files.map((file) => file.outcome))
    assert.equal(outcomes.filter((outcome) => outcome === 'imported').length, 1)

    // Fetched again by both: nothing more.
    for (const id of [first, second, first]) {
      assert.equal((await fetchStatements(id, { force: true })).status, 'ok')
    }
    const imports = await importsOf(account.id)
    assert.lengthOf(imports, 1)
    assert.equal(imports[0].origin, 'sftp')
    assert.equal(imports[0].origin_detail, path)
    assert.equal(imports[0].actor, 'system')
    const files = await fetchedFilesOf(account.id)
    assert.lengthOf(files, 1)
    assert.equal(files[0].status, 'imported')
    assert.equal(Number(files[0].import_id), Number(imports[0].id))
    assert.equal(files[0].remote_name, path)
    // Kept as it came.
    const kept = Buffer.from(await drive.use().getBytes(files[0].storage_key))
    assert.equal(kept.toString(), statement)
    assert.equal(files[0].sha256, createHash('sha256').update(kept).digest('hex'))
    // Never removed from the bank's server unless the source says so.
    assert.include(await readdir(server.dropDir), 'STMT_KBANK_20261121.csv')

    // Reconciled without anyone touching the file.
    assert.equal(await paymentStatus(order), 'unsettled_paid')
    const source = (await findSource(first))!
    assert.equal(source.consecutive_failures, 0)
    assert.isNotNull(source.last_success_at)
    assert.isNull(source.last_error)
  })

  test('two BullMQ workers fetching the same file import it once', async ({ assert }) => {
    const { account, order } = await accountWithOpenPayment()
    const first = await addSftpSource(server, account.id)
    const second = await addSftpSource(server, account.id)
    await server.drop('statement.csv', statementPaying(order))
    // Only this test's jobs: earlier files of this process leave theirs queued.
    await queue('reconciliation').obliterate({ force: true })
    const stops = [startTestWorker('reconciliation'), startTestWorker('reconciliation')]
    try {
      await Promise.all(
        [first, second, first, second].map((sourceId) =>
          dispatch('fetchStatementSource', { sourceId })
        )
      )
      const settled = await until(async () => {
        const files = await fetchedFilesOf(account.id)
        const leases = await db
          .from('statement_sources')
          .whereNotNull('fetch_lease_until')
          .count('* as total')
        return files.length === 1 && files[0].status === 'imported' && Number(leases[0].total) === 0
      }, 20_000)
      assert.isTrue(settled)
    } finally {
      for (const stop of stops) await stop()
    }
    // A source whose fetch found the file under the other's claim (busy), or
    // whose jobs all met its own lease, remembers it at its next fetch.
    for (const id of [first, second]) await fetchStatements(id, { force: true })
    const remembered = await db.from('statement_remote_files').count('* as total')
    assert.equal(Number(remembered[0].total), 2)
    assert.lengthOf(await importsOf(account.id), 1)
    assert.equal(await paymentStatus(order), 'unsettled_paid')
  })

  test('a fetch that died between its claim and the import is taken over, from the kept copy', async ({
    assert,
  }) => {
    const { account, order } = await accountWithOpenPayment()
    const sourceId = await addSftpSource(server, account.id)
    const content = statementPaying(order)
    const sha256 = createHash('sha256').update(content).digest('hex')
    const storageKey = `statements/${account.id}/${sha256}.csv`
    await drive.use().put(storageKey, Buffer.from(content))
    // What a worker killed after its claim leaves behind: the claim, past its time; the remote file gone.
    await db.table('statement_fetched_files').insert({
      source_id: sourceId,
      deposit_account_id: account.id,
      channel: 'sftp',
      remote_name: `${server.dropDir}/gone.csv`,
      file_name: 'gone.csv',
      sha256,
      size: Buffer.byteLength(content),
      storage_key: storageKey,
      status: 'claimed',
      claim_token: 'a-worker-that-died',
      claimed_until: new Date(Date.now() - 1000),
      attempts: 1,
      fetched_at: new Date(Date.now() - 11 * 60_000),
    })
    const result = await fetchStatements(sourceId, { force: true })
    assert.equal(result.status, 'ok')
    assert.deepEqual(
      result.files.map((file) => file.outcome),
      ['imported']
    )
    const [file] = await fetchedFilesOf(account.id)
    assert.equal(file.status, 'imported')
    assert.equal(Number(file.attempts), 2)
    assert.lengthOf(await importsOf(account.id), 1)
    assert.equal(await paymentStatus(order), 'unsettled_paid')

    // The same content dropped again later is the same file: nothing more.
    await server.drop('again.csv', content)
    const again = await fetchStatements(sourceId, { force: true })
    assert.deepEqual(
      again.files.map((entry) => entry.outcome),
      ['known']
    )
    assert.lengthOf(await importsOf(account.id), 1)
  })

  test('a server presenting another host key is refused before authentication: nothing imported, the failure recorded, counted and told once', async ({
    assert,
  }) => {
    const { account, order } = await accountWithOpenPayment()
    const pinned = strangerFingerprint()
    const sourceId = await addSftpSource(server, account.id, { host_key_fingerprint: pinned })
    await server.drop('statement.csv', statementPaying(order))
    const counted = await failureCount(sourceId)

    const result = await fetchStatements(sourceId, { force: true })
    assert.equal(result.status, 'failed')
    assert.include(result.error, 'host key mismatch')
    assert.include(result.error, server.hostKeyFingerprint)
    assert.include(result.error, pinned)
    assert.include(result.error, 'before authentication')
    assert.lengthOf(await fetchedFilesOf(account.id), 0)
    assert.lengthOf(await importsOf(account.id), 0)
    assert.equal(await paymentStatus(order), 'open')

    let source = (await findSource(sourceId))!
    assert.equal(source.consecutive_failures, 1)
    assert.include(source.last_error, 'host key mismatch')
    assert.isNull(source.last_success_at)
    assert.equal(await failureCount(sourceId), counted + 1)
    const told = await alerts('statement_source.fetch_failed')
    assert.lengthOf(told, 1)
    assert.include(told[0].summary, 'host key mismatch')
    assert.equal(told[0].target_id, String(sourceId))
    const audit = await db.from('audit_logs').where('action', 'statement_source.fetch_failed')
    assert.lengthOf(audit, 1)

    // Failing again: counted, not told again (one notice per failure streak).
    assert.equal((await fetchStatements(sourceId, { force: true })).status, 'failed')
    source = (await findSource(sourceId))!
    assert.equal(source.consecutive_failures, 2)
    assert.equal(await failureCount(sourceId), counted + 2)
    assert.lengthOf(await alerts('statement_source.fetch_failed'), 1)
    await readStatementSourceFigures()
    const { statementFetchConsecutiveFailures } = await import('#metrics/registry')
    assert.equal(await gaugeValue(statementFetchConsecutiveFailures, sourceId), 2)

    // The right key pinned: the streak ends, the file comes in.
    await saveStatementSource(
      { id: sourceId, host_key_fingerprint: server.hostKeyFingerprint },
      SETUP_ACTOR
    )
    assert.equal((await fetchStatements(sourceId, { force: true })).status, 'ok')
    source = (await findSource(sourceId))!
    assert.equal(source.consecutive_failures, 0)
    assert.lengthOf(await importsOf(account.id), 1)
    assert.equal(await paymentStatus(order), 'unsettled_paid')
  })

  test('from the shell: statements:source adds a source at once (break-glass), statements:fetch fetches it, statements:sources lists it', async ({
    assert,
  }) => {
    const { account, order } = await accountWithOpenPayment()
    const dir = await mkdtemp(join(tmpdir(), 'gw-key-'))
    const keyFile = join(dir, 'key')
    await writeFile(keyFile, server.privateKey, { mode: 0o600 })
    try {
      const added = await ace(
        'statements:source',
        '--account',
        String(account.id),
        '--kind',
        'sftp',
        '--name',
        'KBank H2H',
        '--host',
        server.host,
        '--port',
        String(server.port),
        '--username',
        server.username,
        '--secret-file',
        keyFile,
        '--host-key',
        server.hostKeyFingerprint,
        '--dir',
        server.dropDir,
        '--due-by',
        '09:00'
      )
      assert.equal(added.code, 0, added.output)
      assert.include(added.output, 'break-glass')
      assert.notInclude(added.output, 'PRIVATE KEY')
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
    const [source] = await db.from('statement_sources')
    assert.equal(source.name, 'KBank H2H')
    assert.lengthOf(await db.from('notifications').where('kind', 'break_glass'), 1)

    await server.drop('statement.csv', statementPaying(order))
    const fetched = await ace('statements:fetch', '--source', String(source.id), '--json')
    assert.equal(fetched.code, 0, fetched.output)
    const result = JSON.parse(fetched.stdout.trim().split('\n').pop()!)
    assert.equal(result.results[0].status, 'ok')
    assert.equal(result.results[0].files[0].outcome, 'imported')
    assert.equal(await paymentStatus(order), 'unsettled_paid')

    const listed = await ace('statements:sources')
    assert.equal(listed.code, 0, listed.output)
    assert.include(listed.output, `${source.id} account ${account.id} sftp "KBank H2H"`)
    assert.include(listed.output, '[ok]')
    assert.notInclude(listed.output, 'PRIVATE KEY')

    const off = await ace('statements:source', String(source.id), '--disable')
    assert.equal(off.code, 0, off.output)
    assert.notInclude(off.output, 'break-glass')
    assert.equal((await findSource(source.id))!.enabled, false)
    assert.equal((await fetchStatements(source.id)).status, 'disabled')
  })

  test("a day's statement missing past its due hour is an alert and one notice that day", async ({
    assert,
  }) => {
    const { account, order } = await accountWithOpenPayment()
    const sourceId = await addSftpSource(server, account.id, { statement_due_by: '09:00' })
    const { dayStart } = gatewayPeriodStarts(new Date())
    const before = new Date(dayStart.getTime() + 8 * 3_600_000 + 59 * 60_000)
    const after = new Date(dayStart.getTime() + 23 * 3_600_000 + 59 * 60_000)

    assert.deepEqual((await checkMissingStatements(before)).missing, [])
    await readStatementSourceFigures(before)
    assert.equal(await gaugeValue(statementMissing, sourceId), 0)

    const late = await checkMissingStatements(after)
    assert.deepEqual(late.missing, [sourceId])
    assert.equal(late.told, 1)
    assert.equal((await checkMissingStatements(after)).told, 0)
    const told = await alerts('statement_source.statement_missing')
    assert.lengthOf(told, 1)
    assert.include(told[0].summary, 'by 09:00')
    await readStatementSourceFigures(after)
    assert.equal(await gaugeValue(statementMissing, sourceId), 1)

    // The day's file arrives: no longer missing.
    await server.drop('statement.csv', statementPaying(order))
    assert.equal((await fetchStatements(sourceId, { force: true })).status, 'ok')
    assert.deepEqual((await checkMissingStatements(after)).missing, [])
    await readStatementSourceFigures(after)
    assert.equal(await gaugeValue(statementMissing, sourceId), 0)
  })

  test("changing a source's key from the back-office waits for a second admin; the key is stored encrypted, never in the request or the audit log", async ({
    assert,
  }) => {
    const { account } = await accountWithOpenPayment()
    const sourceId = await addSftpSource(server, account.id)
    const before = (await findSource(sourceId))!
    const dir = await mkdtemp(join(tmpdir(), 'gw-key-'))
    await exec('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'key')])
    const newKey = await readFile(join(dir, 'key'), 'utf8')
    await rm(dir, { recursive: true, force: true })

    const maker = await signedInOverHttp('maker@gateway.test', 'admin')
    const checker = await signedInOverHttp('checker@gateway.test', 'admin')
    const page = await maker.session.get(`/admin/statement-sources/${sourceId}`)
    assert.equal(page.status, 200)
    assert.notInclude(page.text, before.secret_encrypted)
    assert.notInclude(page.text, 'PRIVATE KEY-----\n')
    const response = await maker.session.post(
      `/admin/statement-sources/${sourceId}`,
      { secret: newKey, comment: 'the bank rotated our key' },
      AdminSession.csrfOf(page)
    )
    assert.equal(response.status, 302)

    // Nothing changed yet.
    let row = await db.from('statement_sources').where('id', sourceId).first()
    assert.equal(row.secret_encrypted, before.secret_encrypted)
    const request = await db
      .from('approval_requests')
      .where('action', 'statement_source.save')
      .where('status', 'pending')
      .firstOrFail()
    const input = typeof request.input === 'string' ? request.input : JSON.stringify(request.input)
    assert.notInclude(input, 'PRIVATE KEY')
    assert.notInclude(input, '"secret"')
    assert.include(input, 'secret_id')
    assert.include(JSON.stringify(request.change_after), 'changed')
    // The staged copy is encrypted too.
    const staged = await db.from('statement_source_secrets').firstOrFail()
    assert.notInclude(staged.secret_encrypted, 'PRIVATE KEY')
    // (The form's text arrives trimmed.)
    assert.equal(decryptSourceSecret(staged.secret_encrypted).trim(), newKey.trim())
    // Every admin is told.
    assert.lengthOf(
      await db
        .from('notifications')
        .where('kind', 'request')
        .where('action', 'statement_source.save'),
      1
    )

    const actorOf = async (email: string): Promise<Actor> => {
      const operator = await Operator.findByOrFail('email', email)
      return { name: operator.actorName, operatorId: operator.id }
    }
    // Never the one who asked.
    const own = await approveRequest(
      { approval_request_id: request.id },
      await actorOf('maker@gateway.test')
    ).then(
      () => null,
      (error: Error) => error
    )
    assert.include(own?.message, 'another operator must approve it')
    await approveRequest(
      { approval_request_id: request.id, comment: 'letter from the bank seen' },
      await actorOf(checker.operator.email)
    )

    row = await db.from('statement_sources').where('id', sourceId).first()
    assert.notEqual(row.secret_encrypted, before.secret_encrypted)
    assert.notInclude(row.secret_encrypted, 'PRIVATE KEY')
    assert.notInclude(row.secret_encrypted, newKey.split('\n')[1])
    assert.equal(decryptSourceSecret(row.secret_encrypted).trim(), newKey.trim())
    assert.lengthOf(await db.from('statement_source_secrets'), 0)
    const audits = await db
      .from('audit_logs')
      .whereIn('action', [
        'statement_source.create',
        'statement_source.update',
        'approval.request',
        'approval.approve',
      ])
    for (const audit of audits) {
      for (const column of ['before_values', 'after_values', 'details', 'comment']) {
        const text =
          typeof audit[column] === 'string' ? audit[column] : JSON.stringify(audit[column])
        assert.notInclude(text ?? '', 'PRIVATE KEY', `${audit.action} ${column}`)
      }
    }
    const update = audits.find((audit) => audit.action === 'statement_source.update')
    assert.include(JSON.stringify(update.after_values), 'changed')

    // The server authorises only the old key: the change is in force.
    const result = await fetchStatements(sourceId, { force: true })
    assert.equal(result.status, 'failed')
    assert.include(result.error, 'authentication')
  })
})

test.group('statement fetch: IMAP (Dovecot)', (group) => {
  let server: ImapServer
  group.tap((t) => t.skip(Boolean(IMAP_MISSING), IMAP_MISSING ?? undefined))
  const trustedBefore = reconciliationConfig.statementMailAuthservIds
  group.setup(async () => {
    if (IMAP_MISSING) return
    server = await startImapServer()
    reconciliationConfig.statementMailAuthservIds = [MAIL_SERVER]
  })
  group.teardown(async () => {
    reconciliationConfig.statementMailAuthservIds = trustedBefore
    await server?.stop()
  })
  group.each.setup(() => resetDatabase())
  group.each.timeout(60_000)

  test("a mail with a statement attachment from the bank is imported once, fetched twice and by two fetches at once; another sender's is passed over", async ({
    assert,
  }) => {
    const { account, order } = await accountWithOpenPayment()
    const mailbox = `Statements${Date.now()}`
    // Not from the bank (its name only looks like it): never read.
    await server.append(
      await mail({
        from: `"KBank" <${BANK}.attacker.example>`,
        filename: 'forged.csv',
        content: statementPaying(order, ' FORGED'),
        messageId: `<forged-${Date.now()}@attacker.example>`,
      }),
      mailbox
    )
    const messageId = `<stmt-${Date.now()}@kasikornbank.example>`
    await server.append(
      await mail({
        from: `"K-ElectronicDocument" <${BANK}>`,
        filename: 'STATEMENT_20261121.csv',
        content: statementPaying(order),
        messageId,
        authenticationResults: [`${MAIL_SERVER}; dkim=pass header.d=kasikornbank.example`],
      }),
      mailbox
    )
    // One source pins the server's certificate too; the other trusts its CA alone.
    const first = await addImapSource(server, account.id, mailbox, {
      host_key_fingerprint: server.certificateFingerprint,
    })
    const second = await addImapSource(server, account.id, mailbox)

    const results = await Promise.all([
      fetchStatements(first, { force: true }),
      fetchStatements(first, { force: true }),
      fetchStatements(second, { force: true }),
    ])
    assert.sameMembers(
      results.slice(0, 2).map((result) => result.status),
      ['ok', 'busy']
    )
    assert.equal(results[2].status, 'ok', results[2].error ?? '')
    for (const id of [first, second]) {
      assert.equal((await fetchStatements(id, { force: true })).status, 'ok')
    }

    const imports = await importsOf(account.id)
    assert.lengthOf(imports, 1)
    assert.equal(imports[0].origin, 'imap')
    assert.equal(imports[0].origin_detail, `${messageId} STATEMENT_20261121.csv`)
    assert.equal(imports[0].file_name, 'STATEMENT_20261121.csv')
    assert.equal(imports[0].status, 'confirmed')
    const files = await fetchedFilesOf(account.id)
    assert.lengthOf(files, 1)
    assert.equal(files[0].remote_name, messageId)
    assert.notInclude(
      (await db.from('statement_lines').select('description'))
        .map((line) => line.description)
        .join(),
      'FORGED'
    )
    assert.equal(await paymentStatus(order), 'unsettled_paid')
    // The last UID read is kept: the next fetch reads only newer mail.
    const source = (await findSource(first))!
    assert.equal(Number(source.imap_last_uid), 2)
    assert.isNotNull(source.imap_uid_validity)
  })

  test("a mail the receiving server does not vouch for is a person's file: held for a second operator above the threshold", async ({
    assert,
  }) => {
    const { who, account, order } = await accountWithOpenPayment()
    const second = await createPayment(who, '101.00')
    const third = await createPayment(who, '102.00')
    // Every payment here is above the platform's four-eyes threshold.
    await db.from('platforms').update({ four_eyes_threshold: 5_000 })
    const mailbox = `Statements${Date.now()}`
    const sent = [
      // Another server's verdict, however good, is not ours to trust.
      {
        order,
        filename: 'OTHER_SERVER.csv',
        results: ['mx.attacker.example; dkim=pass header.d=kasikornbank.example'],
      },
      // Our server's verdict is the topmost one: a pass written below it by the sender counts for nothing.
      {
        order: second,
        filename: 'FAILED.csv',
        results: [
          `${MAIL_SERVER}; dkim=fail (signature did not verify) header.d=kasikornbank.example`,
          `${MAIL_SERVER}; dkim=pass header.d=kasikornbank.example`,
        ],
      },
      // Vouched for: folded, with comments, signed by the From address's domain.
      {
        order: third,
        filename: 'VOUCHED.csv',
        results: [
          `${MAIL_SERVER} 1; spf=pass smtp.mailfrom=kasikornbank.example;\r\n\tdkim=pass (2048-bit key; unprotected) header.d=kasikornbank.example header.s=k1`,
        ],
      },
    ]
    for (const [index, item] of sent.entries()) {
      await server.append(
        await mail({
          from: `"K-ElectronicDocument" <${BANK}>`,
          filename: item.filename,
          content: statementPaying(item.order),
          messageId: `<vouch-${index}-${Date.now()}@kasikornbank.example>`,
          authenticationResults: item.results,
        }),
        mailbox
      )
    }
    const source = await addImapSource(server, account.id, mailbox)
    const result = await fetchStatements(source, { force: true })
    assert.equal(result.status, 'ok', result.error ?? '')

    const imports = await importsOf(account.id)
    assert.deepEqual(
      imports.map((row) => [row.file_name, row.status]),
      [
        ['OTHER_SERVER.csv', 'awaiting_confirmation'],
        ['FAILED.csv', 'awaiting_confirmation'],
        ['VOUCHED.csv', 'confirmed'],
      ]
    )
    const requests = await db
      .from('approval_requests')
      .where('action', 'statement.confirm')
      .where('status', 'pending')
    assert.lengthOf(requests, 2)
    assert.equal(await paymentStatus(order), 'open')
    assert.equal(await paymentStatus(second), 'open')
    assert.equal(await paymentStatus(third), 'unsettled_paid')
    const audits = await db.from('audit_logs').where('action', 'statement.import').orderBy('id')
    const details = audits.map((audit) =>
      typeof audit.details === 'string' ? JSON.parse(audit.details) : audit.details
    )
    assert.deepEqual(
      details.map((detail) => detail.vouched_by),
      [null, null, 'dkim=pass header.d=kasikornbank.example']
    )
  })

  test('a certificate no CA vouches for, or another than the pinned one, refuses the connection', async ({
    assert,
  }) => {
    const { account } = await accountWithOpenPayment()
    const mailbox = `Statements${Date.now()}`
    const untrusted = await addImapSource(server, account.id, mailbox, { tls_ca: 'none' })
    const mispinned = await addImapSource(server, account.id, mailbox, {
      host_key_fingerprint: 'AB:'.repeat(31) + 'AB',
    })
    const refused = await fetchStatements(untrusted, { force: true })
    assert.equal(refused.status, 'failed')
    assert.match(refused.error!, /self[- ]signed|certificate/i)
    const pinned = await fetchStatements(mispinned, { force: true })
    assert.equal(pinned.status, 'failed')
    assert.include(pinned.error, 'certificate fingerprint mismatch')
    assert.lengthOf(await alerts('statement_source.fetch_failed'), 2)
    assert.lengthOf(await fetchedFilesOf(account.id), 0)
  })
})
