import SftpClient from 'ssh2-sftp-client'
import { posix } from 'node:path'
import {
  ChannelError,
  describeError,
  namePattern,
  normalizeSshFingerprint,
  sameFingerprint,
  sshFingerprint,
} from '#reconciliation/fetch/channel'
import type { StatementSource } from '#reconciliation/fetch/statement_sources'

/** How long the connection (TCP, key exchange, authentication) may take. */
const READY_TIMEOUT_MS = 15_000

export interface SftpEntry {
  /** The remote path: directory and name. */
  path: string
  name: string
  size: number
  /** Modification time, milliseconds since the epoch (the server's). */
  modifiedAt: number
}

export interface SftpSession {
  /** Regular files of the source's directory whose name matches its pattern, oldest first. */
  list(): Promise<SftpEntry[]>
  download(entry: SftpEntry): Promise<Buffer>
  /** Whether the file is still as listed (a file the bank is still writing is left for later). */
  unchanged(entry: SftpEntry): Promise<boolean>
  remove(entry: SftpEntry): Promise<void>
  end(): Promise<void>
}

/**
 * Opens an SFTP session to the bank's host-to-host server: key
 * authentication only (the source's private key; no password, no agent, no
 * keyboard-interactive), and the server's host key compared with the pinned
 * SHA256 fingerprint during the key exchange, before any authentication:
 * another key refuses the connection, naming the key it saw.
 */
export async function openSftp(
  source: Pick<
    StatementSource,
    'host' | 'port' | 'username' | 'host_key_fingerprint' | 'remote_dir' | 'file_pattern'
  >,
  privateKey: string
): Promise<SftpSession> {
  const pinned = source.host_key_fingerprint
    ? normalizeSshFingerprint(source.host_key_fingerprint)
    : ''
  if (!pinned) throw new ChannelError('no host key pinned: the connection is refused')
  let seen: string | null = null
  const client = new SftpClient('statement-source')
  try {
    await client.connect({
      host: source.host,
      port: source.port,
      username: source.username,
      privateKey,
      tryKeyboard: false,
      readyTimeout: READY_TIMEOUT_MS,
      keepaliveInterval: 10_000,
      hostVerifier: (key: Buffer) => {
        seen = sshFingerprint(key)
        return sameFingerprint(seen, pinned)
      },
    })
  } catch (error) {
    await client.end().catch(() => {})
    if (seen !== null && !sameFingerprint(seen, pinned)) {
      throw new ChannelError(
        `host key mismatch: ${source.host}:${source.port} presented ${seen}, pinned ${pinned}; connection refused before authentication`
      )
    }
    throw new ChannelError(
      `SFTP connection to ${source.host}:${source.port} as ${source.username} failed: ${describeError(error)}`,
      { cause: error }
    )
  }

  const directory = source.remote_dir || '.'
  const matches = namePattern(source.file_pattern || '*.csv')
  const failed = (what: string) => (error: unknown) => {
    throw new ChannelError(`SFTP ${what} failed: ${describeError(error)}`, { cause: error })
  }
  return {
    async list() {
      const entries = await client.list(directory).catch(failed(`listing ${directory}`))
      return entries
        .filter((entry) => entry.type === '-' && matches(entry.name))
        .map((entry) => ({
          path: posix.join(directory, entry.name),
          name: entry.name,
          size: Number(entry.size),
          modifiedAt: Number(entry.modifyTime),
        }))
        .sort((a, b) => a.modifiedAt - b.modifiedAt || a.name.localeCompare(b.name))
    },
    async download(entry) {
      const content = await client.get(entry.path).catch(failed(`reading ${entry.path}`))
      if (!Buffer.isBuffer(content))
        throw new ChannelError(`SFTP reading ${entry.path} gave no data`)
      return content
    },
    async unchanged(entry) {
      const stats = await client.stat(entry.path).catch(failed(`checking ${entry.path}`))
      return Number(stats.size) === entry.size && Number(stats.modifyTime) === entry.modifiedAt
    },
    async remove(entry) {
      await client.delete(entry.path).catch(failed(`removing ${entry.path}`))
    },
    async end() {
      await client.end().catch(() => {})
    },
  }
}
