import vine from '@vinejs/vine'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { registerApprovableAction, type RunContext } from '#approvals/approvable_actions'
import { lockBankAccount } from '#ledger/ledger'
import { postBankDays } from '#reconciliation/statements'
import { settleLines } from '#reconciliation/matching/settle'
import { discardImport, releaseImport } from '#reconciliation/statement_confirmation'
import { scheduleSlipRecheck } from '#slips/actions/recheck_slips'
import { recordAudit } from '#core/audit'
import { formatGatewayDateTime } from '#core/clock'
import { ActionError, validateInput } from '#core/validation'

/**
 * A second operator confirms a statement file imported by hand whose lines
 * would move money above a platform's four-eyes threshold
 * (statement_confirmation.ts). Only through an approval request: the
 * import opens it, the importer can never approve it, and turning it down
 * (or letting it expire) discards the file, which stays visible.
 */

const validator = vine.compile(
  vine.object({ statement_import_id: vine.number().withoutDecimals().min(1) })
)

export interface ConfirmImportData {
  statement_import_id: number
}

interface Prepared {
  target: { type: 'statement_import'; id: string; amount: number | null; reviewedBy: null }
  importId: number
  depositAccountId: number
}

/** Locks the import (the account's bank lock first, as imports take it) and checks it still waits. */
async function prepare(trx: TransactionClientContract, data: ConfirmImportData): Promise<Prepared> {
  const head = await trx
    .from('statement_imports')
    .where('id', data.statement_import_id)
    .select('deposit_account_id')
    .first()
  if (!head) {
    throw ActionError.notFound(
      'statement_import_id',
      `No statement import ${data.statement_import_id}`
    )
  }
  await lockBankAccount(trx, Number(head.deposit_account_id))
  const row = await trx
    .from('statement_imports')
    .where('id', data.statement_import_id)
    .forUpdate()
    .first()
  if (row.status !== 'awaiting_confirmation') {
    const when = row.decided_at ? ` at ${formatGatewayDateTime(new Date(row.decided_at))}` : ''
    throw ActionError.general(
      `statement import ${row.id} is ${row.status.replace('_', ' ')}${row.decided_by ? ` by ${row.decided_by}` : ''}${when}: nothing to confirm`
    )
  }
  return {
    target: {
      type: 'statement_import',
      id: String(row.id),
      amount: row.moves_amount === null ? null : Number(row.moves_amount),
      reviewedBy: null,
    },
    importId: Number(row.id),
    depositAccountId: Number(row.deposit_account_id),
  }
}

/**
 * The file is believed: its lines become new lines, the ledger's bank
 * account takes them (one posting per bank day, as at import), and the
 * matcher settles them in this transaction, as it settles any import's.
 */
async function run(trx: TransactionClientContract, prepared: Prepared, context: RunContext) {
  const { importId, depositAccountId } = prepared
  await releaseImport(trx, importId, context.actor.name)
  await postBankDays(trx, depositAccountId, importId)
  const ids = (
    await trx
      .from('statement_lines')
      .where('import_id', importId)
      .where('status', 'new')
      .select('id')
  ).map((row) => Number(row.id))
  const results = { matched: 0, unmatched: 0, late: 0, skipped: 0 }
  for (let start = 0; start < ids.length; start += 1000) {
    const settled = await settleLines(trx, ids.slice(start, start + 1000))
    for (const result of settled.values()) results[result]++
  }
  await recordAudit(trx, context.actor, {
    action: 'statement.confirm',
    target: { type: 'deposit_account', id: String(depositAccountId) },
    details: {
      import_id: importId,
      approval_request_id: context.request?.id ?? null,
      requested_by: context.request?.requestedByActor ?? null,
      ...results,
    },
  })
  // Pending slips of the account may now find their line.
  trx.after('commit', () => scheduleSlipRecheck(depositAccountId).catch(() => {}))
  return { statement_import_id: importId, ...results }
}

registerApprovableAction<ConfirmImportData, Prepared>({
  name: 'statement.confirm',
  kind: 'statement_confirm',
  approverRole: 'operator',
  describe: (data) => `confirm statement import ${data.statement_import_id} imported by hand`,
  validate: (input) => validateInput(validator, input),
  prepare: (trx, data) => prepare(trx, data),
  run: (trx, prepared, _data, context) => run(trx, prepared, context),
  /** Rejected, withdrawn or expired: the file is discarded, kept to be seen. */
  closed: async (trx, data, request) => {
    const row = await trx
      .from('statement_imports')
      .where('id', data.statement_import_id)
      .forUpdate()
      .first()
    if (!row || row.status !== 'awaiting_confirmation') return
    const reason =
      request.status === 'expired'
        ? 'nobody confirmed it before the request expired'
        : [request.decisionReasonCode?.replaceAll('_', ' '), request.decisionComment]
            .filter(Boolean)
            .join(': ')
    await discardImport(trx, Number(row.id), request.decidedByActor ?? 'system', reason)
    await recordAudit(
      trx,
      { name: request.decidedByActor ?? 'system' },
      {
        action: 'statement.discard',
        target: { type: 'deposit_account', id: String(row.deposit_account_id) },
        reason: { code: request.decisionReasonCode, comment: request.decisionComment },
        details: { import_id: Number(row.id), approval_request_id: request.id },
      }
    )
  },
})
