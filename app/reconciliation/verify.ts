import db from '@adonisjs/lucid/services/db'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import reconciliationConfig from '#config/reconciliation'
import { bankAccountCode, depositAccountOfCode, GATEWAY_OWNER } from '#ledger/accounts'
import { DEPOSIT_CREDIT_KINDS } from '#ledger/recipes'
import { formatThb } from '#core/money'
import { formatGatewayDateTime, gatewayDaySql, gatewayPeriodStarts } from '#core/clock'
import type { Actor } from '#core/actor'
import { bankReferenceSql } from '#reconciliation/receipts'

/**
 * The ledger against the bank (docs/reconciliation.md, "Proving it"): what
 * `reconcile:verify` checks, the worker runs daily and the reconciliation
 * page shows. Read in one consistent snapshot.
 *
 * 1. Per deposit account and bank day: the ledger's bank account moved by
 *    exactly what the imported statement lines say.
 * 2. Every merchant credit from a deposit (payment paid, late payment, line
 *    credited) is backed by exactly one claim: a statement line, or an open
 *    receivable younger than the window.
 * 3. No receipt is claimed twice, and a claim's line is a credit of its
 *    account with the claimed amount; no claim credits more (fee included)
 *    than its line brought; every line the matcher or an operator gave away
 *    is claimed.
 * 4. deposit_clearing holds exactly the unclaimed credit lines and
 *    deposit_receivable exactly the open receivables.
 * 5. Money out: every debit line accounted for, every transfer recorded,
 *    and a payout marked successful by hand confirmed by its debit line
 *    within PAYOUT_DEBIT_WINDOW_BANK_DAYS.
 * 6. Against what the bank printed, not our own rows: each running balance
 *    follows the one before it, and the ledger's bank account moved by the
 *    last printed balance less the opening one; no transfer is stored or
 *    claimed twice; every posting that moves deposit_receivable is backed
 *    by a claim.
 *
 * Lines of a statement held for confirmation or discarded (status `held`,
 * `discarded`) are not in the ledger: the checks of 5 and 6 leave them out.
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

export interface ReconciliationResult {
  ok: boolean
  problems: Problem[]
  days: BankDay[]
  openReceivables: OpenReceivableItem[]
  openTransfers: OpenTransferItem[]
  unexplainedDebits: { lines: number; amount: number }
  unclaimed: { lines: number; amount: number }
  clearing: { deposit: number; receivable: number; payout: number }
  windowHours: number
}

const sum = (value: unknown) => Number(value ?? 0)

/**
 * Bank days (GMT+7) a payout marked successful by an operator
 * (`payouts:complete`) may wait for the debit line that shows the money
 * left: the day it was completed and this many after it. Later, verify
 * fails on it (payout_debit_missing).
 */
export const PAYOUT_DEBIT_WINDOW_BANK_DAYS = 3

/** Lines that are in the ledger: not those of a statement held for confirmation or discarded. */
const POSTED = (alias: string) => `${alias}.status NOT IN ('held', 'discarded')`

/** What a line does to its account's balance, in SQL: + a credit, − a debit. */
const SIGNED = (alias: string) =>
  `IF(${alias}.direction = 'credit', ${alias}.amount, -${alias}.amount)`

/** A line whose trans_ref is the bank's transaction reference (receipts.ts, bankReferenceSql). */
const BANK_REFERENCE = (alias: string) => `${bankReferenceSql(alias)} IS NOT NULL`

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

export async function verifyReconciliation(
  options: CheckOptions = {}
): Promise<ReconciliationResult> {
  return db.transaction((trx) => checkReconciliation(trx, options), {
    isolationLevel: 'repeatable read',
  })
}

/** Bangkok midnight (GMT+7) of a `YYYY-MM-DD` bank day, as an instant. */
export function bankDayStart(day: string) {
  return new Date(Date.parse(`${day}T00:00:00+07:00`))
}

/**
 * SQL conditions on the statement lines `l` of the scope, with their
 * bindings: the account's, and in the range of days through the index
 * starting with line_at (a range of days reads that range, not the
 * account's history).
 */
function lineScope(scope: CheckScope | undefined) {
  if (!scope) return { index: '', where: '', bindings: [] as unknown[] }
  const where = [' AND l.deposit_account_id = ?']
  const bindings: unknown[] = [scope.depositAccountId]
  if (scope.from) {
    where.push(' AND l.line_at >= ?')
    bindings.push(bankDayStart(scope.from))
  }
  if (scope.to) {
    where.push(' AND l.line_at < ?')
    bindings.push(new Date(bankDayStart(scope.to).getTime() + 86_400_000))
  }
  const ranged = Boolean(scope.from || scope.to)
  return {
    index: ranged ? 'FORCE INDEX (statement_lines_match_rate_index)' : '',
    where: where.join(''),
    bindings,
  }
}

/** The check itself, in the caller's (repeatable read) transaction. */
export async function checkReconciliation(
  trx: TransactionClientContract,
  options: CheckOptions = {}
): Promise<ReconciliationResult> {
  const now = options.now ?? new Date()
  const windowHours = options.windowHours ?? reconciliationConfig.receivableWindowHours
  const scope = options.scope
  const lines = lineScope(scope)
  const onAccount = scope ? ' AND c.deposit_account_id = ?' : ''
  const accountBinding = scope ? [scope.depositAccountId] : []
  const problems: Problem[] = []

  // 1. The bank, per account and day.
  const [lineDays] = await trx.rawQuery(
    `SELECT l.deposit_account_id, ${gatewayDaySql('l.line_at')} AS day,
            SUM(CASE WHEN l.direction = 'credit' THEN l.amount ELSE 0 END) AS credits,
            SUM(CASE WHEN l.direction = 'debit' THEN l.amount ELSE 0 END) AS debits,
            SUM(CASE WHEN l.balance_after IS NULL AND ${POSTED('l')} THEN ${SIGNED('l')} ELSE 0 END)
              AS unprinted
       FROM statement_lines l ${lines.index} WHERE ${POSTED('l')}${lines.where}
      GROUP BY l.deposit_account_id, day`,
    lines.bindings as any[]
  )
  const ledgerFilter = scope
    ? ` AND a.code = ?${scope.from ? ' AND (t.value_date IS NULL OR t.value_date >= ?)' : ''}${scope.to ? ' AND (t.value_date IS NULL OR t.value_date <= ?)' : ''}`
    : " AND a.code LIKE 'bank:%'"
  const [ledgerDays] = await trx.rawQuery(
    `SELECT a.code, DATE_FORMAT(t.value_date, '%Y-%m-%d') AS day, SUM(e.amount) AS total
       FROM ledger_entries e
       JOIN ledger_accounts a ON a.id = e.account_id
       JOIN ledger_transactions t ON t.id = e.transaction_id
      WHERE a.owner = ?${ledgerFilter}
      GROUP BY a.code, day`,
    [
      GATEWAY_OWNER,
      ...(scope ? [bankAccountCode(scope.depositAccountId)] : []),
      ...(scope?.from ? [scope.from] : []),
      ...(scope?.to ? [scope.to] : []),
    ]
  )
  const days = new Map<string, BankDay>()
  const dayOf = (depositAccountId: number, day: string) => {
    const name = `${depositAccountId}|${day}`
    let entry = days.get(name)
    if (!entry) {
      entry = { depositAccountId, day, credits: 0, debits: 0, ledgerNet: 0 }
      days.set(name, entry)
    }
    return entry
  }
  // Per account, for the printed balances (6): the movement of its lines
  // that print no balance, and its ledger bank account's whole movement.
  const unprinted = new Map<number, number>()
  const ledgerMoved = new Map<number, number>()
  for (const row of lineDays) {
    const entry = dayOf(Number(row.deposit_account_id), row.day)
    entry.credits = sum(row.credits)
    entry.debits = sum(row.debits)
    const accountId = Number(row.deposit_account_id)
    unprinted.set(accountId, (unprinted.get(accountId) ?? 0) + sum(row.unprinted))
  }
  for (const row of ledgerDays) {
    const accountId = depositAccountOfCode(row.code)
    if (accountId === null) continue
    ledgerMoved.set(accountId, (ledgerMoved.get(accountId) ?? 0) - sum(row.total))
    if (row.day === null) {
      problems.push({
        kind: 'bank_posting_without_day',
        detail: `bank account of deposit account ${accountId} has ${formatThb(-sum(row.total))} THB posted without a bank day`,
        depositAccountId: accountId,
      })
      continue
    }
    // Assets carry the ledger's negative sign: money in is a negative entry.
    dayOf(accountId, row.day).ledgerNet = -sum(row.total)
  }
  for (const entry of days.values()) {
    if (entry.ledgerNet !== entry.credits - entry.debits) {
      problems.push({
        kind: 'bank_day_drift',
        detail:
          `deposit account ${entry.depositAccountId}, ${entry.day}: the statement says ` +
          `${formatThb(entry.credits - entry.debits)} THB net in, the ledger's bank account ${formatThb(entry.ledgerNet)}`,
        depositAccountId: entry.depositAccountId,
        day: entry.day,
      })
    }
  }

  // 2. Every deposit credit, one claim (postings name no account: unscoped only).
  if (!scope) {
    const [credits] = await trx.rawQuery(
      `SELECT t.id, t.kind, t.reference_type, t.reference_id, COUNT(c.id) AS claims
         FROM ledger_transactions t
         LEFT JOIN receipt_claims c ON c.ledger_transaction_id = t.id
        WHERE t.kind IN (${DEPOSIT_CREDIT_KINDS.map(() => '?').join(', ')})
        GROUP BY t.id, t.kind, t.reference_type, t.reference_id
       HAVING COUNT(c.id) <> 1`,
      [...DEPOSIT_CREDIT_KINDS]
    )
    for (const row of credits) {
      const what = `ledger transaction ${row.id} (${row.kind}, ${row.reference_type} ${row.reference_id})`
      problems.push(
        Number(row.claims) === 0
          ? {
              kind: 'unbacked_credit',
              detail: `${what} credits a merchant without a bank receipt or receivable`,
            }
          : { kind: 'credit_claimed_twice', detail: `${what} is backed by ${row.claims} claims` }
      )
    }
  }

  // 3. Receipts claimed once, by claims that fit their line.
  const [twice] = await trx.rawQuery(
    `SELECT c.statement_line_id, COUNT(*) AS claims, GROUP_CONCAT(c.id ORDER BY c.id) AS ids
       FROM receipt_claims c WHERE c.statement_line_id IS NOT NULL${onAccount}
      GROUP BY c.statement_line_id HAVING COUNT(*) > 1`,
    accountBinding
  )
  for (const row of twice) {
    problems.push({
      kind: 'receipt_claimed_twice',
      detail: `statement line #${row.statement_line_id} is claimed ${row.claims} times (claims ${row.ids})`,
      depositAccountId: scope?.depositAccountId,
    })
  }
  const [misfits] = await trx.rawQuery(
    `SELECT c.id, c.statement_line_id, c.deposit_account_id, c.received_amount,
            l.deposit_account_id AS line_account, l.direction, l.amount
       FROM statement_lines l ${lines.index}
       JOIN receipt_claims c ON c.statement_line_id = l.id
      WHERE (l.deposit_account_id <> c.deposit_account_id OR l.direction <> 'credit'
         OR c.received_amount IS NULL OR l.amount <> c.received_amount)${lines.where}`,
    lines.bindings as any[]
  )
  for (const row of misfits) {
    problems.push({
      kind: 'claim_line_mismatch',
      detail: `claim ${row.id} takes statement line #${row.statement_line_id} (${row.direction}, ${formatThb(sum(row.amount))} THB, account ${row.line_account}) as ${formatThb(sum(row.received_amount))} THB received on account ${row.deposit_account_id}`,
      depositAccountId: Number(row.deposit_account_id),
    })
  }
  // A claim never gives away more than its receipt brought: what the merchant
  // was credited plus the fee taken from it is at most what the bank received.
  const [excess] = await trx.rawQuery(
    `SELECT c.id, c.statement_line_id, c.deposit_account_id, c.credited, c.fee, c.received_amount
       FROM statement_lines l ${lines.index}
       JOIN receipt_claims c ON c.statement_line_id = l.id
      WHERE c.reversed_at IS NULL AND c.received_amount IS NOT NULL
        AND c.credited + c.fee > c.received_amount${lines.where}`,
    lines.bindings as any[]
  )
  for (const row of excess) {
    problems.push({
      kind: 'claim_exceeds_receipt',
      detail: `claim ${row.id} credits ${formatThb(sum(row.credited))} THB + ${formatThb(sum(row.fee))} THB fee from statement line #${row.statement_line_id}, which brought ${formatThb(sum(row.received_amount))} THB`,
      depositAccountId: Number(row.deposit_account_id),
    })
  }
  const [given] = await trx.rawQuery(
    `SELECT l.id, l.deposit_account_id, l.status, l.decision FROM statement_lines l ${lines.index}
      LEFT JOIN receipt_claims c ON c.statement_line_id = l.id
      WHERE l.direction = 'credit' AND c.id IS NULL
        AND (l.decision IS NOT NULL OR (l.status = 'matched' AND l.order_type = 'payment'))${lines.where}`,
    lines.bindings as any[]
  )
  for (const row of given) {
    problems.push({
      kind: 'line_given_unclaimed',
      detail: `statement line #${row.id} is ${row.decision ?? row.status} but no claim takes it`,
      depositAccountId: Number(row.deposit_account_id),
    })
  }

  // A receivable whose transfer (the slip's transaction reference) is on the
  // statement: its line is either another claim's (the money taken twice)
  // or waits unclaimed for the receivable (an operator attaches it).
  const [named] = await trx.rawQuery(
    `SELECT c.id, c.trans_ref, c.deposit_account_id, o.platform_order_id, l.id AS line_id, t.id AS taken_by
       FROM receipt_claims c
       JOIN statement_lines l ON l.deposit_account_id = c.deposit_account_id
        AND l.trans_ref = c.trans_ref AND l.direction = 'credit' AND ${POSTED('l')}
       LEFT JOIN receipt_claims t ON t.statement_line_id = l.id
       LEFT JOIN payment_orders o ON o.id = c.payment_order_id
      WHERE c.statement_line_id IS NULL AND c.reversed_at IS NULL AND c.trans_ref IS NOT NULL${onAccount}`,
    accountBinding
  )
  for (const row of named) {
    const owner = row.platform_order_id ?? `claim ${row.id}`
    problems.push(
      row.taken_by === null
        ? {
            kind: 'receivable_line_waiting',
            detail: `statement line #${row.line_id} is the transfer ${row.trans_ref} that ${owner} was credited for, and waits unclaimed: attach it to ${owner}`,
            depositAccountId: Number(row.deposit_account_id),
          }
        : {
            kind: 'receipt_claimed_twice',
            detail: `statement line #${row.line_id} is the transfer ${row.trans_ref} that ${owner} was credited for, and claim ${row.taken_by} took it too`,
            depositAccountId: Number(row.deposit_account_id),
          }
    )
  }

  // Open receivables, with their age.
  const receivables = await trx
    .from('receipt_claims as c')
    .leftJoin('payment_orders as o', 'o.id', 'c.payment_order_id')
    .whereNull('c.statement_line_id')
    .whereNull('c.reversed_at')
    .if(scope, (query) => query.where('c.deposit_account_id', scope!.depositAccountId))
    .orderBy('c.claimed_at')
    .orderBy('c.id')
    .select(
      'c.id',
      'c.deposit_account_id',
      'c.expected_amount',
      'c.claimed_at',
      'o.platform_order_id'
    )
  const openReceivables = receivables.map((row): OpenReceivableItem => {
    const claimedAt = new Date(row.claimed_at)
    const ageHours = (now.getTime() - claimedAt.getTime()) / 3_600_000
    return {
      claimId: Number(row.id),
      depositAccountId: Number(row.deposit_account_id),
      platformOrderId: row.platform_order_id ?? null,
      amount: sum(row.expected_amount),
      claimedAt,
      ageHours,
      stale: ageHours > windowHours,
    }
  })
  for (const item of openReceivables.filter((receivable) => receivable.stale)) {
    problems.push({
      kind: 'stale_receivable',
      detail: `${item.platformOrderId ?? `claim ${item.claimId}`} was credited ${formatThb(item.amount)} THB ${Math.floor(item.ageHours)} h ago and its bank line has not arrived (window ${windowHours} h)`,
      depositAccountId: item.depositAccountId,
    })
  }

  // 4. Clearing accounts hold the listed open items, nothing else.
  const byAccount = scope ? ' AND l.deposit_account_id = ?' : ''
  const [[unclaimedRow]] = await trx.rawQuery(
    // A payout's return is claimed (the line is taken once), but no posting
    // moves its money out of deposit_clearing: the payout's hold went back to
    // the merchant from its own balance. It is counted with the credits no
    // claim took, as the money clearing holds (docs/decisions.md, "A payout's
    // return claims its line").
    `SELECT COUNT(*) AS line_count, COALESCE(SUM(l.amount), 0) AS amount FROM statement_lines l
      LEFT JOIN receipt_claims c ON c.statement_line_id = l.id
      WHERE l.direction = 'credit' AND (c.id IS NULL OR c.path = 'payout_return')
        AND ${POSTED('l')}${byAccount}`,
    accountBinding
  )
  const unclaimed = { lines: Number(unclaimedRow.line_count), amount: sum(unclaimedRow.amount) }
  const balances = await trx
    .from('ledger_entries as e')
    .join('ledger_accounts as a', 'a.id', 'e.account_id')
    .where('a.owner', GATEWAY_OWNER)
    .whereIn('a.code', ['deposit_clearing', 'deposit_receivable', 'payout_clearing'])
    .groupBy('a.code')
    .select('a.code')
    .sum('e.amount as total')
  const balanceOf = (code: string) => sum(balances.find((row) => row.code === code)?.total)
  const clearing = {
    deposit: balanceOf('deposit_clearing'),
    receivable: balanceOf('deposit_receivable'),
    payout: balanceOf('payout_clearing'),
  }
  const owed = openReceivables.reduce((total, item) => total + item.amount, 0)
  if (!scope && clearing.deposit !== unclaimed.amount) {
    problems.push({
      kind: 'clearing_drift',
      detail: `deposit_clearing holds ${formatThb(clearing.deposit)} THB; the ${unclaimed.lines} unclaimed credit lines are ${formatThb(unclaimed.amount)} THB`,
    })
  }
  if (!scope && clearing.receivable !== -owed) {
    problems.push({
      kind: 'receivable_drift',
      detail: `deposit_receivable holds ${formatThb(-clearing.receivable)} THB; the ${openReceivables.length} open receivables are ${formatThb(owed)} THB`,
    })
  }

  // 5. Money out: every debit line accounted for, every transfer recorded.
  const money = await moneyOut(trx, now, scope, options.debitWindowBankDays)
  problems.push(...money.problems)
  const waiting = money.openTransfers.reduce((total, item) => total + item.amount, 0)
  if (!scope && clearing.payout !== waiting - money.unexplained.amount) {
    problems.push({
      kind: 'payout_clearing_drift',
      detail: `payout_clearing holds ${formatThb(clearing.payout)} THB; the ${money.openTransfers.length} transfers waiting for their debit line are ${formatThb(waiting)} THB and the ${money.unexplained.lines} unexplained debits ${formatThb(money.unexplained.amount)} THB`,
    })
  }

  // 6. What the bank printed, and what nobody may take twice.
  problems.push(...(await printedBalances(trx, scope, { unprinted, ledgerMoved })))
  problems.push(...(await transfersTwice(trx, scope)))
  if (!scope) problems.push(...(await unbackedReceivablePostings(trx)))

  return {
    ok: problems.length === 0,
    problems,
    days: [...days.values()].sort(
      (a, b) => a.depositAccountId - b.depositAccountId || a.day.localeCompare(b.day)
    ),
    openReceivables,
    openTransfers: money.openTransfers,
    unexplainedDebits: money.unexplained,
    unclaimed,
    clearing,
    windowHours,
  }
}

/**
 * Money out (docs/reconciliation.md, "Money out"): debit lines no transfer
 * or explanation accounts for, payouts and returns that left no record, and
 * the transfers still waiting for their debit line.
 */
async function moneyOut(
  trx: TransactionClientContract,
  now: Date,
  scope?: CheckScope,
  debitWindowBankDays = PAYOUT_DEBIT_WINDOW_BANK_DAYS
) {
  const problems: Problem[] = []
  const lines = lineScope(scope)
  const [debits] = await trx.rawQuery(
    `SELECT l.id, l.deposit_account_id, l.amount, l.line_at FROM statement_lines l ${lines.index}
      LEFT JOIN payout_confirmations p ON p.statement_line_id = l.id
      WHERE l.direction = 'debit' AND p.id IS NULL AND ${POSTED('l')}${lines.where} ORDER BY l.id`,
    lines.bindings as any[]
  )
  let amount = 0
  for (const row of debits) {
    amount += sum(row.amount)
    problems.push({
      kind: 'unexplained_debit',
      detail: `statement line #${row.id}: ${formatThb(sum(row.amount))} THB left deposit account ${row.deposit_account_id} and no payout, return or explanation accounts for it`,
      depositAccountId: Number(row.deposit_account_id),
    })
  }
  // Postings name no account: unscoped only.
  const [unrecorded] = scope
    ? [[]]
    : await trx.rawQuery(
        `SELECT t.id, t.kind, t.reference_id FROM ledger_transactions t
          WHERE (t.kind IN ('withdraw_success', 'settlement_success') AND NOT EXISTS (
                   SELECT 1 FROM payout_orders o JOIN payout_confirmations p ON p.payout_order_id = o.id
                    WHERE o.platform_order_id = t.reference_id))
             OR (t.kind = 'statement_line_return' AND NOT EXISTS (
                   SELECT 1 FROM payout_confirmations p WHERE p.returned_line_id = t.reference_id))`
      )
  for (const row of unrecorded as Array<Record<string, any>>) {
    problems.push({
      kind: 'transfer_unrecorded',
      detail: `ledger transaction ${row.id} (${row.kind}, ${row.reference_id}) sends money out with no transfer recorded for its debit line`,
    })
  }
  const [misfits] = await trx.rawQuery(
    `SELECT p.id, p.statement_line_id, p.amount, l.amount AS line_amount, l.direction,
            l.deposit_account_id
       FROM statement_lines l ${lines.index} JOIN payout_confirmations p ON p.statement_line_id = l.id
      WHERE (l.direction <> 'debit' OR l.amount <> p.amount)${lines.where}`,
    lines.bindings as any[]
  )
  for (const row of misfits) {
    problems.push({
      kind: 'debit_mismatch',
      detail: `statement line #${row.statement_line_id} (${row.direction}, ${formatThb(sum(row.line_amount))} THB) confirms a transfer of ${formatThb(sum(row.amount))} THB`,
      depositAccountId: Number(row.deposit_account_id),
    })
  }
  // A payout marked successful on an operator's word: its debit line comes
  // within the window, or the money may never have left. An open row has no
  // account yet (its line names it): unscoped only.
  const cutoff = new Date(
    gatewayPeriodStarts(now).dayStart.getTime() - debitWindowBankDays * 86_400_000
  )
  const [byHand] = scope
    ? [[]]
    : await trx.rawQuery(
        `SELECT p.id, p.actor, p.amount, p.created_at, o.kind, o.platform_order_id
           FROM payout_confirmations p JOIN payout_orders o ON o.id = p.payout_order_id
          WHERE p.statement_line_id IS NULL AND p.path = 'by_hand' AND p.created_at < ?
          ORDER BY p.id`,
        [cutoff]
      )
  for (const row of byHand as Array<Record<string, any>>) {
    problems.push({
      kind: 'payout_debit_missing',
      detail:
        `${row.kind} ${row.platform_order_id} was marked successful by ${row.actor} on ` +
        `${formatGatewayDateTime(new Date(row.created_at))} and no debit line of ${formatThb(sum(row.amount))} THB ` +
        `has confirmed it within ${debitWindowBankDays} bank days (payout confirmation ${row.id}): ` +
        `import the statements since, or confirm its line (lines:confirm <line> --payout=${row.platform_order_id})`,
    })
  }
  const open = await trx
    .from('payout_confirmations as p')
    .leftJoin('payout_orders as o', 'o.id', 'p.payout_order_id')
    .whereNull('p.statement_line_id')
    .if(scope, (query) => query.where('p.deposit_account_id', scope!.depositAccountId))
    .orderBy('p.created_at')
    .select(
      'p.id',
      'p.path',
      'p.amount',
      'p.created_at',
      'p.returned_line_id',
      'o.platform_order_id'
    )
  const openTransfers = open.map((row): OpenTransferItem => {
    const createdAt = new Date(row.created_at)
    return {
      confirmationId: Number(row.id),
      path: row.path,
      platformOrderId: row.platform_order_id ?? null,
      returnedLineId: row.returned_line_id === null ? null : Number(row.returned_line_id),
      amount: sum(row.amount),
      createdAt,
      ageHours: (now.getTime() - createdAt.getTime()) / 3_600_000,
    }
  })
  return { problems, openTransfers, unexplained: { lines: debits.length, amount } }
}

interface WalkRow {
  id: number
  accountId: number
  direction: 'credit' | 'debit'
  amount: number
  balance: number
  prevId: number | null
  prevBalance: number | null
  nextId: number | null
}

const signed = (row: { direction: string; amount: number }) =>
  row.direction === 'credit' ? row.amount : -row.amount

/**
 * The running balances the bank printed (balance_after), which no row of
 * ours adds up: an account's lines, walked in the bank's order, each
 * following the one before it (printed_balance_break: a line changed or
 * deleted after its import, which checked the chain); and the ledger's bank
 * account moved by the last printed balance less the one before the first
 * line, plus the lines that print none (printed_balance_drift).
 *
 * The bank's order is the line's time, then, for lines of one minute (a
 * KBank export prints no seconds), the order of their file: lines are stored
 * in the file's order, oldest or newest first. A file is newest first when
 * its first stored line is later than its last, or, all of one minute, when
 * its first two balances say so as the import read them (BalanceChain).
 * Two passes over the lines that print a balance (their files, then one
 * window in the bank's order); only the breaks and each account's first and
 * last line are read back.
 */
async function printedBalances(
  trx: TransactionClientContract,
  scope: CheckScope | undefined,
  moved: { unprinted: Map<number, number>; ledgerMoved: Map<number, number> }
): Promise<Problem[]> {
  const lines = lineScope(scope)
  const printed = `l.balance_after IS NOT NULL AND ${POSTED('l')}`
  const next = `SELECT n.%s FROM statement_lines n
                 WHERE n.import_id = f.import_id AND n.id > f.first_id
                   AND n.balance_after IS NOT NULL AND ${POSTED('n')}
                 ORDER BY n.id LIMIT 1`
  const [rows] = await trx.rawQuery(
    `WITH files AS (
       SELECT l.import_id, MIN(l.id) AS first_id, MAX(l.id) AS last_id
         FROM statement_lines l ${lines.index}
        WHERE ${printed}${lines.where}
        GROUP BY l.import_id
     ), file_order AS (
       SELECT f.import_id,
              CASE WHEN a.line_at > z.line_at THEN -1
                   WHEN a.line_at < z.line_at THEN 1
                   WHEN (${next.replace('%s', `balance_after - ${SIGNED('n')}`)}) = a.balance_after THEN 1
                   WHEN (${next.replace('%s', 'balance_after')}) = a.balance_after - ${SIGNED('a')} THEN -1
                   ELSE 1 END AS dir
         FROM files f
         JOIN statement_lines a ON a.id = f.first_id
         JOIN statement_lines z ON z.id = f.last_id
        -- One row per file already: grouped so that it is computed once per
        -- file, not merged into the walk and computed again for every line.
        GROUP BY f.import_id
     ), walk AS (
       SELECT l.id, l.deposit_account_id, l.direction, l.amount, l.balance_after,
              ROW_NUMBER() OVER w AS seq,
              LAG(l.id) OVER w AS prev_id,
              LAG(l.balance_after) OVER w AS prev_balance,
              LEAD(l.id) OVER w AS next_id
         FROM statement_lines l ${lines.index}
         JOIN file_order o ON o.import_id = l.import_id
        WHERE ${printed}${lines.where}
       WINDOW w AS (PARTITION BY l.deposit_account_id
                    ORDER BY l.line_at, l.import_id, o.dir * CAST(l.id AS SIGNED))
     )
     SELECT * FROM walk
      WHERE prev_id IS NULL OR next_id IS NULL
         OR prev_balance + ${SIGNED('walk')} <> balance_after
      ORDER BY deposit_account_id, seq`,
    [...lines.bindings, ...lines.bindings] as any[]
  )
  const walked: WalkRow[] = (rows as Array<Record<string, any>>).map((row) => ({
    id: Number(row.id),
    accountId: Number(row.deposit_account_id),
    direction: row.direction,
    amount: sum(row.amount),
    balance: sum(row.balance_after),
    prevId: row.prev_id === null ? null : Number(row.prev_id),
    prevBalance: row.prev_balance === null ? null : sum(row.prev_balance),
    nextId: row.next_id === null ? null : Number(row.next_id),
  }))

  const problems: Problem[] = []
  const ends = new Map<number, { first?: WalkRow; last?: WalkRow }>()
  // Breaks already named with the line before them.
  const named = new Set<number>()
  for (const [index, row] of walked.entries()) {
    const end = ends.get(row.accountId) ?? {}
    ends.set(row.accountId, end)
    if (row.prevId === null) end.first = row
    if (row.nextId === null) end.last = row
    if (row.prevId === null || named.has(row.id)) continue
    const expected = row.prevBalance! + signed(row)
    if (expected === row.balance) continue
    // A balance changed on one line breaks the chain on both sides of it,
    // while its neighbours still follow each other: one problem, that line.
    const after = walked[index + 1]
    if (after?.prevId === row.id && expected + signed(after) === after.balance) {
      named.add(after.id)
      problems.push({
        kind: 'printed_balance_break',
        detail:
          `deposit account ${row.accountId}: statement line #${row.id} prints a balance of ${formatThb(row.balance)} THB, ` +
          `where line #${row.prevId} before it (${formatThb(row.prevBalance!)} THB) and line #${after.id} after it ` +
          `(${formatThb(after.balance)} THB) say ${formatThb(expected)} THB: its balance was changed after import`,
        depositAccountId: row.accountId,
      })
      continue
    }
    problems.push({
      kind: 'printed_balance_break',
      detail:
        `deposit account ${row.accountId}: statement line #${row.id} (${row.direction} ${formatThb(row.amount)} THB) ` +
        `prints a balance of ${formatThb(row.balance)} THB after line #${row.prevId}'s ${formatThb(row.prevBalance!)} THB, ` +
        `where ${formatThb(expected)} THB follows: ${formatThb(row.balance - expected)} THB between them is not on ` +
        'the statement; a line was changed or deleted after import',
      depositAccountId: row.accountId,
    })
  }

  for (const [accountId, { first, last }] of ends) {
    if (!first || !last) continue
    const opening = first.balance - signed(first)
    const unprinted = moved.unprinted.get(accountId) ?? 0
    const expected = last.balance - opening + unprinted
    const ledger = moved.ledgerMoved.get(accountId) ?? 0
    if (ledger === expected) continue
    problems.push({
      kind: 'printed_balance_drift',
      detail:
        `deposit account ${accountId}: the bank printed ${formatThb(opening)} THB before statement line #${first.id} ` +
        `and ${formatThb(last.balance)} THB after line #${last.id}, ${formatThb(last.balance - opening)} THB net in` +
        (unprinted === 0
          ? ''
          : ` (${formatThb(expected)} THB with the lines that print no balance)`) +
        `; the ledger's bank account moved ${formatThb(ledger)} THB`,
      depositAccountId: accountId,
    })
  }
  return problems
}

/**
 * One bank transfer, one line, one claim (docs/reconciliation.md, "One
 * transfer, one line"). transfer_key is unique, but lines stored before it
 * (migration …130 left the second of a pair without a key) or written
 * around it are not: two lines of one direction and bank reference, on any
 * accounts, are one transfer stored twice (transfer_stored_twice). And a
 * claim naming a transfer (its trans_ref) that is a line another claim took
 * is one transfer credited twice (transfer_claimed_twice); the open
 * receivable of the line's own account is receipt_claimed_twice already.
 * Both start from the few rows that can be wrong (lines without a key,
 * claims naming a transfer) and reach the others through indexes.
 */
async function transfersTwice(
  trx: TransactionClientContract,
  scope: CheckScope | undefined
): Promise<Problem[]> {
  const problems: Problem[] = []
  const onAccount = scope ? ' AND (l.deposit_account_id = ? OR m.deposit_account_id = ?)' : ''
  const binding = scope ? [scope.depositAccountId, scope.depositAccountId] : []
  const [pairs] = await trx.rawQuery(
    `SELECT l.id, l.deposit_account_id, l.direction, l.trans_ref,
            m.id AS other_id, m.deposit_account_id AS other_account
       FROM statement_lines l
       JOIN statement_lines m ON m.trans_ref = l.trans_ref AND m.direction = l.direction
        AND m.id <> l.id AND ${BANK_REFERENCE('m')} AND ${POSTED('m')}
      WHERE l.transfer_key IS NULL AND ${BANK_REFERENCE('l')} AND ${POSTED('l')}${onAccount}`,
    binding
  )
  const transfers = new Map<
    string,
    { direction: string; ref: string; lines: Map<number, number> }
  >()
  for (const row of pairs as Array<Record<string, any>>) {
    const name = `${row.direction}|${row.trans_ref}`
    const transfer = transfers.get(name) ?? {
      direction: row.direction,
      ref: row.trans_ref,
      lines: new Map<number, number>(),
    }
    transfers.set(name, transfer)
    transfer.lines.set(Number(row.id), Number(row.deposit_account_id))
    transfer.lines.set(Number(row.other_id), Number(row.other_account))
  }
  for (const transfer of transfers.values()) {
    const ids = [...transfer.lines.keys()].sort((a, b) => a - b)
    const named = ids.map((id) => `#${id} (deposit account ${transfer.lines.get(id)})`)
    problems.push({
      kind: 'transfer_stored_twice',
      detail:
        `statement lines ${named.slice(0, -1).join(', ')} and ${named.at(-1)} are one ${transfer.direction} ` +
        `transfer, the bank's ${transfer.ref}: the bank moved its money once; check how each line was decided`,
      depositAccountId: transfer.lines.get(ids[0]),
    })
  }

  const [claims] = await trx.rawQuery(
    `SELECT c.id, c.path, c.trans_ref, c.deposit_account_id, co.platform_order_id,
            l.id AS line_id, l.deposit_account_id AS line_account,
            t.id AS taken_by, t.path AS taken_path, tco.platform_order_id AS taken_order
       FROM receipt_claims c
       JOIN statement_lines l ON l.trans_ref = c.trans_ref AND l.direction = 'credit'
        AND ${BANK_REFERENCE('l')} AND ${POSTED('l')}
       JOIN receipt_claims t ON t.statement_line_id = l.id AND t.id <> c.id
       LEFT JOIN payment_orders co ON co.id = c.payment_order_id
       LEFT JOIN payment_orders tco ON tco.id = t.payment_order_id
      WHERE c.trans_ref IS NOT NULL AND c.reversed_at IS NULL
        AND NOT (c.statement_line_id <=> l.id)
        AND NOT (c.statement_line_id IS NULL AND c.deposit_account_id = l.deposit_account_id)
        ${scope ? 'AND (c.deposit_account_id = ? OR l.deposit_account_id = ?)' : ''}
      ORDER BY c.id`,
    binding
  )
  for (const row of claims as Array<Record<string, any>>) {
    const of = (path: string, order: string | null) => (order ? `${path}, ${order}` : path)
    problems.push({
      kind: 'transfer_claimed_twice',
      detail:
        `claim ${row.id} (${of(row.path, row.platform_order_id)}) names the transfer ${row.trans_ref}, ` +
        `which is statement line #${row.line_id} of deposit account ${row.line_account}, taken by claim ` +
        `${row.taken_by} (${of(row.taken_path, row.taken_order)}): one transfer credited twice`,
      depositAccountId: Number(row.deposit_account_id),
    })
  }

  // A claim on a line names that line's transfer: a slip of another transfer
  // approved on it (before claims carried their line's transfer) took a line
  // that was not the slip's money, and the slip's transfer may be credited again.
  const [mismatched] = await trx.rawQuery(
    `SELECT c.id, c.path, c.trans_ref, c.deposit_account_id, l.id AS line_id, l.trans_ref AS line_ref
       FROM receipt_claims c
       JOIN statement_lines l ON l.id = c.statement_line_id AND ${BANK_REFERENCE('l')}
      WHERE c.trans_ref IS NOT NULL AND c.reversed_at IS NULL AND NOT (c.trans_ref <=> l.trans_ref)
        ${scope ? 'AND c.deposit_account_id = ?' : ''}
      ORDER BY c.id`,
    scope ? [scope.depositAccountId] : []
  )
  for (const row of mismatched as Array<Record<string, any>>) {
    problems.push({
      kind: 'claim_transfer_mismatch',
      detail:
        `claim ${row.id} (${row.path}) names the transfer ${row.trans_ref}, but its statement line ` +
        `#${row.line_id} is the bank's transfer ${row.line_ref}: check which transfer paid it`,
      depositAccountId: Number(row.deposit_account_id),
    })
  }
  return problems
}

/**
 * Every posting that moves deposit_receivable (a payment credited before its
 * line, the line clearing it, the credit taken back: app/ledger/recipes.ts)
 * is a claim's: the claim's own posting (ledger_transaction_id), or, for a
 * clearing, the claim of the payment that was a receivable and took the
 * posting's line; for a reversal, the payment's claim reversed; for the
 * upgrade's opening (migration …101), the payment's upgrade claim. Read
 * from the receivable account's entries (its index), whole database only:
 * postings name no deposit account.
 */
async function unbackedReceivablePostings(trx: TransactionClientContract): Promise<Problem[]> {
  const [rows] = await trx.rawQuery(
    `SELECT t.id, t.kind, t.reference_type, t.reference_id, SUM(e.amount) AS moved
       FROM ledger_accounts a
       JOIN ledger_entries e ON e.account_id = a.id
       JOIN ledger_transactions t ON t.id = e.transaction_id
      WHERE a.owner = ? AND a.code = 'deposit_receivable'
        AND NOT EXISTS (SELECT 1 FROM receipt_claims c WHERE c.ledger_transaction_id = t.id)
        AND NOT EXISTS (
          SELECT 1 FROM payment_orders o JOIN receipt_claims c ON c.payment_order_id = o.id
           WHERE t.reference_type = 'payment' AND o.platform_order_id = t.reference_id
             AND ((t.kind = 'receivable_opened' AND c.path = 'upgrade')
               OR ((c.path = 'upgrade' OR EXISTS (
                     SELECT 1 FROM ledger_entries r
                      WHERE r.transaction_id = c.ledger_transaction_id AND r.account_id = a.id))
                   AND ((t.kind = 'receivable_cleared'
                         AND t.idempotency_key = CONCAT('receivable_cleared:statement_line:', c.statement_line_id))
                     OR (t.kind = 'receivable_reversed' AND c.reversed_at IS NOT NULL)))))
      GROUP BY t.id, t.kind, t.reference_type, t.reference_id
      ORDER BY t.id`,
    [GATEWAY_OWNER]
  )
  return (rows as Array<Record<string, any>>).map((row) => ({
    kind: 'unbacked_receivable_posting' as const,
    detail:
      `ledger transaction ${row.id} (${row.kind}, ${row.reference_type} ${row.reference_id}) moves ` +
      `deposit_receivable by ${formatThb(sum(row.moved))} THB and no receipt claim accounts for it`,
  }))
}
