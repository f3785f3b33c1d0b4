import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import DepositAccount from '#payments/models/deposit_account'
import type { FieldError } from '#core/validation'
import { normalizeProxy } from '#payments/promptpay_qr'
import type { DepositAccountAttributes } from '#payments/deposit_account_rules'

/**
 * What makes two accounts of the deposit-account pool clash, and the lock
 * on the whole pool under which the create and update actions check it.
 */

/**
 * Every account of the pool, each row locked until the transaction ends.
 * The caller's transaction must be REPEATABLE READ: then the locking scan
 * also locks the gap after the last row, so no other transaction can add an
 * account meanwhile. Two creates that would clash run one after the other
 * (or, on an empty pool, one is a deadlock victim and retries) and the
 * second sees the first. Payment creates wait for these locks only while an
 * operator changes the pool (milliseconds).
 */
export async function lockPool(trx: TransactionClientContract) {
  return DepositAccount.query({ client: trx }).orderBy('id').forUpdate()
}

/** The fields that make an account clash with another one of the pool. */
export const IDENTITY_FIELDS = ['channel', 'bank', 'account_no', 'promptpay_id', 'biller_id']

/**
 * What `account` would share with another account of `pool` (all of it,
 * inactive accounts included: they keep their open orders and may come back):
 * - one bank account taking payments matched by amount (transfer, PromptPay
 *   QR): two orders of one amount could not be told apart;
 * - one PromptPay id, in any of its written forms: customers of two accounts
 *   would scan identical QR codes for one amount, and a payment could be
 *   matched to the other account's order;
 * - one biller id: its bill payments would arrive for two accounts at once.
 */
export function poolClashes(
  account: DepositAccountAttributes,
  pool: DepositAccount[],
  selfId: number | null
): FieldError[] {
  const others = pool.filter((other) => other.id !== selfId)
  const errors: FieldError[] = []
  const sameBankAccount = matchesByAmount(account)
    ? others.find(
        (other) =>
          matchesByAmount(other) &&
          other.bank === account.bank &&
          other.accountNo === account.accountNo
      )
    : undefined
  if (sameBankAccount) {
    errors.push({
      field: 'account_no',
      message:
        `${account.bank} ${account.accountNo} is already ${describeAccount(sameBankAccount)}; ` +
        'payments to one bank account are told apart by amount, so it can be in the pool only once ' +
        '(change that account instead)',
    })
  }
  const proxy = account.promptpayId ? proxyKey(account.promptpayId) : null
  const samePromptPay = proxy
    ? others.find((other) => other.promptpayId && proxyKey(other.promptpayId) === proxy)
    : undefined
  if (samePromptPay) {
    errors.push({
      field: 'promptpay_id',
      message:
        `promptpay_id ${account.promptpayId} is already used by ${describeAccount(samePromptPay)}; ` +
        'payments to a PromptPay id are told apart by amount, so it can be in the pool only once',
    })
  }
  const sameBiller = account.billerId
    ? others.find((other) => other.billerId === account.billerId)
    : undefined
  if (sameBiller) {
    errors.push({
      field: 'biller_id',
      message:
        `biller_id ${account.billerId} is already used by ${describeAccount(sameBiller)}; ` +
        'a biller id can be in the pool only once',
    })
  }
  return errors
}

/** Accounts whose payments are matched by transfer_amount (not by reference or provider). */
function matchesByAmount(account: Pick<DepositAccountAttributes, 'channel' | 'billerId'>) {
  return account.channel === 'transfer' || (account.channel === 'qr' && !account.billerId)
}

/** The proxy a QR code carries: "0812345678" and "66812345678" are one. */
function proxyKey(proxy: string) {
  try {
    const { proxyType, value } = normalizeProxy(proxy)
    return `${proxyType}:${value}`
  } catch {
    return proxy
  }
}

function describeAccount(account: DepositAccount) {
  return `deposit account ${account.id} (${account.channel}, group ${account.depositGroup}, ${account.bank} ${account.accountNo})`
}
