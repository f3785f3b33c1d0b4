import vine from '@vinejs/vine'
import { approvalDetails } from '#approvals/approval_requests'
import type { Infer } from '@vinejs/vine/types'
import db from '@adonisjs/lucid/services/db'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type DepositAccount from '#payments/models/deposit_account'
import type ApprovalRequest from '#approvals/models/approval_request'
import {
  registerApprovableAction,
  type ApprovalTarget,
  type RunContext,
} from '#approvals/approvable_actions'
import { actsFromShell, askOrApplyFromShell } from '#approvals/maker_checker'
import { DEPOSIT_ACCOUNT_MESSAGES, accountChangeFields } from '#payments/deposit_account_input'
import {
  consistencyErrors,
  onlyStopsMoney,
  refuseIfAny,
  resultingAccount,
  withFields,
  type DepositAccountAttributes,
} from '#payments/deposit_account_rules'
import { IDENTITY_FIELDS, lockPool, poolClashes } from '#payments/deposit_pool_clashes'
import {
  depositAccountSnapshot,
  displayAccountFields,
  loadLayoutNames,
  storedInputOf,
} from '#payments/deposit_account_snapshot'
import { changedValues, recordAudit } from '#core/audit'
import { ActionError, assertConfirmed, validateInput } from '#core/validation'
import { withDeadlockRetry } from '#core/db_retry'
import type { Actor } from '#core/actor'

const schema = vine.object({
  id: vine.number().withoutDecimals().min(1),
  ...accountChangeFields(),
})
export const updateDepositAccountValidator = vine.compile(schema)
type UpdateData = Infer<typeof schema>

export const UPDATE_DEPOSIT_ACCOUNT_ACTION = 'deposit_account.update'
/** One change of an account waits at a time. */
export const UPDATE_DEPOSIT_ACCOUNT_KIND = 'deposit_account_change'

const MESSAGES = {
  ...DEPOSIT_ACCOUNT_MESSAGES,
  'id.required': 'id is required: the deposit account to change',
  'id.number': 'id must be a deposit account id (a positive whole number)',
  'id.withoutDecimals': 'id must be a deposit account id (a positive whole number)',
  'id.min': 'id must be a deposit account id (a positive whole number)',
}

export interface DepositAccountUpdate {
  account: DepositAccount
  /** The fields changed now (none: nothing written or audited now). */
  changed: string[]
  /** The approval request opened for the rest, in the back-office. */
  request: ApprovalRequest | null
  /** The fields that wait for that request. */
  asked: string[]
  /** Changed from the server's shell beyond a stop: recorded as a break-glass use. */
  breakGlass: boolean
}

/**
 * Activates or deactivates an account from the back-office's switch, which
 * the operator confirms first (an inactive account takes no new order; open
 * ones stay valid); the rest is updateDepositAccount.
 */
export async function switchDepositAccount(input: Record<string, unknown>, actor: Actor) {
  await assertConfirmed(input, 'tick the box to confirm the switch')
  return updateDepositAccount({ id: input.id, active: input.active, comment: input.comment }, actor)
}

/**
 * Changes a deposit account: only the fields given change; "none" (or
 * "unlimited") clears an optional one, so a limit becomes unlimited.
 * `active` off takes the account out of selection (its open orders stay
 * valid).
 *
 * Four eyes: what can only stop money applies at once (deactivating,
 * raising min_amount, lowering a limit or setting one where there was
 * none). Every other change (the bank account, PromptPay id, biller id,
 * provider, channel, group, name, priority, a higher or removed limit,
 * activating) opens, in the back-office, one approval request for a second
 * admin with those fields, and the rest of the change is saved; one request
 * per account at a time. From the command line the whole change applies at
 * once, recorded as a break-glass use when it is more than a stop.
 */
export async function updateDepositAccount(
  input: Record<string, unknown>,
  actor: Actor
): Promise<DepositAccountUpdate> {
  const data = await validateInput(updateDepositAccountValidator, input, MESSAGES)
  return withDeadlockRetry(() =>
    db.transaction(
      async (trx) => {
        const { pool, account, after, diff } = await prepareChange(trx, data)
        if (diff.changed.length === 0)
          return { account, changed: [], request: null, asked: [], breakGlass: false }

        const stops = (field: string) =>
          onlyStopsMoney(
            field,
            diff.before[field as keyof typeof diff.before],
            diff.after[field as keyof typeof diff.after]
          )
        let asked = diff.changed.filter((field) => !stops(field))
        let now = diff.changed.filter(stops)
        if (asked.length === 0) {
          await applyChange(trx, account, after, actor, data.comment, null)
          return { account, changed: diff.changed, request: null, asked: [], breakGlass: false }
        }
        // The part applied at once must make a sound account on its own
        // (min_amount raised above a max_amount whose raise waits): else
        // all of it waits.
        const partly = withFields(account, after, now)
        if (now.length > 0 && consistencyErrors(partly).length > 0) {
          asked = diff.changed
          now = []
        }

        const target = accountTarget(account)
        const outcome = await askOrApplyFromShell(trx, {
          action: UPDATE_DEPOSIT_ACCOUNT_ACTION,
          target,
          input: { id: account.id, ...storedInputOf(after, asked), comment: data.comment },
          prepared: { pool, account, after, target },
          actor,
          reason: { comment: data.comment },
          field: asked[0],
          summary: `changed deposit account ${account.id}: ${describeChange(account, after, diff.changed)}`,
          run: () => applyChange(trx, account, after, actor, data.comment, null),
        })
        if (!outcome.request) {
          const breakGlass = actsFromShell(actor)
          return { account, changed: diff.changed, request: null, asked: [], breakGlass }
        }
        if (now.length > 0) {
          await applyChange(trx, account, partly, actor, data.comment, null, {
            approval_request_id: outcome.request.id,
            waiting_for_approval: asked,
          })
        }
        return { account, changed: now, request: outcome.request, asked, breakGlass: false }
      },
      { isolationLevel: 'repeatable read' }
    )
  )
}

function accountTarget(account: DepositAccount): ApprovalTarget {
  return { type: 'deposit_account', id: String(account.id), amount: null, reviewedBy: null }
}

/**
 * Locks the pool (the whole pool, not only this row: a new bank account or
 * proxy must not clash with one another transaction is adding), finds the
 * account and checks the account the change makes: sound on its own and,
 * when what identifies it changes, clashing with no other account.
 */
async function prepareChange(trx: TransactionClientContract, data: UpdateData) {
  const pool = await lockPool(trx)
  await loadLayoutNames(trx)
  const account = pool.find((candidate) => candidate.id === data.id)
  if (!account) throw ActionError.notFound('id', `no deposit account with id ${data.id}`)
  const after = resultingAccount(account, data)
  refuseIfAny(consistencyErrors(after))
  const diff = changedValues(depositAccountSnapshot(account), depositAccountSnapshot(after))
  if (diff.changed.some((field) => IDENTITY_FIELDS.includes(field))) {
    refuseIfAny(poolClashes(after, pool, account.id))
  }
  return { pool, account, after, diff, target: accountTarget(account) }
}

type ChangePrepared = Awaited<ReturnType<typeof prepareChange>>

async function applyChange(
  trx: TransactionClientContract,
  account: DepositAccount,
  next: DepositAccountAttributes,
  actor: Actor,
  comment: string | undefined,
  request: ApprovalRequest | null,
  extra: Record<string, unknown> = {}
) {
  const diff = changedValues(depositAccountSnapshot(account), depositAccountSnapshot(next))
  await account.merge(next).useTransaction(trx).save()
  const details = {
    ...approvalDetails(request),
    ...extra,
  }
  await recordAudit(trx, actor, {
    action: 'deposit_account.update',
    target: { type: 'deposit_account', id: String(account.id) },
    before: diff.before,
    after: diff.after,
    reason: { comment },
    details: Object.keys(details).length > 0 ? details : null,
  })
  return diff.changed
}

/** "account_no 1234567890 → 9876543210, priority 0 → 1000". */
function describeChange(
  account: DepositAccountAttributes,
  after: DepositAccountAttributes,
  fields: string[]
) {
  const before = displayAccountFields(account, fields)
  const next = displayAccountFields(after, fields)
  return fields.map((field) => `${field} ${before[field]} → ${next[field]}`).join(', ')
}

/** The fields a stored request changes (its input without id and comment). */
function askedFields(data: Record<string, unknown>) {
  return Object.keys(data).filter(
    (field) => field !== 'id' && field !== 'comment' && data[field] !== undefined
  )
}

/*
 * A change that could send money elsewhere waits for a second admin;
 * approving checks the account and the pool again and applies it as stored.
 */
registerApprovableAction<UpdateData, ChangePrepared>({
  name: UPDATE_DEPOSIT_ACCOUNT_ACTION,
  kind: UPDATE_DEPOSIT_ACCOUNT_KIND,
  approverRole: 'admin',
  sensitive: true,
  describe: (data) =>
    `change deposit account ${data.id}: ${askedFields(data as Record<string, unknown>).join(', ')}`,
  change: (data, prepared) => {
    const fields = askedFields(data as Record<string, unknown>)
    return {
      before: displayAccountFields(prepared.account, fields),
      after: displayAccountFields(prepared.after, fields),
    }
  },
  validate: (input) => validateInput(updateDepositAccountValidator, input, MESSAGES),
  prepare: async (trx, data) => {
    const prepared = await prepareChange(trx, data)
    if (prepared.diff.changed.length === 0) {
      throw ActionError.field(
        'id',
        `deposit account ${data.id} already has ${askedFields(data as Record<string, unknown>).join(', ')} as asked: nothing to change`
      )
    }
    return prepared
  },
  run: async (trx, prepared, data, context: RunContext) => {
    const changed = await applyChange(
      trx,
      prepared.account,
      prepared.after,
      context.actor,
      data.comment,
      context.request
    )
    return { deposit_account_id: prepared.account.id, changed }
  },
})
