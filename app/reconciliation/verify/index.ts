import db from '@adonisjs/lucid/services/db'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type { Actor } from '#core/actor'
import { receivableWindowHours } from '#reconciliation/receivable_window'
import { checkBankDays } from '#reconciliation/verify/bank_day_drift'
import { checkDepositCredits } from '#reconciliation/verify/unbacked_credit'
import { checkReceiptsClaimedTwice } from '#reconciliation/verify/receipt_claimed_twice'
import { checkClaimLines } from '#reconciliation/verify/claim_line_mismatch'
import { checkClaimsWithinReceipt } from '#reconciliation/verify/claim_exceeds_receipt'
import { checkLinesGivenClaimed } from '#reconciliation/verify/line_given_unclaimed'
import { checkReceivableLines } from '#reconciliation/verify/receivable_line_waiting'
import { checkOpenReceivables } from '#reconciliation/verify/stale_receivable'
import {
  checkDepositClearing,
  checkPayoutClearing,
  readClearing,
} from '#reconciliation/verify/clearing_drift'
import { checkDebitLines } from '#reconciliation/verify/unexplained_debit'
import { checkTransfersRecorded } from '#reconciliation/verify/transfer_unrecorded'
import { checkDebitConfirmations } from '#reconciliation/verify/debit_mismatch'
import { checkPayoutDebits } from '#reconciliation/verify/payout_debit_missing'
import { readOpenTransfers } from '#reconciliation/verify/open_transfers'
import { checkPrintedBalances } from '#reconciliation/verify/printed_balances'
import { checkTransfersStoredOnce } from '#reconciliation/verify/transfer_stored_twice'
import { checkTransfersClaimedOnce } from '#reconciliation/verify/transfer_claimed_twice'
import { checkClaimTransfers } from '#reconciliation/verify/claim_transfer_mismatch'
import { checkReceivablePostings } from '#reconciliation/verify/unbacked_receivable_posting'
import type { CheckOptions, Problem, ReconciliationResult } from '#reconciliation/verify/types'

export type {
  BankDay,
  CheckOptions,
  CheckScope,
  OpenReceivableItem,
  OpenTransferItem,
  Problem,
  ProblemKind,
  ReconciliationResult,
} from '#reconciliation/verify/types'
export { bankDayStart } from '#reconciliation/verify/sql'
export { PAYOUT_DEBIT_WINDOW_BANK_DAYS } from '#reconciliation/verify/payout_debit_missing'

/**
 * The ledger against the bank (docs/reconciliation.md, "Proving it"): what
 * `reconcile:verify` checks, the worker runs daily and the reconciliation
 * page shows. Read in one consistent snapshot. Each check is its own file of
 * this folder, named after the problem it reports:
 *
 * 1. Per deposit account and bank day: the ledger's bank account moved by
 *    exactly what the imported statement lines say (bank_day_drift).
 * 2. Every merchant credit from a deposit (payment paid, late payment, line
 *    credited) is backed by exactly one claim: a statement line, or an open
 *    receivable younger than the window (unbacked_credit, stale_receivable).
 * 3. No receipt is claimed twice, and a claim's line is a credit of its
 *    account with the claimed amount; no claim credits more (fee included)
 *    than its line brought; every line the matcher or an operator gave away
 *    is claimed (receipt_claimed_twice, claim_line_mismatch,
 *    claim_exceeds_receipt, line_given_unclaimed, receivable_line_waiting).
 * 4. deposit_clearing holds exactly the unclaimed credit lines and
 *    deposit_receivable exactly the open receivables (clearing_drift).
 * 5. Money out: every debit line accounted for, every transfer recorded,
 *    and a payout marked successful by hand confirmed by its debit line
 *    within PAYOUT_DEBIT_WINDOW_BANK_DAYS (unexplained_debit,
 *    transfer_unrecorded, debit_mismatch, payout_debit_missing).
 * 6. Against what the bank printed, not our own rows: each running balance
 *    follows the one before it, and the ledger's bank account moved by the
 *    last printed balance less the opening one (printed_balances); no
 *    transfer is stored or claimed twice (transfer_stored_twice,
 *    transfer_claimed_twice, claim_transfer_mismatch); every posting that
 *    moves deposit_receivable is backed by a claim
 *    (unbacked_receivable_posting).
 *
 * Lines of a statement held for confirmation or discarded (status `held`,
 * `discarded`) are not in the ledger: the checks of 5 and 6 leave them out.
 */

/**
 * verifyReconciliation, recorded (reconciliation_runs) for the back-office:
 * the worker's daily run and the command's. Returns the result.
 */
export async function runReconciliationCheck(actor: Actor) {
  const result = await verifyReconciliation()
  await db.table('reconciliation_runs').insert({
    ok: result.ok,
    problems: result.problems.length,
    result: JSON.stringify({
      problems: result.problems,
      unclaimed: result.unclaimed,
      clearing: result.clearing,
      open_receivables: result.openReceivables.length,
    }),
    actor: actor.name.slice(0, 120),
    created_at: new Date(),
  })
  return result
}

/** The last recorded check, if any. */
export async function lastReconciliationRun() {
  const row = await db.from('reconciliation_runs').orderBy('id', 'desc').first()
  if (!row) return null
  return {
    ok: Boolean(row.ok),
    problems: Number(row.problems),
    actor: row.actor as string,
    at: new Date(row.created_at),
    result: typeof row.result === 'string' ? JSON.parse(row.result) : row.result,
  }
}

export async function verifyReconciliation(
  options: CheckOptions = {}
): Promise<ReconciliationResult> {
  return db.transaction((trx) => checkReconciliation(trx, options), {
    isolationLevel: 'repeatable read',
  })
}

/**
 * The check itself, in the caller's (repeatable read) transaction: the
 * checks in the order their problems are reported. The whole-database ones
 * (postings name no account, the clearing accounts are the gateway's) run
 * unscoped only.
 */
export async function checkReconciliation(
  trx: TransactionClientContract,
  options: CheckOptions = {}
): Promise<ReconciliationResult> {
  const now = options.now ?? new Date()
  const windowHours = receivableWindowHours(options.windowHours)
  const scope = options.scope
  const whole = !scope
  const problems: Problem[] = []
  const found = (more: Problem[]) => {
    for (const problem of more) problems.push(problem)
  }

  const bank = await checkBankDays(trx, scope)
  found(bank.problems)
  if (whole) found(await checkDepositCredits(trx))
  found(await checkReceiptsClaimedTwice(trx, scope))
  found(await checkClaimLines(trx, scope))
  found(await checkClaimsWithinReceipt(trx, scope))
  found(await checkLinesGivenClaimed(trx, scope))
  found(await checkReceivableLines(trx, scope))
  const receivables = await checkOpenReceivables(trx, scope, now, windowHours)
  found(receivables.problems)
  const { unclaimed, clearing } = await readClearing(trx, scope)
  if (whole) found(checkDepositClearing(clearing, unclaimed, receivables.openReceivables))
  const debits = await checkDebitLines(trx, scope)
  found(debits.problems)
  if (whole) found(await checkTransfersRecorded(trx))
  found(await checkDebitConfirmations(trx, scope))
  if (whole) found(await checkPayoutDebits(trx, now, options.debitWindowBankDays))
  const openTransfers = await readOpenTransfers(trx, scope, now)
  if (whole) found(checkPayoutClearing(clearing, openTransfers, debits.unexplained))
  found(await checkPrintedBalances(trx, scope, bank))
  found(await checkTransfersStoredOnce(trx, scope))
  found(await checkTransfersClaimedOnce(trx, scope))
  found(await checkClaimTransfers(trx, scope))
  if (whole) found(await checkReceivablePostings(trx))

  return {
    ok: problems.length === 0,
    problems,
    days: bank.days,
    openReceivables: receivables.openReceivables,
    openTransfers,
    unexplainedDebits: debits.unexplained,
    unclaimed,
    clearing,
    windowHours,
  }
}
