import db from '@adonisjs/lucid/services/db'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { refuseUnless, refusedColumn, statement, type SqlClient } from '#core/sql_batch'
import type DepositAccount from '#payments/models/deposit_account'

/**
 * transfer_amount slots as rows (deposit_slots): one per account and amount
 * ever handed out, `held` while an order holds it. The order keeps the amount
 * in payment_orders.slot_amount, whose unique key still makes a shared
 * transfer_amount impossible; the row is what makes finding a free amount one
 * index lookup instead of a read of every held amount. Taking an amount is
 * two steps: the amount itself in the create's first batch
 * (takeAmountStatement; on a busy account the amount or one of the next few,
 * chooseSlotStatement), and only when that is refused the rest of its range
 * (reserveSlotAbove).
 */

/**
 * The statement that takes `amount` itself for the caller's transaction,
 * sent with the create's first statements: its row is created held, or a
 * free row is taken. It is refused (refusedColumn 'held') when an order holds
 * the amount, and fails at once (1205, lock wait timeout 0) while another
 * create is taking or releasing it; either way the statement alone is undone
 * and reserveSlotAbove() looks further. It never waits: creates waiting on
 * one new row that is then rolled back (a create refused for limits) would
 * deadlock one another.
 */
export function takeAmountStatement(accountId: number, amount: number) {
  return statement(
    `SET STATEMENT innodb_lock_wait_timeout = 0 FOR
     INSERT INTO deposit_slots (deposit_account_id, slot_amount, held) VALUES (?, ?, 1)
     ON DUPLICATE KEY UPDATE held = ${refuseUnless('held = 0', '1')}`,
    [accountId, amount]
  )
}

/**
 * The session variable in which a create's batch carries the transfer_amount
 * it chose (chooseSlotStatement): the order's transfer_amount and
 * slot_amount and its count are this expression.
 */
export const CHOSEN_SLOT = statement('@gw_slot')

/**
 * The most amounts from the one asked for a busy account's create offers in
 * its one statement (chooseSlotStatement): the amount itself and the next
 * seven; fewer when the account's recent creates went less far
 * (heldAmounts.windowWidth). A longer run of held amounts is left to
 * reserveSlotAbove.
 */
export const SLOT_WINDOW = 8

/**
 * The statement that chooses a transfer_amount inside the create's one round
 * trip, so that a busy account (the amount itself held by an open order)
 * costs no more than an idle one: the smallest free amount of amount …
 * amount + width - 1 (at most SLOT_WINDOW amounts, within max_adjustment),
 * its row created held or a free row marked held, CHOSEN_SLOT set to it;
 * CHOSEN_SLOT is NULL when every one of them is held, and the order's NOT
 * NULL transfer_amount then refuses the create (isAmountTaken), which goes
 * on from the locked account row with reserveSlotAbove. chosenSlot() reads
 * the choice from the statement's own answer.
 *
 * One multi-row INSERT … ON DUPLICATE KEY UPDATE, because MariaDB's cost is
 * per statement (a search of the free rows and the gaps cost about three
 * statements more, docs/performance.md). Rows are written in order, each
 * row's values evaluated just before it is written: `@gw_prev` keeps whether
 * an earlier row was chosen, so a row is taken only when none was, and rows
 * past the chosen one name it again and leave it as it is. It never waits for a
 * row another create is taking (1205 at once, isAmountTaken). The order's
 * unique (deposit_account_id, slot_amount) stays the last word.
 */
export function chooseSlotStatement(
  account: Pick<DepositAccount, 'id' | 'maxAdjustment'>,
  amount: number,
  width = SLOT_WINDOW
) {
  const count = Math.max(1, Math.min(width, SLOT_WINDOW, account.maxAdjustment + 1))
  const bindings: number[] = []
  for (let k = 0; k < count; k++) bindings.push(account.id, amount + k, amount + k)
  return statement(windowSql(count), bindings)
}

const windowSqls = new Map<number, string>()

/** The window's SQL for `count` amounts: the same text for every create of that size. */
function windowSql(count: number) {
  let sql = windowSqls.get(count)
  if (sql) return sql
  const slot = CHOSEN_SLOT.sql
  // LAST_INSERT_ID(x) makes x the statement's insert id in its answer
  // (chosenSlot), as MariaDB documents for sequences: 0 when none was chosen.
  const rows = [`(?, ?, (@gw_prev := NULL) IS NULL AND (${slot} := LAST_INSERT_ID(?)) IS NOT NULL)`]
  for (let k = 1; k < count; k++) {
    // Once an amount is chosen, the rows after it name the chosen row again
    // (left as it is) rather than create rows for amounts nobody asked for.
    rows.push(
      `(?, IFNULL(${slot}, ?), (@gw_prev := ${slot}) IS NULL AND (${slot} := LAST_INSERT_ID(?)) IS NOT NULL)`
    )
  }
  sql = `SET STATEMENT innodb_lock_wait_timeout = 0 FOR
    INSERT INTO deposit_slots (deposit_account_id, slot_amount, held) VALUES ${rows.join(', ')}
    ON DUPLICATE KEY UPDATE held = IF(@gw_prev IS NOT NULL, held,
      IF(held = 0, 1, (${slot} := NULL) OR LAST_INSERT_ID(0) OR held))`
  windowSqls.set(count, sql)
  return sql
}

/**
 * Per deposit account, how often this process's recent creates found the
 * amount they asked for already held (a moving average). Past a fifth, a
 * create offers the next amounts too (chooseSlotStatement) rather than learn
 * it from a refused batch and four more round trips; below, it sends
 * takeAmountStatement alone, which writes one row where the other creates a
 * row for each amount it offers that has none yet.
 *
 * It also keeps how far above the asked amount recent creates had to go
 * (the reach), and the window offers that far and one amount more: each
 * amount offered costs MariaDB a row, 5 to 25 µs (docs/performance.md). The
 * reach follows a longer run at once and shrinks by 1 % a create, because a
 * window too short costs the locked-row path's round trips.
 * Either way the database decides: a wrong guess costs time, never a slot.
 */
class HeldAmounts {
  static readonly WEIGHT = 0.05
  static readonly SEARCH_FIRST_ABOVE = 0.2
  /** What a create that went less far keeps of the reach. */
  static readonly REACH_KEPT = 0.99
  #rates = new Map<number, number>()
  #reaches = new Map<number, number>()

  /** Forgets every account: their ids start again (a database emptied under the process). */
  clear() {
    this.#rates.clear()
    this.#reaches.clear()
  }

  searchFirst(accountId: number) {
    return (this.#rates.get(accountId) ?? 0) > HeldAmounts.SEARCH_FIRST_ABOVE
  }

  /** How many amounts a busy account's window offers: SLOT_WINDOW until a reach is known. */
  windowWidth(accountId: number) {
    const reach = this.#reaches.get(accountId)
    return reach === undefined ? SLOT_WINDOW : Math.min(SLOT_WINDOW, Math.floor(reach) + 2)
  }

  /**
   * One create's outcome: whether the amount asked for was held and, when
   * it is known, how many satang above it the amount taken was (`reach`).
   */
  record(accountId: number, held: boolean, reach?: number) {
    const rate = this.#rates.get(accountId) ?? 0
    this.#rates.set(accountId, rate + HeldAmounts.WEIGHT * ((held ? 1 : 0) - rate))
    if (reach !== undefined) {
      const kept = (this.#reaches.get(accountId) ?? reach) * HeldAmounts.REACH_KEPT
      this.#reaches.set(accountId, Math.max(reach, kept))
    }
  }
}

export const heldAmounts = new HeldAmounts()

/**
 * The transfer_amount chooseSlotStatement() chose, from its answer (the
 * insert id it set); null when every amount it offered was held.
 */
export function chosenSlot(result: { insertId: number | string }) {
  const value = Number(result.insertId)
  return value > 0 ? value : null
}

/**
 * Whether takeAmountStatement() or chooseSlotStatement() (or the order that
 * takes CHOSEN_SLOT) failed because the amount is held or being taken (or,
 * for the latter, every amount it offered is).
 */
export function isAmountTaken(error: unknown) {
  const column = refusedColumn(error)
  return (
    column === 'held' ||
    column === 'transfer_amount' ||
    (error as { errno?: number }).errno === 1205
  )
}

/**
 * After takeAmountStatement() was refused: the smallest free amount + k
 * satang (1 ≤ k ≤ max_adjustment) on the account, or null when every one is
 * held. A free row is locked with SKIP LOCKED, so creates on one account
 * never wait for one another here: a row another create is taking (or an
 * order is releasing) counts as held. An amount of the range that has no row
 * yet is created held; the primary key gives an amount two creates race for
 * to one.
 */
export async function reserveSlotAbove(
  trx: SqlClient,
  account: Pick<DepositAccount, 'id' | 'maxAdjustment'>,
  amount: number
): Promise<number | null> {
  const top = amount + account.maxAdjustment
  if (top === amount) return null
  let free = await lockFreeRow(trx, account.id, amount + 1, top)
  if (free === null) {
    // Every row of the range is held or being taken: the range grows by one
    // amount. Creates growing one range take turns on the row of its first
    // amount (locked to their commit), so that they do not all race for the
    // same new amount; a row freed meanwhile is taken instead.
    await trx.rawQuery(
      'SELECT held FROM deposit_slots WHERE deposit_account_id = ? AND slot_amount = ? FOR UPDATE',
      [account.id, amount]
    )
    free = await lockFreeRow(trx, account.id, amount, top)
  }
  if (free !== null) {
    await trx.rawQuery(
      'UPDATE deposit_slots SET held = 1 WHERE deposit_account_id = ? AND slot_amount = ?',
      [account.id, free]
    )
    return free
  }

  // The smallest amount of the range that has no row yet. Rare once an
  // account has been used at an amount for a while.
  const [existing] = await trx.rawQuery(
    'SELECT slot_amount FROM deposit_slots WHERE deposit_account_id = ? AND slot_amount BETWEEN ? AND ?',
    [account.id, amount, top]
  )
  const taken = new Set<number>(
    existing.map((row: { slot_amount: number | string }) => Number(row.slot_amount))
  )
  // From the amount itself: the create that held it up may have rolled back.
  for (let candidate = amount; candidate <= top; candidate++) {
    if (!taken.has(candidate) && (await insertHeld(trx, account.id, candidate))) return candidate
  }
  return null
}

/**
 * Marks a slot held that an order holds while its row says free: only a hand
 * edit of the tables makes one, and the order insert's unique key refused the
 * amount (see CreatePayment). deposit-usage:verify reports such drift.
 */
export async function markSlotHeldByOrder(accountId: number, slotAmount: number) {
  await db.rawQuery(
    `UPDATE deposit_slots SET held = 1
      WHERE deposit_account_id = ? AND slot_amount = ?
        AND EXISTS (SELECT 1 FROM payment_orders WHERE deposit_account_id = ? AND slot_amount = ?)`,
    [accountId, slotAmount, accountId, slotAmount]
  )
}

/** The smallest free row of amount … top, locked; rows other transactions hold are skipped. */
async function lockFreeRow(
  trx: SqlClient,
  accountId: number,
  amount: number,
  top: number
): Promise<number | null> {
  const [rows] = await trx.rawQuery(
    // The (account, held, amount) index: only free entries are read, never the held ones.
    `SELECT slot_amount FROM deposit_slots FORCE INDEX (deposit_slots_free_index)
      WHERE deposit_account_id = ? AND held = 0 AND slot_amount BETWEEN ? AND ?
      ORDER BY slot_amount LIMIT 1
      FOR UPDATE SKIP LOCKED`,
    [accountId, amount, top]
  )
  return rows.length > 0 ? Number(rows[0].slot_amount) : null
}

/**
 * Creates the amount's row, held; false when another create made it first or
 * is making it now. It never waits for that other create: several creates
 * waiting on one new row that is then rolled back (a create refused for
 * limits) would deadlock one another, so the next amount is tried instead.
 */
async function insertHeld(trx: SqlClient, accountId: number, amount: number) {
  try {
    await trx.rawQuery(
      `SET STATEMENT innodb_lock_wait_timeout = 0 FOR
       INSERT INTO deposit_slots (deposit_account_id, slot_amount, held) VALUES (?, ?, 1)`,
      [accountId, amount]
    )
    return true
  } catch (error) {
    // 1062: the row exists; 1205: another transaction is inserting it (only
    // this statement is undone, the transaction goes on).
    const errno = (error as { errno?: number }).errno
    if (errno === 1062 || errno === 1205) return false
    throw error
  }
}

/** Frees the amount an order held, in the transaction that clears its slot_amount. */
export async function releaseSlot(
  trx: TransactionClientContract,
  accountId: number,
  slotAmount: number
) {
  await trx
    .from('deposit_slots')
    .where('deposit_account_id', accountId)
    .where('slot_amount', slotAmount)
    .update({ held: false })
}

/**
 * releaseSlot for many amounts at once (a statement import paying a batch of
 * orders): one UPDATE per deposit account, accounts and amounts in order so
 * that concurrent imports lock rows in the same order.
 */
export async function releaseSlots(
  trx: TransactionClientContract,
  slots: Array<{ accountId: number; slotAmount: number }>
) {
  const byAccount = new Map<number, number[]>()
  for (const { accountId, slotAmount } of slots) {
    const amounts = byAccount.get(accountId) ?? []
    amounts.push(slotAmount)
    byAccount.set(accountId, amounts)
  }
  for (const [accountId, amounts] of [...byAccount.entries()].sort(([a], [b]) => a - b)) {
    await trx
      .from('deposit_slots')
      .where('deposit_account_id', accountId)
      .whereIn(
        'slot_amount',
        amounts.sort((a, b) => a - b)
      )
      .update({ held: false })
  }
}
