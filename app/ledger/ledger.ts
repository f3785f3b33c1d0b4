import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import {
  bankAccountCode,
  GATEWAY_ACCOUNTS,
  GATEWAY_OWNER,
  MERCHANT_ACCOUNTS,
  type GatewayAccountCode,
  type MerchantAccountCode,
  type BalanceColumn,
} from '#ledger/accounts'
import {
  DuplicatePostingError,
  InsufficientBalanceError,
  LedgerImbalanceError,
} from '#ledger/errors'
import { isDuplicateKey } from '#core/db_retry'
import { assertSatang } from '#core/money'
import {
  duplicateKeyName,
  refuseUnless,
  refusedColumn,
  runStatement,
  statement,
  type Statement,
} from '#core/sql_batch'

export type LedgerLeg =
  | { merchantId: number; account: MerchantAccountCode; amount: number }
  | { gateway: GatewayAccountCode; amount: number }
  /** The bank account of a deposit account (its id): money held at the bank. */
  | { bank: number; amount: number }

export interface LedgerPosting {
  kind: string
  reference?: { type: string; id: string }
  /**
   * At most one posting exists per key (unique in the database). Default:
   * kind:reference_type:reference_id, so that an order's hold, its success
   * or its settlement can never be posted twice, whoever tries.
   */
  idempotencyKey?: string
  description?: string
  /** The bank day (GMT+7, YYYY-MM-DD) of a posting on a bank account. */
  valueDate?: string
  legs: LedgerLeg[]
  /**
   * Merchant accounts that must not go below zero after this posting (holds
   * and withdrawals). Enforced by a conditional UPDATE on the projection row,
   * never by reading first, so concurrent postings cannot overdraw.
   */
  nonNegative?: MerchantAccountCode[]
}

export interface MerchantBalance {
  balance: number
  freezeBalance: number
  unsettleBalance: number
}

/**
 * Writes one balanced ledger transaction and updates the merchant_balances
 * projection, inside the caller's database transaction: the caller's order
 * change, these entries and its callback outbox row commit or roll back
 * together.
 */
export async function postLedgerTransaction(
  trx: TransactionClientContract,
  posting: LedgerPosting
) {
  validate(posting)

  const idempotencyKey = idempotencyKeyOf(posting)
  let transactionId: number
  try {
    ;[transactionId] = await trx
      .insertQuery()
      .table('ledger_transactions')
      .insert(transactionRow(posting, idempotencyKey, new Date()))
  } catch (error) {
    if (idempotencyKey && isDuplicateKey(error)) throw new DuplicatePostingError(idempotencyKey)
    throw error
  }

  const accountIds = await resolveAccountIds(trx, uniqueKeys(posting.legs.map(legKey)))
  await trx
    .insertQuery()
    .table('ledger_entries')
    .multiInsert(entryRows(posting, Number(transactionId), accountIds))

  // Projection last: its UPDATE locks the merchant's balance row, which every
  // posting of the merchant needs, until the caller commits, so it is taken
  // as late as possible (callers post last, too). A guarded account that
  // would go negative fails it, and the caller rolls everything back.
  for (const [merchantId, columns] of projectionDeltas([posting])) {
    await applyProjection(trx, merchantId, columns, posting.nonNegative ?? [])
  }
  return Number(transactionId)
}

/**
 * Many postings at once, inside the caller's database transaction, each
 * exactly as `postLedgerTransaction` would write it (the same validation,
 * idempotency keys, transaction rows and entries) but in a fixed number of
 * statements whatever their number: one multi-row INSERT of the
 * transactions, one account lookup, one multi-row INSERT of the entries,
 * then one projection UPDATE per merchant (the postings' deltas summed, in
 * merchant id order).
 * A guarded account (nonNegative) must not go below zero by the postings'
 * sum; all or nothing, so no intermediate state is ever committed. Every
 * posting needs an idempotency key (a reference, or its own key): a key
 * already posted throws DuplicatePostingError and the caller's transaction
 * must roll back. Returns the transaction ids in the postings' order.
 */
export async function postLedgerTransactions(
  trx: TransactionClientContract,
  postings: LedgerPosting[]
): Promise<number[]> {
  if (postings.length === 0) return []
  const keys: string[] = []
  for (const posting of postings) {
    validate(posting)
    const key = idempotencyKeyOf(posting)
    if (!key) throw new LedgerImbalanceError(`A bulk posting of "${posting.kind}" needs a key`)
    keys.push(key)
  }
  if (new Set(keys).size !== keys.length) {
    throw new DuplicatePostingError(keys.find((key, index) => keys.indexOf(key) !== index)!)
  }

  const now = new Date()
  const rows = postings.map((posting, index) => transactionRow(posting, keys[index], now))
  const columns = Object.keys(rows[0])
  let inserted: Array<{ id: number | string; idempotency_key: string }>
  try {
    ;[inserted] = await trx.rawQuery(
      `INSERT INTO ledger_transactions (${columns.join(', ')}) VALUES ${rows
        .map(() => `(${columns.map(() => '?').join(', ')})`)
        .join(', ')} RETURNING id, idempotency_key`,
      rows.flatMap((row) => Object.values(row)) as any[]
    )
  } catch (error) {
    if (!isDuplicateKey(error)) throw error
    const posted = await trx
      .from('ledger_transactions')
      .whereIn('idempotency_key', keys)
      .select('idempotency_key')
      .first()
    throw new DuplicatePostingError(posted?.idempotency_key ?? keys[0])
  }
  const idByKey = new Map(inserted.map((row) => [row.idempotency_key, Number(row.id)]))

  const accountIds = await resolveAccountIds(
    trx,
    uniqueKeys(postings.flatMap((posting) => posting.legs.map(legKey)))
  )
  const ids = keys.map((key) => idByKey.get(key)!)
  await trx
    .insertQuery()
    .table('ledger_entries')
    .multiInsert(postings.flatMap((posting, index) => entryRows(posting, ids[index], accountIds)))

  // Projection last, as postLedgerTransaction writes it: the balance rows stay
  // locked from here to the caller's commit.
  const guarded = new Set(postings.flatMap((posting) => posting.nonNegative ?? []))
  for (const [merchantId, deltas] of projectionDeltas(postings)) {
    await applyProjection(trx, merchantId, deltas, [...guarded])
  }
  return ids
}

/** The merchant_balances deltas of postings: merchant → column → sum, in merchant id order. */
function projectionDeltas(postings: LedgerPosting[]) {
  const deltas = new Map<number, Record<string, number>>()
  for (const posting of postings) {
    for (const leg of posting.legs) {
      if ('merchantId' in leg) {
        const row = deltas.get(leg.merchantId) ?? {}
        const column = MERCHANT_ACCOUNTS[leg.account]
        row[column] = (row[column] ?? 0) + leg.amount
        deltas.set(leg.merchantId, row)
      }
    }
  }
  return [...deltas.entries()].sort(([a], [b]) => a - b)
}

function transactionRow(posting: LedgerPosting, idempotencyKey: string | null, now: Date) {
  return {
    kind: posting.kind,
    reference_type: posting.reference?.type ?? null,
    reference_id: posting.reference?.id ?? null,
    idempotency_key: idempotencyKey,
    description: posting.description ?? null,
    value_date: posting.valueDate ?? null,
    created_at: now,
  }
}

/** The ledger account a leg moves: a merchant's, or the gateway's. */
function legKey(leg: LedgerLeg) {
  if ('merchantId' in leg) return { owner: String(leg.merchantId), code: leg.account as string }
  if ('bank' in leg) return { owner: GATEWAY_OWNER, code: bankAccountCode(leg.bank) }
  return { owner: GATEWAY_OWNER, code: leg.gateway as string }
}

function uniqueKeys(keys: Array<{ owner: string; code: string }>) {
  return [...new Map(keys.map((key) => [`${key.owner}:${key.code}`, key])).values()]
}

/** One ledger_entries row per leg, in the legs' order. */
function entryRows(posting: LedgerPosting, transactionId: number, accountIds: Map<string, number>) {
  return posting.legs.map((leg) => {
    const { owner, code } = legKey(leg)
    return {
      transaction_id: transactionId,
      account_id: accountIds.get(`${owner}:${code}`)!,
      amount: leg.amount,
    }
  })
}

function idempotencyKeyOf(posting: LedgerPosting): string | null {
  if (posting.idempotencyKey) return posting.idempotencyKey
  if (!posting.reference) return null
  return `${posting.kind}:${posting.reference.type}:${posting.reference.id}`
}

/** Opens the three accounts and the zero balance row of a new merchant. */
export async function openMerchantAccounts(trx: TransactionClientContract, merchantId: number) {
  const now = new Date()
  await trx
    .insertQuery()
    .table('ledger_accounts')
    .multiInsert(
      Object.keys(MERCHANT_ACCOUNTS).map((code) => ({
        merchant_id: merchantId,
        owner: String(merchantId),
        code,
        created_at: now,
      }))
    )
  await trx.insertQuery().table('merchant_balances').insert({
    merchant_id: merchantId,
    balance: 0,
    freeze_balance: 0,
    unsettle_balance: 0,
    updated_at: now,
  })
}

/**
 * Flags the merchant when a posting that may not be refused (the bank has
 * paid, a credit the bank never received is taken back) left its balance
 * below zero: operators see it among the merchants to follow up.
 */
export async function flagNegativeBalance(trx: TransactionClientContract, merchantId: number) {
  const row = await trx
    .from('merchant_balances')
    .where('merchant_id', merchantId)
    .select('balance')
    .firstOrFail()
  if (Number(row.balance) < 0) {
    await trx.from('merchants').where('id', merchantId).update({ negative_balance_flag: true })
  }
}

export async function readMerchantBalance(merchantId: number): Promise<MerchantBalance> {
  const [row] = await runStatement(
    statement(
      'SELECT balance, freeze_balance, unsettle_balance FROM merchant_balances WHERE merchant_id = ?',
      [merchantId]
    )
  )
  if (!row) throw new Error(`Merchant ${merchantId} has no balance row`)
  return {
    balance: assertSatang(row.balance),
    freezeBalance: assertSatang(row.freeze_balance),
    unsettleBalance: assertSatang(row.unsettle_balance),
  }
}

function validate(posting: LedgerPosting) {
  if (posting.legs.length < 2) {
    throw new LedgerImbalanceError('A ledger transaction needs at least two entries')
  }
  let sum = 0
  for (const leg of posting.legs) {
    if (!Number.isSafeInteger(leg.amount) || leg.amount === 0) {
      throw new LedgerImbalanceError(
        `Entry amounts must be non-zero satang integers, got ${leg.amount}`
      )
    }
    if ('gateway' in leg && !GATEWAY_ACCOUNTS.includes(leg.gateway)) {
      throw new LedgerImbalanceError(`Unknown gateway account ${leg.gateway}`)
    }
    if ('bank' in leg && !(Number.isSafeInteger(leg.bank) && leg.bank > 0)) {
      throw new LedgerImbalanceError(`Unknown deposit account ${leg.bank}`)
    }
    sum += leg.amount
  }
  if (sum !== 0) {
    throw new LedgerImbalanceError(`Entries of "${posting.kind}" sum to ${sum}, not zero`)
  }
}

/**
 * The projection UPDATE of one merchant's deltas. A guarded column that would
 * go below zero is set to NULL, which the NOT NULL column refuses (strict
 * mode, every session): the statement fails, and so does a batch it is in
 * (refuseUnless in app/core/sql_batch.ts; ledgerRefusal names the error).
 */
function projectionStatement(
  merchantId: number,
  deltas: Record<string, number>,
  nonNegative: MerchantAccountCode[]
): Statement {
  const guarded = new Set<string>(nonNegative.map((code) => MERCHANT_ACCOUNTS[code]))
  // Column names come from MERCHANT_ACCOUNTS, never from input; values are bound.
  const sets = Object.keys(deltas).map((column) =>
    guarded.has(column)
      ? `${column} = ${refuseUnless(`${column} + ? >= 0`, `${column} + ?`)}`
      : `${column} = ${column} + ?`
  )
  return statement(
    `UPDATE merchant_balances SET ${sets.join(', ')}, updated_at = ? WHERE merchant_id = ?`,
    [
      ...Object.entries(deltas).flatMap(([column, delta]) =>
        guarded.has(column) ? [delta, delta] : [delta]
      ),
      new Date(),
      merchantId,
    ]
  )
}

async function applyProjection(
  trx: TransactionClientContract,
  merchantId: number,
  deltas: Record<string, number>,
  nonNegative: MerchantAccountCode[]
) {
  const { sql, bindings } = projectionStatement(merchantId, deltas, nonNegative)
  let result: { affectedRows: number }
  try {
    ;[result] = await trx.rawQuery(sql, bindings as any[])
  } catch (error) {
    if (isBalanceRefusal(error)) throw new InsufficientBalanceError(merchantId)
    throw error
  }
  if (result.affectedRows !== 1) throw new Error(`Merchant ${merchantId} has no balance row`)
}

/** Whether the database refused a projection UPDATE because a guarded balance would go negative. */
function isBalanceRefusal(error: unknown) {
  const column = refusedColumn(error)
  return column !== null && Object.values(MERCHANT_ACCOUNTS).includes(column as BalanceColumn)
}

/**
 * Ids of the accounts a posting touches, in one query. Gateway accounts are
 * opened on first use (INSERT IGNORE: two processes opening the same account
 * at once is harmless); a merchant account must exist.
 */
async function resolveAccountIds(
  trx: TransactionClientContract,
  keys: Array<{ owner: string; code: string }>
): Promise<Map<string, number>> {
  const lookup = (locking = false) => {
    const query = trx
      .from('ledger_accounts')
      .where((where) => {
        for (const { owner, code } of keys) where.orWhere((pair) => pair.where({ owner, code }))
      })
      .select('id', 'owner', 'code')
    return locking ? query.forShare() : query
  }
  const found = new Map<string, number>()
  const remember = (rows: Array<{ id: number; owner: string; code: string }>) => {
    for (const row of rows) found.set(`${row.owner}:${row.code}`, row.id)
  }
  remember(await lookup())

  const missing = keys.filter(({ owner, code }) => !found.has(`${owner}:${code}`))
  if (missing.length === 0) return found
  const merchantMissing = missing.find(({ owner }) => owner !== GATEWAY_OWNER)
  if (merchantMissing) {
    throw new Error(
      `Merchant ${merchantMissing.owner} has no ${merchantMissing.code} ledger account`
    )
  }
  for (const { code } of missing) {
    const { sql, bindings } = openGatewayAccountStatement(code)
    await trx.rawQuery(sql, bindings as any[])
  }
  // A locking read: when another transaction opened the account first, our
  // INSERT IGNORE waited for it and did nothing, and a plain read would still
  // see this transaction's older snapshot, without the row.
  remember(await lookup(true))
  return found
}

/**
 * Locks the ledger account of a deposit account's bank account (opened if
 * new) until the caller commits. Whoever decides whether a deposit account
 * received some money holds it: a statement import while it stores the
 * account's lines, and a payment marked paid while it looks for its line
 * and, finding none, opens a receivable. So a line and the receivable it
 * would clear are never written at once without seeing each other.
 */
export async function lockBankAccount(trx: TransactionClientContract, depositAccountId: number) {
  const code = bankAccountCode(depositAccountId)
  const { sql, bindings } = openGatewayAccountStatement(code)
  await trx.rawQuery(sql, bindings as any[])
  await trx.rawQuery('SELECT id FROM ledger_accounts WHERE owner = ? AND code = ? FOR UPDATE', [
    GATEWAY_OWNER,
    code,
  ])
}

/** Opens a gateway account on its first use (INSERT IGNORE: two at once is harmless). */
function openGatewayAccountStatement(code: string) {
  return statement(
    'INSERT IGNORE INTO ledger_accounts (merchant_id, owner, code, created_at) VALUES (NULL, ?, ?, ?)',
    [GATEWAY_OWNER, code, new Date()]
  )
}

/**
 * postLedgerTransaction's writes as statements for a batch that ends in its
 * COMMIT (app/core/sql_batch.ts), for the hot paths: the statements write
 * the transaction row, its entries (LAST_INSERT_ID(): the row just written)
 * and the projection, whose merchant balance row lock every posting of the
 * merchant needs, and which the batch holds only inside the server. A
 * guarded account that would go below zero refuses its statement, and so
 * the batch; ledgerRefusal() turns that into InsufficientBalanceError.
 * The accounts' ids are read inside the batch, with no round trip of their
 * own: a gateway account is opened first if it is new (the batch's READ
 * COMMITTED statements then see it, even when another transaction opened
 * it), and a merchant account, which exists from the merchant's creation,
 * is never opened here: a missing one leaves account_id NULL, which the NOT
 * NULL column refuses.
 */
export function postingStatements(posting: LedgerPosting): Statement[] {
  validate(posting)
  const row = transactionRow(posting, idempotencyKeyOf(posting), new Date())
  const columns = Object.keys(row)
  const keys = posting.legs.map(legKey)
  return [
    ...uniqueKeys(keys)
      .filter(({ owner }) => owner === GATEWAY_OWNER)
      .map(({ code }) => openGatewayAccountStatement(code)),
    statement(
      `INSERT INTO ledger_transactions (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
      Object.values(row)
    ),
    statement(
      `INSERT INTO ledger_entries (transaction_id, account_id, amount) VALUES ${keys
        .map(
          () =>
            '(LAST_INSERT_ID(), (SELECT id FROM ledger_accounts WHERE owner = ? AND code = ?), ?)'
        )
        .join(', ')}`,
      keys.flatMap(({ owner, code }, index) => [owner, code, posting.legs[index].amount])
    ),
    ...projectionDeltas([posting]).map(([merchantId, deltas]) =>
      projectionStatement(merchantId, deltas, posting.nonNegative ?? [])
    ),
  ]
}

/** The ledger's error for a batch with postingStatements() that the database refused, or null. */
export function ledgerRefusal(error: unknown, posting: LedgerPosting, merchantId: number) {
  if (isBalanceRefusal(error)) return new InsufficientBalanceError(merchantId)
  const key = idempotencyKeyOf(posting)
  if (key && duplicateKeyName(error)?.startsWith('ledger_transactions')) {
    return new DuplicatePostingError(key)
  }
  return null
}
