import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'
import type ApprovalRequest from '#approvals/models/approval_request'
import { needsFourEyes, openApprovalRequest } from '#approvals/approval_requests'
import { formatThb } from '#core/money'
import type { Actor } from '#core/actor'
import { findCandidates } from '#reconciliation/matching/candidates'
import { judgeLine } from '#reconciliation/matching/rules'
import { LINE_COLUMNS, toLineRow } from '#reconciliation/matching/line_row'

/**
 * No money on one person's file (docs/reconciliation.md, "A file imported by
 * hand"). A statement is the bank's word only when it comes from the bank;
 * one imported by hand (the back-office upload, `statements:import`) is one
 * person's file. When what its lines would move is above a platform's
 * four-eyes threshold, the file is kept with its lines held (not matched,
 * not in the ledger's bank account) until a second operator confirms it.
 */

/** What one line of a file would do if the file were believed now. */
export interface LineEffect {
  lineId: number
  amount: number
  direction: 'credit' | 'debit'
  /** In the operators' words: "pays P…", "clears the receivable of P…", "returns payout W…". */
  effect: string
  /** The order or payout it would settle (its platform_order_id). */
  orderId: string | null
  merchantId: number | null
}

/**
 * The lines of an import (those with `status`) that the matcher would
 * settle now, judged by the matcher's own rules on the orders as they stand
 * (read, not locked: this is a forecast; matching judges again). Lines it
 * would leave to an operator move nothing by themselves: each of their
 * decisions has its own four eyes.
 */
export async function whatTheFileMoves(
  client: QueryClientContract,
  importId: number,
  status: 'new' | 'held'
): Promise<LineEffect[]> {
  const rows = await client
    .from('statement_lines')
    .where('import_id', importId)
    .where('status', status)
    .orderBy('id')
    .select(LINE_COLUMNS)
  if (rows.length === 0) return []
  // Judged as new lines: a held line is one the matcher has not seen yet.
  const lines = rows.map((row) => ({ ...toLineRow(row), status: 'new' }))
  const candidates = await findCandidates(client, lines, { lock: false })
  const effects: LineEffect[] = []
  for (const line of lines) {
    const judgement = judgeLine(line, candidates)
    if (judgement.result !== 'matched') continue
    const base = { lineId: line.id, amount: line.amount, direction: line.direction }
    if ('receivable' in judgement) {
      const receivable = judgement.receivable
      effects.push({
        ...base,
        effect: `clears the receivable of ${receivable.platformOrderId ?? `claim ${receivable.id}`}`,
        orderId: receivable.platformOrderId,
        merchantId: receivable.merchantId,
      })
    } else if ('confirmation' in judgement) {
      const payout = judgement.payout
      effects.push({
        ...base,
        effect: payout
          ? `confirms payout ${payout.platformOrderId}`
          : `confirms the return of line #${judgement.confirmation.returnedLineId}`,
        orderId: payout?.platformOrderId ?? null,
        merchantId: payout?.merchantId ?? null,
      })
    } else if ('payout' in judgement) {
      const payout = judgement.payout
      effects.push({
        ...base,
        effect:
          line.direction === 'debit'
            ? `sends payout ${payout.platformOrderId}`
            : `returns payout ${payout.platformOrderId}`,
        orderId: payout.platformOrderId,
        merchantId: payout.merchantId,
      })
    } else {
      effects.push({
        ...base,
        effect: `pays ${judgement.order.platformOrderId}`,
        orderId: judgement.order.platformOrderId,
        merchantId: judgement.order.merchantId,
      })
    }
  }
  return effects
}

/** Whether any platform has a four-eyes threshold: without one, no file needs confirming. */
async function anyFourEyesThreshold(client: QueryClientContract) {
  return Boolean(
    await client.from('platforms').whereNotNull('four_eyes_threshold').select('id').first()
  )
}

export interface PlatformMoves {
  platformId: number | null
  platform: string
  amount: number
  threshold: number | null
  /** Above the platform's four-eyes threshold: a second operator confirms the file. */
  aboveThreshold: boolean
}

/**
 * What the file moves per platform, against each platform's four-eyes
 * threshold. Money that belongs to no merchant (the debit of a return to a
 * payer) is held to the lowest threshold of any platform.
 */
export async function movesByPlatform(
  client: QueryClientContract,
  effects: LineEffect[]
): Promise<PlatformMoves[]> {
  if (effects.length === 0) return []
  const merchantIds = [
    ...new Set(effects.map((e) => e.merchantId).filter((id): id is number => id !== null)),
  ]
  const merchants =
    merchantIds.length === 0
      ? []
      : await client
          .from('merchants')
          .join('platforms', 'platforms.id', 'merchants.platform_id')
          .whereIn('merchants.id', merchantIds)
          .select(
            'merchants.id as merchant_id',
            'platforms.id as platform_id',
            'platforms.name as platform',
            'platforms.four_eyes_threshold as threshold'
          )
  const platformOf = new Map(merchants.map((row) => [Number(row.merchant_id), row]))
  const totals = new Map<number | null, PlatformMoves>()
  for (const effect of effects) {
    const row = effect.merchantId === null ? undefined : platformOf.get(effect.merchantId)
    const platformId = row ? Number(row.platform_id) : null
    const entry = totals.get(platformId) ?? {
      platformId,
      platform: row ? String(row.platform) : 'no merchant',
      amount: 0,
      threshold: row && row.threshold !== null ? Number(row.threshold) : null,
      aboveThreshold: false,
    }
    entry.amount += effect.amount
    totals.set(platformId, entry)
  }
  const noMerchant = totals.get(null)
  if (noMerchant) {
    const [lowest] = await client
      .from('platforms')
      .whereNotNull('four_eyes_threshold')
      .min('four_eyes_threshold as threshold')
    noMerchant.threshold = lowest?.threshold === null ? null : Number(lowest?.threshold)
  }
  for (const entry of totals.values()) {
    entry.aboveThreshold = needsFourEyes(entry.threshold, entry.amount)
  }
  return [...totals.values()]
}

/**
 * At import, in its transaction, before its bank postings: a file whose
 * lines would move more than some platform's threshold is held
 * (holdImport) and its `statement.confirm` request opened. Returns the
 * request, or null when the file runs at once. The forecast judges the
 * lines a second time, so it runs only where a threshold could hold a file.
 */
export async function holdAboveThreshold(
  trx: TransactionClientContract,
  importId: number,
  fileName: string,
  actor: Actor
): Promise<ApprovalRequest | null> {
  if (!(await anyFourEyesThreshold(trx))) return null
  const effects = await whatTheFileMoves(trx, importId, 'new')
  const above = (await movesByPlatform(trx, effects)).filter((platform) => platform.aboveThreshold)
  if (above.length === 0) return null
  const amount = effects.reduce((sum, effect) => sum + effect.amount, 0)
  await holdImport(trx, importId, amount)
  return openApprovalRequest(trx, {
    action: 'statement.confirm',
    target: { type: 'statement_import', id: String(importId), amount, reviewedBy: null },
    input: { statement_import_id: importId },
    prepared: null,
    actor,
    reason: {
      code: null,
      comment: `${fileName} would move ${above
        .map((platform) => `${formatThb(platform.amount)} THB on ${platform.platform}`)
        .join(', ')}, above the four-eyes threshold`,
    },
  })
}

/**
 * Holds an import's lines until a second operator confirms the file: in
 * the import's transaction, before its bank postings (which are not
 * written: the ledger's bank account follows confirmed files only). A
 * verdict stored while the lines were inserted is forgotten; confirming
 * judges every line again.
 */
async function holdImport(trx: TransactionClientContract, importId: number, movesAmount: number) {
  await trx
    .from('statement_lines')
    .where('import_id', importId)
    .update({ status: 'held', note: null })
  await trx
    .from('statement_imports')
    .where('id', importId)
    .update({ status: 'awaiting_confirmation', moves_amount: movesAmount })
}

/** A confirmed file's lines are new lines, matched as any import's. */
export async function releaseImport(
  trx: TransactionClientContract,
  importId: number,
  decidedBy: string,
  now = new Date()
) {
  await trx
    .from('statement_lines')
    .where('import_id', importId)
    .where('status', 'held')
    .update({ status: 'new' })
  await trx
    .from('statement_imports')
    .where('id', importId)
    .update({ status: 'confirmed', decided_by: decidedBy.slice(0, 120), decided_at: now })
}

/**
 * A file turned down (or not confirmed in time): its lines stay, visible,
 * as discarded, and give back the transfers they named: their transfer
 * key and fingerprint no longer hold a genuine file's lines out.
 */
export async function discardImport(
  trx: TransactionClientContract,
  importId: number,
  decidedBy: string,
  reason: string,
  now = new Date()
) {
  await trx.rawQuery(
    `UPDATE statement_lines
        SET status = 'discarded', transfer_key = NULL,
            fingerprint = SHA2(CONCAT('discarded|', id), 256)
      WHERE import_id = ? AND status = 'held'`,
    [importId]
  )
  await trx
    .from('statement_imports')
    .where('id', importId)
    .update({
      status: 'discarded',
      decided_by: decidedBy.slice(0, 120),
      decided_at: now,
      discard_reason: reason.slice(0, 1000),
    })
}
