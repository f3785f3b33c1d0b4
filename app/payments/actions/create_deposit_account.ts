import vine from '@vinejs/vine'
import db from '@adonisjs/lucid/services/db'
import DepositAccount from '#payments/models/deposit_account'
import {
  DEPOSIT_ACCOUNT_MESSAGES,
  consistencyErrors,
  newAccountFields,
  depositAccountSnapshot,
  lockPool,
  poolClashes,
  refuseIfAny,
  resultingAccount,
} from '#payments/deposit_account_rules'
import { recordAudit } from '#core/audit'
import { validateInput } from '#core/validation'
import { withDeadlockRetry } from '#core/db_retry'
import type { Actor } from '#core/actor'

export const createDepositAccountValidator = vine.compile(vine.object(newAccountFields()))

/**
 * Adds an account to the deposit-account pool (a bank account taking
 * transfers or PromptPay QR payments, or an external provider). Limits not
 * given are unlimited; min_amount defaults to 20.00, max_adjustment to 999.
 * Refused when it would share a bank account, a PromptPay id or a biller id
 * with another account of the pool (see poolClashes). Audited with the new
 * account's snapshot.
 */
export async function createDepositAccount(input: Record<string, unknown>, actor: Actor) {
  const data = await validateInput(createDepositAccountValidator, input, DEPOSIT_ACCOUNT_MESSAGES)
  const attributes = resultingAccount(null, data)
  refuseIfAny(consistencyErrors(attributes))

  // The pool lock's gap lock can make two creates on a quiet pool deadlock;
  // the victim runs again and then sees the other account.
  return withDeadlockRetry(() =>
    db.transaction(
      async (trx) => {
        refuseIfAny(poolClashes(attributes, await lockPool(trx), null))
        const account = await DepositAccount.create(attributes, { client: trx })
        await recordAudit(trx, actor, {
          action: 'deposit_account.create',
          target: { type: 'deposit_account', id: String(account.id) },
          after: depositAccountSnapshot(account),
          reason: { comment: data.comment },
        })
        return account
      },
      { isolationLevel: 'repeatable read' }
    )
  )
}
