import { createHash } from 'node:crypto'
import vine from '@vinejs/vine'
import type { FieldContext } from '@vinejs/vine/types'
import DepositAccount from '#payments/models/deposit_account'
import {
  detectLayout,
  inBatches,
  LAYOUTS,
  parseStatementBatches,
  type StatementLayout,
} from '#reconciliation/layouts/index'
import { StatementFormatError, type ParsedStatementLine } from '#reconciliation/statement_line'
import { definedLayoutLines } from '#reconciliation/layouts/defined_layout'
import {
  definedLayoutChoices,
  findDefinedLayout,
  layoutOfAccount,
  type DefinedLayout,
} from '#reconciliation/statement_layouts'
import { refuseFutureLineBatches } from '#reconciliation/future_statement_lines'
import {
  fromTheBank,
  matchImport,
  storeStatement,
  type ImportSummary,
  type StatementOrigin,
} from '#reconciliation/statements'
import { recordAudit } from '#core/audit'
import { scheduleSlipRecheck } from '#slips/actions/recheck_slips'
import { ActionError, validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import type ApprovalRequest from '#approvals/models/approval_request'
import { holdAboveThreshold } from '#reconciliation/statement_confirmation'
import { inTransaction } from '#core/transaction'

/** A built-in layout's name, or a layout defined in the back-office (any case). */
const layoutName = vine.createRule(
  async (value, _options, field: FieldContext) => {
    const name = String(value).trim().toLowerCase()
    if (name in LAYOUTS) return field.mutate(name, field)
    const defined = await definedLayoutChoices()
    if (defined.some((layout) => layout.name === name)) return field.mutate(name, field)
    const names = [...Object.keys(LAYOUTS), ...defined.map((layout) => layout.name)]
    field.report(`${field.name} must be one of: ${names.join(', ')}`, 'layout', field)
  },
  { isAsync: true }
)

export const importStatementValidator = vine.compile(
  vine.object({
    deposit_account_id: vine.number().withoutDecimals().min(1),
    /** A built-in layout's name, or a layout defined in the back-office. */
    layout: vine.any().use(layoutName()).optional(),
    file_name: vine.string().trim().minLength(1).maxLength(255),
    /** The statement file's text (CSV); bytes are given apart (see importStatement). */
    content: vine.string(),
  })
)

const MESSAGES = {
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
  options: ImportOptions = {}
): Promise<ImportSummary & { confirmation: ApprovalRequest | null }> {
  const { accountId, stored } = await storeFile(input, actor, options)
  // Let go of the file (a large one is megabytes of bytes and text): matching
  // needs its stored lines only. A suspended call keeps its arguments alive.
  input = {}
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
  const results = await matchImport(accountId, stored.importId, { judged: true })
  // The lines given their verdict as they were stored.
  results.unmatched += stored.judged.unmatched
  results.late += stored.judged.late
  // New lines may establish what pending slips of this account claim.
  if (stored.newLines > 0) await scheduleSlipRecheck(accountId)
  return {
    importId: stored.importId,
    lines: stored.lines,
    newLines: stored.newLines,
    results,
    confirmation: null,
  }
}

interface ImportOptions {
  /** Where the file came from; a person's upload when left out. */
  origin?: StatementOrigin
}

/**
 * The file checked, parsed and stored, in the import's transaction: its
 * text and bytes live only while this runs, not while the lines are
 * matched (a large file's text would otherwise be held through matching).
 */
async function storeFile(input: Record<string, unknown>, actor: Actor, options: ImportOptions) {
  // The file as the bank wrote it: bytes, decoded here (a Buffer), or text already.
  const bytes = Buffer.isBuffer(input.content) ? input.content : null
  const data = await validateInput(
    importStatementValidator,
    bytes ? { ...input, content: bytes.toString('utf8') } : input,
    MESSAGES
  )
  // Read, not locked: payment creation locks the account to reserve its slots
  // and must not wait for an import.
  const account = await DepositAccount.find(data.deposit_account_id)
  if (!account) {
    throw ActionError.notFound(
      'deposit_account_id',
      `No deposit account ${data.deposit_account_id}`
    )
  }
  const chosen = await chooseLayout(data.layout, data.content, account.id)
  const layout = chosen.defined ? chosen.defined.label : chosen.builtIn
  // A defined layout reads the file's bytes in its own encoding; the built-in ones read UTF-8.
  const fileBytes = bytes ?? Buffer.from(data.content, 'utf8')
  // In batches: one wait per batch of lines, not per line.
  const parse = (): AsyncIterable<ParsedStatementLine[]> =>
    chosen.defined
      ? inBatches(definedLayoutLines(chosen.defined.definition, fileBytes))
      : parseStatementBatches(chosen.builtIn, data.content)
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
    stored = await inTransaction(async (trx) => {
      let confirmation = null as ApprovalRequest | null
      const result = await storeStatement(trx, {
        account,
        layout,
        fileName: data.file_name,
        fileSha256,
        origin: options.origin,
        lines: refuseFutureLineBatches(parse(), importedAt),
        actor,
        judge: true,
        // One person's file: above a platform's threshold, a second operator
        // confirms it. The bank's own channel, vouched for, needs no second person.
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
          vouched_by: options.origin?.vouchedBy ?? null,
          lines: result.lines,
          new_lines: result.newLines,
          awaiting_confirmation: result.held,
          approval_request_id: confirmation?.id ?? null,
        },
      })
      return { ...result, confirmation }
    })
  } catch (error) {
    if (!(error instanceof StatementFormatError)) throw error
    // Named as the file and the layout that read it; the line and column follow.
    throw ActionError.field(
      'content',
      `Nothing imported: ${data.file_name}, ${layout}: ${error.message}`
    )
  }
  return { accountId: account.id, stored }
}

/**
 * The layout a file is read with (docs/decisions.md, "Layouts: which one
 * reads a file"): the one the import names (built-in, or defined in the
 * back-office: its current version); else a KBiz export recognised by its
 * title; else the layout assigned to the deposit account (its current
 * version); else neutral.
 */
async function chooseLayout(
  named: string | undefined,
  content: string,
  accountId: number
): Promise<
  { builtIn: StatementLayout; defined: null } | { builtIn: null; defined: DefinedLayout }
> {
  if (named) {
    if (named in LAYOUTS) return { builtIn: named as StatementLayout, defined: null }
    const defined = await findDefinedLayout(named)
    if (defined) return { builtIn: null, defined }
    throw ActionError.field('layout', `layout ${named} has no approved version`)
  }
  const detected = detectLayout(content)
  if (detected) return { builtIn: detected, defined: null }
  const assigned = await layoutOfAccount(accountId)
  if (assigned) return { builtIn: null, defined: assigned }
  return { builtIn: 'neutral', defined: null }
}
