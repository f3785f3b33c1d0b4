import db from '@adonisjs/lucid/services/db'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import reconciliationConfig from '#config/reconciliation'
import { bankAccountCode, depositAccountOfCode, GATEWAY_OWNER } from '#ledger/accounts'
import { DEPOSIT_CREDIT_KINDS } from '#ledger/recipes'
import { formatThb } from '#core/money'
import { gatewayDaySql } from '#core/clock'
import type { Actor } from '#core/actor'

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

export async function verifyReconciliation(
  options: { now?: Date; windowHours?: number; scope?: CheckScope } = {}
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
  options: { now?: Date; windowHours?: number; scope?: CheckScope } = {}
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
            SUM(CASE WHEN l.direction = 'debit' THEN l.amount ELSE 0 END) AS debits
       FROM statement_lines l ${lines.index} WHERE 1 = 1${lines.where}
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
  for (const row of lineDays) {
    const entry = dayOf(Number(row.deposit_account_id), row.day)
    entry.credits = sum(row.credits)
    entry.debits = sum(row.debits)
  }
  for (const row of ledgerDays) {
    const accountId = depositAccountOfCode(row.code)
    if (accountId === null) continue
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
        AND l.trans_ref = c.trans_ref AND l.direction = 'credit'
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
    `SELECT COUNT(*) AS line_count, COALESCE(SUM(l.amount), 0) AS amount FROM statement_lines l
      LEFT JOIN receipt_claims c ON c.statement_line_id = l.id
      WHERE l.direction = 'credit' AND c.id IS NULL${byAccount}`,
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
  const money = await moneyOut(trx, now, scope)
  problems.push(...money.problems)
  const waiting = money.openTransfers.reduce((total, item) => total + item.amount, 0)
  if (!scope && clearing.payout !== waiting - money.unexplained.amount) {
    problems.push({
      kind: 'payout_clearing_drift',
      detail: `payout_clearing holds ${formatThb(clearing.payout)} THB; the ${money.openTransfers.length} transfers waiting for their debit line are ${formatThb(waiting)} THB and the ${money.unexplained.lines} unexplained debits ${formatThb(money.unexplained.amount)} THB`,
    })
  }

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
async function moneyOut(trx: TransactionClientContract, now: Date, scope?: CheckScope) {
  const problems: Problem[] = []
  const lines = lineScope(scope)
  const [debits] = await trx.rawQuery(
    `SELECT l.id, l.deposit_account_id, l.amount, l.line_at FROM statement_lines l ${lines.index}
      LEFT JOIN payout_confirmations p ON p.statement_line_id = l.id
      WHERE l.direction = 'debit' AND p.id IS NULL${lines.where} ORDER BY l.id`,
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
