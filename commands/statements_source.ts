import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'
import { readFile } from 'node:fs/promises'

/**
 * Ace adapter of the save-statement-source action: adds a source (no id) or
 * changes one (its id); only the options given change, "none" clears an
 * optional one. The secret is read from a file (--secret-file: the SSH
 * private key, or a file holding the IMAP password), never from the command
 * line (which other users of the server can see). From the server the
 * change applies at once, recorded as a break-glass use and notified to
 * every admin; --disable only stops fetching.
 */
export default class StatementsSource extends BaseCommand {
  static commandName = 'statements:source'
  static description =
    'Add a statement source (SFTP or IMAP) to a deposit account, or change one (applies at once: break-glass)'
  static options: CommandOptions = { startApp: true }

  @args.string({ description: 'Source id to change; left out, a new source', required: false })
  declare id?: string

  @flags.number({ description: 'Deposit account whose statements it fetches' })
  declare account?: number

  @flags.string({ description: 'sftp or imap (a new source)' })
  declare kind?: string

  @flags.string({ description: 'A name, e.g. "KBank H2H"' })
  declare name?: string

  @flags.string({ description: "The bank's server" })
  declare host?: string

  @flags.number({ description: 'Port (default 22, 993 or 143)' })
  declare port?: number

  @flags.string({ description: 'User' })
  declare username?: string

  @flags.string({ description: 'File holding the SSH private key or the IMAP password' })
  declare secretFile?: string

  @flags.string({
    description:
      'SFTP: the host key "SHA256:…" (ssh-keyscan -p P host | ssh-keygen -lf -); IMAP: an optional certificate SHA-256 fingerprint',
  })
  declare hostKey?: string

  @flags.string({ description: 'IMAP: implicit or starttls' })
  declare tls?: string

  @flags.string({ description: "IMAP: file of the bank's CA certificate (PEM), or none" })
  declare caFile?: string

  @flags.string({ description: 'SFTP: remote directory' })
  declare dir?: string

  @flags.string({ description: 'File name pattern, e.g. "*.csv"' })
  declare pattern?: string

  @flags.boolean({ description: 'SFTP: remove remote files once imported (default: never)' })
  declare removeAfterImport?: boolean

  @flags.string({ description: 'IMAP: mailbox (default INBOX)' })
  declare mailbox?: string

  @flags.string({ description: "IMAP: the bank's sender address" })
  declare sender?: string

  @flags.string({ description: 'Layout name, or none (recognised from the file)' })
  declare layout?: string

  @flags.number({ description: 'Fetch every N minutes (default 15)' })
  declare every?: number

  @flags.string({ description: "HH:mm GMT+7 the day's statement is due by, or none" })
  declare dueBy?: string

  @flags.boolean({ description: 'Switch the source on' })
  declare enable?: boolean

  @flags.boolean({ description: 'Switch the source off' })
  declare disable?: boolean

  @flags.string({ description: 'Why (kept in the audit log)' })
  declare comment?: string

  async run() {
    const { saveStatementSource } = await import('#reconciliation/fetch/save_statement_source')
    const { runAction } = await import('#core/cli')
    const { cliActor } = await import('#core/actor')
    if (this.enable && this.disable) {
      this.logger.error('Give --enable or --disable, not both')
      this.exitCode = 1
      return
    }
    let secret: string | undefined
    let ca: string | undefined
    try {
      if (this.secretFile) {
        secret = await readFile(this.secretFile, 'utf8')
        // A password file's trailing newline is not part of the password; a key keeps its own.
        if (!secret.includes('PRIVATE KEY')) secret = secret.replace(/\r?\n$/, '')
      }
      if (this.caFile) ca = this.caFile === 'none' ? 'none' : await readFile(this.caFile, 'utf8')
    } catch (error) {
      this.logger.error(
        `Cannot read ${this.secretFile ?? this.caFile}: ${(error as Error).message}`
      )
      this.exitCode = 1
      return
    }
    await runAction(this, async () => {
      const result = await saveStatementSource(
        {
          id: this.id,
          deposit_account_id: this.account,
          kind: this.kind,
          name: this.name,
          host: this.host,
          port: this.port,
          username: this.username,
          secret,
          host_key_fingerprint: this.hostKey,
          imap_tls: this.tls,
          tls_ca: ca,
          remote_dir: this.dir,
          file_pattern: this.pattern,
          remove_after_import: this.removeAfterImport,
          mailbox: this.mailbox,
          sender: this.sender,
          layout: this.layout,
          every_minutes: this.every,
          statement_due_by: this.dueBy,
          enabled: this.disable ? false : this.enable,
          comment: this.comment,
        },
        cliActor()
      )
      if (result.changed.length === 0)
        this.logger.info(`Statement source ${result.id}: nothing changed`)
      else this.logger.success(`Statement source ${result.id}: ${result.changed.join(', ')}`)
      if (result.breakGlass) {
        this.logger.warning(
          'Recorded as a break-glass use (changed from the server, without a second admin): every admin is notified'
        )
      }
    })
  }
}
