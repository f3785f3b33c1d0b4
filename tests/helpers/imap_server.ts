import { spawn, type ChildProcess } from 'node:child_process'
import { X509Certificate } from 'node:crypto'
import { existsSync } from 'node:fs'
import { chmod, chown, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'
import { ImapFlow } from 'imapflow'
import { generateSelfSignedCertificate } from '#core/tls_certificate'
import { closedPort } from '#tests/helpers/ports'

export const DOVECOT = '/usr/sbin/dovecot'

/** Why the IMAP tests cannot run on this machine, or null when they can. */
export function imapUnavailable() {
  if (!existsSync(DOVECOT)) {
    return `Dovecot's IMAP server is not installed (${DOVECOT}): run bin/bank_channel_deps.sh`
  }
  return null
}

export interface ImapServer {
  host: string
  port: number
  username: string
  password: string
  /** The server's self-signed certificate (PEM): the CA a source trusts for it. */
  certificate: string
  /** Its SHA-256 fingerprint, "AB:CD:…". */
  certificateFingerprint: string
  /** Puts a whole RFC 822 message in the mailbox (IMAP APPEND, as a mail server delivers). */
  append(message: string | Buffer, mailbox?: string): Promise<void>
  stop(): Promise<void>
}

/** The uid and gid of a system user from /etc/passwd, or null. */
async function systemUser(name: string) {
  const line = (await readFile('/etc/passwd', 'utf8'))
    .split('\n')
    .find((entry) => entry.startsWith(`${name}:`))
  if (!line) return null
  const [, , uid, gid] = line.split(':')
  return { name, uid: Number(uid), gid: Number(gid) }
}

/** Resolves once something accepts TLS and IMAP on the port, false when the server died first. */
async function answering(child: ChildProcess, options: ConstructorParameters<typeof ImapFlow>[0]) {
  const deadline = Date.now() + 15_000
  while (Date.now() < deadline && child.exitCode === null) {
    const client = new ImapFlow({ ...options, logger: false })
    client.on('error', () => {})
    try {
      await client.connect()
      await client.logout()
      return true
    } catch {
      client.close()
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  return false
}

/**
 * Dovecot started by the test process: `dovecot -F -c <config>` in a
 * temporary directory (its own base_dir, state and log), IMAP over
 * implicit TLS on 127.0.0.1 with a generated self-signed certificate, one
 * passwd-file user whose maildir belongs to a system user (`mail` when the
 * tests run as root; otherwise the current user), on a port chosen here
 * (another one if it was taken meanwhile).
 */
export async function startImapServer(): Promise<ImapServer> {
  const reason = imapUnavailable()
  if (reason) throw new Error(reason)
  const dir = await mkdtemp(join(tmpdir(), 'gw-imap-'))
  await chmod(dir, 0o755)
  const root = process.getuid?.() === 0
  const owner = root
    ? ((await systemUser('mail')) ?? (await systemUser('nobody')))!
    : { name: userInfo().username, uid: userInfo().uid, gid: userInfo().gid }
  const loginUser = root ? ((await systemUser('dovenull')) ?? owner).name : owner.name
  const internalUser = root ? ((await systemUser('dovecot')) ?? owner).name : owner.name
  const mailRoot = join(dir, 'mail')
  for (const sub of ['mail', 'run', 'state']) await mkdir(join(dir, sub))
  if (root) await chown(mailRoot, owner.uid, owner.gid)

  const { cert, key } = await generateSelfSignedCertificate()
  await writeFile(join(dir, 'cert.pem'), cert)
  await writeFile(join(dir, 'key.pem'), key, { mode: 0o600 })
  const username = 'statements'
  const password = `pw-${Math.random().toString(36).slice(2)}`
  await writeFile(
    join(dir, 'passwd'),
    `${username}:{PLAIN}${password}:${owner.uid}:${owner.gid}::${join(mailRoot, username)}\n`,
    { mode: 0o644 }
  )

  for (let attempt = 1; ; attempt++) {
    const port = await closedPort()
    const config = join(dir, 'dovecot.conf')
    await writeFile(
      config,
      `
base_dir = ${join(dir, 'run')}
state_dir = ${join(dir, 'state')}
instance_name = ${dir.split('/').pop()}
protocols = imap
listen = 127.0.0.1
log_path = ${join(dir, 'dovecot.log')}
ssl = required
ssl_cert = <${join(dir, 'cert.pem')}
ssl_key = <${join(dir, 'key.pem')}
ssl_min_protocol = TLSv1.2
disable_plaintext_auth = yes
auth_mechanisms = plain
passdb {
  driver = passwd-file
  args = scheme=PLAIN ${join(dir, 'passwd')}
}
userdb {
  driver = passwd-file
  args = ${join(dir, 'passwd')}
}
mail_location = maildir:~/Maildir
mail_uid = ${owner.uid}
mail_gid = ${owner.gid}
first_valid_uid = ${Math.min(owner.uid, 1)}
first_valid_gid = ${Math.min(owner.gid, 1)}
default_login_user = ${loginUser}
default_internal_user = ${internalUser}
service imap-login {
  chroot =
  inet_listener imap {
    port = 0
  }
  inet_listener imaps {
    address = 127.0.0.1
    port = ${port}
    ssl = yes
  }
}
service anvil {
  chroot =
}
`
    )
    const child = spawn(DOVECOT, ['-F', '-c', config], { stdio: ['ignore', 'ignore', 'ignore'] })
    const options = {
      host: '127.0.0.1',
      port,
      secure: true,
      auth: { user: username, pass: password },
      tls: { ca: cert },
    }
    if (await answering(child, options)) {
      return {
        host: '127.0.0.1',
        port,
        username,
        password,
        certificate: cert,
        certificateFingerprint: new X509Certificate(cert).fingerprint256,
        async append(message, mailbox = 'INBOX') {
          const client = new ImapFlow({ ...options, logger: false })
          client.on('error', () => {})
          await client.connect()
          try {
            if (mailbox !== 'INBOX') await client.mailboxCreate(mailbox).catch(() => {})
            await client.append(mailbox, message)
          } finally {
            await client.logout()
          }
        },
        async stop() {
          if (child.exitCode === null) {
            const exited = new Promise((resolve) => child.once('exit', resolve))
            child.kill('SIGTERM')
            await exited
          }
          await rm(dir, { recursive: true, force: true })
        },
      }
    }
    if (child.exitCode === null) child.kill('SIGKILL')
    if (attempt >= 5) {
      const log = await readFile(join(dir, 'dovecot.log'), 'utf8').catch(() => '')
      await rm(dir, { recursive: true, force: true })
      throw new Error(`dovecot did not start (5 ports tried): ${log.slice(-2000)}`)
    }
  }
}
