import vine from '@vinejs/vine'
import db from '@adonisjs/lucid/services/db'
import {
  DEPOSIT_ACCOUNT_MESSAGES,
  IDENTITY_FIELDS,
  consistencyErrors,
  accountChangeFields,
  depositAccountSnapshot,
  lockPool,
  poolClashes,
  refuseIfAny,
  resultingAccount,
} from '#payments/deposit_account_rules'
import { changedValues, recordAudit } from '#core/audit'
import { ActionError, validateInput } from '#core/validation'
import { withDeadlockRetry } from '#core/db_retry'
import type { Actor } from '#core/actor'

export const updateDepositAccountValidator = vine.compile(
  vine.object({
    id: vine.number().withoutDecimals().min(1),
    ...accountChangeFields(),
  })
)

const MESSAGES = {
  ...DEPOSIT_ACCOUNT_MESSAGES,
  'id.required': 'id is required: the deposit account to change',
  'id.number': 'id must be a deposit account id (a positive whole number)',
  'id.withoutDecimals': 'id must be a deposit account id (a positive whole number)',
  'id.min': 'id must be a deposit account id (a positive whole number)',
}

/**
 * Changes a deposit account: only the fields given change; "none" (or
 * "unlimited") clears an optional one, so a limit becomes unlimited.
 * `active` off takes the account out of selection (its open orders stay
 * valid). Returns the account and the names of the fields that changed
 * (none: nothing written or audited).
 */
export async function updateDepositAccount(input: Record<string, unknown>, actor: Actor) {
  const data = await validateInput(updateDepositAccountValidator, input, MESSAGES)
  return withDeadlockRetry(() =>
    db.transaction(
      async (trx) => {
        // The whole pool, not only this row: a new bank account or proxy must
        // not clash with one another transaction is adding.
        const pool = await lockPool(trx)
        const account = pool.find((candidate) => candidate.id === data.id)
        if (!account) throw ActionError.notFound('id', `no deposit account with id ${data.id}`)

        const before = depositAccountSnapshot(account)
        const after = resultingAccount(account, data)
        refuseIfAny(consistencyErrors(after))
        const diff = changedValues(before, depositAccountSnapshot(after))
        if (diff.changed.length === 0) return { account, changed: diff.changed }
        if (diff.changed.some((field) => IDENTITY_FIELDS.includes(field))) {
          refuseIfAny(poolClashes(after, pool, account.id))
        }

        await account.merge(after).useTransaction(trx).save()
        await recordAudit(trx, actor, {
          action: 'deposit_account.update',
          target: { type: 'deposit_account', id: String(account.id) },
          before: diff.before,
          after: diff.after,
          reason: { comment: data.comment },
        })
        return { account, changed: diff.changed }
      },
      { isolationLevel: 'repeatable read' }
    )
  )
}
