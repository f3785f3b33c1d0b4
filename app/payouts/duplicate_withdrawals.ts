import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import { DuplicateWithdrawal } from '#core/refusals'
import { formatAmount } from '#core/money'
import { refuseUnless, refusedColumn, statement } from '#core/sql_batch'

/**
 * Spec: a withdrawal with the same bank, account and amount as one made in
 * the last 3 minutes is refused (DuplicateWithdrawal), where the merchant's
 * withdraw_duplicate_check is on.
 */
export const DUPLICATE_WINDOW_MINUTES = 3

interface Withdrawal {
  bank: string
  accountNo: string
  amount: number
}

/**
 * The statement that records a withdrawal in payout_duplicate_guards, in the
 * transaction that creates it. With `enforce`, a withdrawal of the same
 * bank, account and amount in the window refuses it (asDuplicateWithdrawal).
 * It is recorded whether or not the check is on, so that switching the check
 * on sees the withdrawals made just before. A concurrent identical
 * withdrawal waits for this transaction's row lock, then is refused if it
 * commits.
 */
export function recordWithdrawalStatement(
  merchantId: number,
  withdrawal: Withdrawal,
  at: DateTime,
  enforce: boolean
) {
  const windowStart = at.minus({ minutes: DUPLICATE_WINDOW_MINUTES }).toJSDate()
  return statement(
    `INSERT INTO payout_duplicate_guards (merchant_id, bank, account_no, amount, last_withdrawal_at)
     VALUES (?, ?, ?, ?, ?)
     ON DUPLICATE KEY UPDATE last_withdrawal_at =
       ${refuseUnless('NOT (? AND last_withdrawal_at >= ?)', 'VALUES(last_withdrawal_at)')}`,
    [
      merchantId,
      withdrawal.bank,
      withdrawal.accountNo,
      withdrawal.amount,
      at.toJSDate(),
      enforce,
      windowStart,
    ]
  )
}

/** The refusal of a withdrawal refused by recordWithdrawalStatement(), or null for any other error. */
export function asDuplicateWithdrawal(error: unknown, withdrawal: Withdrawal) {
  if (refusedColumn(error) !== 'last_withdrawal_at') return null
  return new DuplicateWithdrawal(
    `a withdrawal of ${formatAmount(withdrawal.amount)} to ${withdrawal.bank} ${withdrawal.accountNo} was made in the last ${DUPLICATE_WINDOW_MINUTES} minutes`
  )
}

/** Deletes the records the rule no longer needs (the payout sweep); returns how many. */
export async function forgetPastWithdrawals(now = DateTime.utc()) {
  const before = now.minus({ minutes: DUPLICATE_WINDOW_MINUTES + 1 }).toJSDate()
  const [result] = await db.rawQuery(
    'DELETE FROM payout_duplicate_guards WHERE last_withdrawal_at < ? LIMIT 10000',
    [before]
  )
  return Number(result.affectedRows)
}
