import { createHash } from 'node:crypto'
import vine from '@vinejs/vine'
import db from '@adonisjs/lucid/services/db'
import DepositAccount from '#payments/models/deposit_account'
import {
  detectLayout,
  LAYOUTS,
  parseStatement,
  type StatementLayout,
} from '#reconciliation/layouts/index'
import { StatementFormatError } from '#reconciliation/statement_line'
import { refuseFutureLines } from '#reconciliation/future_statement_lines'
import {
  fromTheBank,
  matchImport,
  storeStatement,
  type ImportSummary,
  type StatementOrigin,
} from '#reconciliation/statements'
import { recordAudit } from '#core/audit'
import { scheduleSlipRecheck } from '#slips/actions/recheck_slips'
import { withDeadlockRetry } from '#core/db_retry'
import { ActionError, validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import type ApprovalRequest from '#approvals/models/approval_request'
import { holdAboveThreshold } from '#reconciliation/statement_confirmation'

export const importStatementValidator = vine.compile(
  vine.object({
    deposit_account_id: vine.number().withoutDecimals().min(1),
    layout: vine.enum(Object.keys(LAYOUTS) as StatementLayout[]).optional(),
    file_name: vine.string().trim().minLength(1).maxLength(255),
    /** The statement file's text (CSV); bytes are given apart (see importStatement). */
    content: vine.string(),
  })
)

const MESSAGES = {
  'layout.enum': `layout must be one of: ${Object.keys(LAYOUTS).join(', ')}`,
  'content.required': 'content is required: the file is empty',
}

/**
 * Imports a deposit account's statement file, all or nothing: the
 * `statement_imports` row, the new lines and the audit row commit together
 * (importing a file again adds no line), and a bad line met while the file
 * is parsed (as a stream, its lines stored as they come) rolls all of it
 * back; so does a line dated in the future (future_statement_lines.ts).
 * Errors name the file's own line (the header is line 1). Matching then
 * runs in batches, as statements.ts describes; then the account's pending
 * slips are checked again (a job).
 */
export async function importStatement(
  input: Record<string, unknown>,
  actor: Actor,
  options: {
    /** Where the file came from; a person's upload when left out. */
    origin?: StatementOrigin
  } = {}
): Promise<ImportSummary & { confirmation: ApprovalRequest | null }> {
  // The file as the bank wrote it: bytes, decoded here (a Buffer), or text already.
  const bytes = Buffer.isBuffer(input.content) ? input.content : null
  const data = await validateInput(
    importStatementValidator,
    bytes ? { ...input, content: bytes.toString('utf8') } : input,
    MESSAGES
  )
  const layout = data.layout ?? detectLayout(data.content) ?? 'neutral'
  // Read, not locked: payment creation locks the account to reserve its slots
  // and must not wait for an import.
  const account = await DepositAccount.find(data.deposit_account_id)
  if (!account) {
    throw ActionError.notFound(
      'deposit_account_id',
      `No deposit account ${data.deposit_account_id}`
    )
  }
  const fileSha256 = createHash('sha256')
    .update(bytes ?? data.content)
    .digest('hex')
  // The import's own time: a line dated after it (beyond the clock skew) refuses the file.
  const importedAt = new Date()

  // Importers of overlapping files insert the same fingerprints: InnoDB may
  // pick one as a deadlock victim, and its transaction is run again whole
  // (the file parsed again from its start).
  let stored
  try {
    stored = await withDeadlockRetry(() =>
      db.transaction(async (trx) => {
        let confirmation = null as ApprovalRequest | null
        const result = await storeStatement(trx, {
          account,
          layout,
          fileName: data.file_name,
          fileSha256,
          origin: options.origin,
          lines: refuseFutureLines(parseStatement(layout, data.content), importedAt),
          actor,
          judge: true,
          // One person's file: above a platform's threshold, a second operator
          // confirms it. The bank's own channel needs no second person.
          hold: async (client, importId) => {
            if (fromTheBank(options.origin)) return false
            confirmation = await holdAboveThreshold(client, importId, data.file_name, actor)
            return confirmation !== null
          },
        })
        await recordAudit(trx, actor, {
          action: 'statement.import',
          target: { type: 'deposit_account', id: String(account.id) },
          details: {
            import_id: result.importId,
            file: data.file_name,
            file_sha256: fileSha256,
            layout,
            origin: options.origin?.channel ?? 'upload',
            origin_detail: options.origin?.detail ?? null,
            lines: result.lines,
            new_lines: result.newLines,
            awaiting_confirmation: result.held,
            approval_request_id: confirmation?.id ?? null,
          },
        })
        return { ...result, confirmation }
      })
    )
  } catch (error) {
    if (!(error instanceof StatementFormatError)) throw error
    throw ActionError.field('content', `Nothing imported: ${error.message}`)
  }
  if (stored.held) {
    // Nothing is matched or posted until a second operator confirms the file.
    return {
      importId: stored.importId,
      lines: stored.lines,
      newLines: stored.newLines,
      results: { matched: 0, unmatched: 0, late: 0, skipped: 0 },
      confirmation: stored.confirmation,
    }
  }
  const results = await matchImport(account.id, stored.importId)
  // The lines given their verdict as they were stored.
  results.unmatched += stored.judged.unmatched
  results.late += stored.judged.late
  // New lines may establish what pending slips of this account claim.
  if (stored.newLines > 0) await scheduleSlipRecheck(account.id)
  return {
    importId: stored.importId,
    lines: stored.lines,
    newLines: stored.newLines,
    results,
    confirmation: null,
  }
}
