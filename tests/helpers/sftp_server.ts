import { spawn, execFile, type ChildProcess } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { closedPort } from '#tests/helpers/ports'

const exec = promisify(execFile)

export const SSHD = '/usr/sbin/sshd'
export const SFTP_SERVER = '/usr/lib/openssh/sftp-server'

/** Why the SFTP tests cannot run on this machine, or null when they can. */
export function sftpUnavailable() {
  if (!existsSync(SSHD) || !existsSync(SFTP_SERVER)) {
    return `Debian's OpenSSH server is not installed (${SSHD}, ${SFTP_SERVER}): run bin/bank_channel_deps.sh`
  }
  if (process.getuid?.() !== 0 && !existsSync('/run/sshd')) {
    return 'sshd needs /run/sshd (its privilege-separation directory): create it as root, or run as root'
  }
  return null
}

export interface SftpServer {
  host: string
  port: number
  username: string
  /** The client key the server authorises (OpenSSH private key, no passphrase). */
  privateKey: string
  /** The server's host key as OpenSSH prints it: "SHA256:…". */
  hostKeyFingerprint: string
  /** The directory the bank drops statements in (absolute: the SFTP user is the machine's). */
  dropDir: string
  /** Writes a file into the drop directory, dated a minute ago (a file the bank finished writing). */
  drop(name: string, content: string | Buffer): Promise<string>
  stop(): Promise<void>
}

/** The OpenSSH fingerprint of a public key line ("ssh-ed25519 AAAA… comment"). */
function fingerprintOf(publicKeyLine: string) {
  const blob = Buffer.from(publicKeyLine.trim().split(/\s+/)[1], 'base64')
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`
}

/** A fingerprint of no key at all: a pin that no server matches. */
export function strangerFingerprint() {
  return `SHA256:${randomBytes(32).toString('base64').replace(/=+$/, '')}`
}

async function keyPair(path: string, comment: string) {
  await exec('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', path])
  return {
    privateKey: await readFile(path, 'utf8'),
    publicKey: await readFile(`${path}.pub`, 'utf8'),
  }
}

/** Waits for sshd's "Server listening" line, or its death (a port taken meanwhile). */
function listening(child: ChildProcess, timeoutMs = 10_000) {
  return new Promise<boolean>((resolve) => {
    let output = ''
    const timer = setTimeout(() => finish(false), timeoutMs)
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      if (/Server listening on/.test(output)) finish(true)
    }
    const onExit = () => finish(false)
    function finish(ok: boolean) {
      clearTimeout(timer)
      child.stderr?.off('data', onData)
      child.off('exit', onExit)
      resolve(ok)
    }
    child.stderr?.on('data', onData)
    child.once('exit', onExit)
  })
}

/**
 * Debian's OpenSSH server started by the test process: `sshd -D -e` with a
 * configuration of its own in a temporary directory, a generated ed25519
 * host key, one authorised client key (key authentication only), and
 * Debian's sftp-server as the SFTP subsystem, listening on 127.0.0.1 on a
 * port chosen here (another one if it was taken meanwhile). It logs in as
 * the user running the tests (root in CI: `PermitRootLogin
 * prohibit-password`); `StrictModes no` because the files live in /tmp.
 */
export async function startSftpServer(): Promise<SftpServer> {
  const reason = sftpUnavailable()
  if (reason) throw new Error(reason)
  const dir = await mkdtemp(join(tmpdir(), 'gw-sftp-'))
  const dropDir = join(dir, 'drop')
  await mkdir(dropDir)
  if (process.getuid?.() === 0) await mkdir('/run/sshd', { recursive: true, mode: 0o755 })
  const host = await keyPair(join(dir, 'host_key'), 'test-sftp-host')
  const client = await keyPair(join(dir, 'client_key'), 'gateway-fetch')
  await writeFile(join(dir, 'authorized_keys'), client.publicKey, { mode: 0o600 })

  for (let attempt = 1; ; attempt++) {
    const port = await closedPort()
    const config = join(dir, 'sshd_config')
    await writeFile(
      config,
      [
        `HostKey ${join(dir, 'host_key')}`,
        'ListenAddress 127.0.0.1',
        `Port ${port}`,
        `PidFile ${join(dir, 'sshd.pid')}`,
        `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
        'PubkeyAuthentication yes',
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'PermitRootLogin prohibit-password',
        'StrictModes no',
        'UsePAM no',
        `Subsystem sftp ${SFTP_SERVER}`,
        'AllowTcpForwarding no',
        'X11Forwarding no',
        'PrintMotd no',
        'LogLevel INFO',
        '',
      ].join('\n')
    )
    const child = spawn(SSHD, ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] })
    if (await listening(child)) {
      child.stderr?.resume()
      return {
        host: '127.0.0.1',
        port,
        username: userInfo().username,
        privateKey: client.privateKey,
        hostKeyFingerprint: fingerprintOf(host.publicKey),
        dropDir,
        async drop(name, content) {
          const path = join(dropDir, name)
          await writeFile(path, content)
          const aMinuteAgo = new Date(Date.now() - 60_000)
          await utimes(path, aMinuteAgo, aMinuteAgo)
          return path
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
    child.kill('SIGKILL')
    if (attempt >= 5) {
      await rm(dir, { recursive: true, force: true })
      throw new Error('sshd did not start listening (5 ports tried)')
    }
  }
}
