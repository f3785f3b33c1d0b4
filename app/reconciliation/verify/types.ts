/**
 * What the ledger-against-the-bank check reports (index.ts): its problems,
 * the figures the back-office shows, and what a check looks at.
 */

export type ProblemKind =
  | 'bank_day_drift'
  | 'bank_posting_without_day'
  | 'unbacked_credit'
  | 'credit_claimed_twice'
  | 'receipt_claimed_twice'
  | 'claim_line_mismatch'
  | 'claim_exceeds_receipt'
  | 'line_given_unclaimed'
  | 'stale_receivable'
  | 'receivable_line_waiting'
  | 'unexplained_debit'
  | 'transfer_unrecorded'
  | 'debit_mismatch'
  | 'payout_clearing_drift'
  | 'clearing_drift'
  | 'receivable_drift'
  | 'printed_balance_break'
  | 'printed_balance_drift'
  | 'transfer_stored_twice'
  | 'transfer_claimed_twice'
  | 'claim_transfer_mismatch'
  | 'payout_debit_missing'
  | 'unbacked_receivable_posting'

export interface Problem {
  kind: ProblemKind
  detail: string
  depositAccountId?: number | null
  day?: string | null
}

/** One deposit account's bank day, as the statement lines and the ledger see it. */
export interface BankDay {
  depositAccountId: number
  day: string
  /** Satang received and sent by the lines of the day. */
  credits: number
  debits: number
  /** The ledger's bank account movement of the day, as money in (credits − debits). */
  ledgerNet: number
}

export interface OpenReceivableItem {
  claimId: number
  depositAccountId: number
  platformOrderId: string | null
  amount: number
  claimedAt: Date
  ageHours: number
  stale: boolean
}

/** A transfer out (a payout, a return to a payer) whose debit line has not come yet. */
export interface OpenTransferItem {
  confirmationId: number
  path: string
  platformOrderId: string | null
  returnedLineId: number | null
  amount: number
  createdAt: Date
  ageHours: number
}

/** Statement lines counted, and their satang. */
export interface LineTotal {
  lines: number
  amount: number
}

/** What the gateway's clearing accounts hold (the ledger's signs). */
export interface ClearingBalances {
  deposit: number
  receivable: number
  payout: number
}

export interface ReconciliationResult {
  ok: boolean
  problems: Problem[]
  days: BankDay[]
  openReceivables: OpenReceivableItem[]
  openTransfers: OpenTransferItem[]
  unexplainedDebits: LineTotal
  unclaimed: LineTotal
  clearing: ClearingBalances
  windowHours: number
}

/**
 * What a check looks at: everything (reconcile:verify, the worker), or one
 * deposit account and, optionally, a range of its bank days (the
 * reconciliation page). A scoped check applies the same rules to the
 * account's lines, claims and transfers; the whole-database figures
 * (clearing accounts, credits that name no account) are checked unscoped only.
 */
export interface CheckScope {
  depositAccountId: number
  /** Bank days (GMT+7, YYYY-MM-DD), both included. */
  from?: string
  to?: string
}

export interface CheckOptions {
  now?: Date
  windowHours?: number
  /** PAYOUT_DEBIT_WINDOW_BANK_DAYS unless given. */
  debitWindowBankDays?: number
  scope?: CheckScope
}
