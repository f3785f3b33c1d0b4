import vine from '@vinejs/vine'
import { approvalDetails } from '#approvals/approval_requests'
import type { Infer } from '@vinejs/vine/types'
import db from '@adonisjs/lucid/services/db'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import DepositAccount from '#payments/models/deposit_account'
import type ApprovalRequest from '#approvals/models/approval_request'
import {
  registerApprovableAction,
  type ApprovalTarget,
  type RunContext,
} from '#approvals/approvable_actions'
import { askOrApplyFromShell } from '#approvals/maker_checker'
import { DEPOSIT_ACCOUNT_MESSAGES, newAccountFields } from '#payments/deposit_account_input'
import {
  ACCOUNT_FIELD_NAMES,
  consistencyErrors,
  newAccountKey,
  refuseIfAny,
  resultingAccount,
  type DepositAccountAttributes,
} from '#payments/deposit_account_rules'
import { lockPool, poolClashes } from '#payments/deposit_pool_clashes'
import {
  describeNewAccount,
  displayAccountFields,
  depositAccountSnapshot,
  loadLayoutNames,
  storedInputOf,
} from '#payments/deposit_account_snapshot'
import { recordAudit } from '#core/audit'
import { validateInput } from '#core/validation'
import { withDeadlockRetry } from '#core/db_retry'
import type { Actor } from '#core/actor'

const schema = vine.object(newAccountFields())
export const createDepositAccountValidator = vine.compile(schema)
type CreateData = Infer<typeof schema>

export const CREATE_DEPOSIT_ACCOUNT_ACTION = 'deposit_account.create'
export const CREATE_DEPOSIT_ACCOUNT_KIND = 'deposit_account_create'
/** The target of a request to add an account: the account it would be, before it has an id. */
export const NEW_DEPOSIT_ACCOUNT_TARGET = 'new_deposit_account'

/**
 * Adds an account to the deposit-account pool (a bank account taking
 * transfers or PromptPay QR payments, or an external provider). Limits not
 * given are unlimited; min_amount defaults to 20.00, max_adjustment to 999.
 * Refused when it would share a bank account, a PromptPay id or a biller id
 * with another account of the pool (see poolClashes).
 *
 * Four eyes: a new account is where customers' money would go, so in the
 * back-office it opens an approval request for a second admin (`request`;
 * nothing is in the pool until it is approved, and approving checks the
 * pool's clashes again). From the command line it is added at once
 * (`account`) and recorded as a break-glass use. Audited with the new
 * account's snapshot.
 */
export async function createDepositAccount(
  input: Record<string, unknown>,
  actor: Actor
): Promise<
  { account: DepositAccount; request: null } | { account: null; request: ApprovalRequest }
> {
  const data = await validateInput(createDepositAccountValidator, input, DEPOSIT_ACCOUNT_MESSAGES)
  const attributes = resultingAccount(null, data)
  refuseIfAny(consistencyErrors(attributes))
  // What the request stores: the account as the create's input takes it again.
  const stored = { ...storedInputOf(attributes, ACCOUNT_FIELD_NAMES), comment: data.comment }

  // The pool lock's gap lock can make two creates on a quiet pool deadlock;
  // the victim runs again and then sees the other account.
  return withDeadlockRetry(() =>
    db.transaction(
      async (trx) => {
        const prepared = await prepareCreate(trx, attributes)
        const outcome = await askOrApplyFromShell(trx, {
          action: CREATE_DEPOSIT_ACCOUNT_ACTION,
          target: prepared.target,
          input: stored,
          prepared,
          actor,
          reason: { comment: data.comment },
          field: 'account_no',
          summary: `added deposit account ${describeNewAccount(attributes)}`,
          run: () => insertAccount(trx, attributes, actor, data.comment, null),
        })
        return outcome.request
          ? { account: null, request: outcome.request }
          : { account: outcome.result, request: null }
      },
      { isolationLevel: 'repeatable read' }
    )
  )
}

function newAccountTarget(attributes: DepositAccountAttributes): ApprovalTarget {
  return {
    type: NEW_DEPOSIT_ACCOUNT_TARGET,
    id: newAccountKey(attributes),
    amount: null,
    reviewedBy: null,
  }
}

/** Locks the pool and checks the account would clash with none of it (again on approval). */
async function prepareCreate(trx: TransactionClientContract, attributes: DepositAccountAttributes) {
  refuseIfAny(poolClashes(attributes, await lockPool(trx), null))
  await loadLayoutNames(trx)
  return { attributes, target: newAccountTarget(attributes) }
}

type CreatePrepared = Awaited<ReturnType<typeof prepareCreate>>

async function insertAccount(
  trx: TransactionClientContract,
  attributes: DepositAccountAttributes,
  actor: Actor,
  comment: string | undefined,
  request: ApprovalRequest | null
) {
  const account = await DepositAccount.create(attributes, { client: trx })
  await recordAudit(trx, actor, {
    action: 'deposit_account.create',
    target: { type: 'deposit_account', id: String(account.id) },
    after: depositAccountSnapshot(account),
    reason: { comment },
    details: approvalDetails(request),
  })
  return account
}

/* A new account waits for a second admin; approving adds it as stored. */
registerApprovableAction<CreateData, CreatePrepared>({
  name: CREATE_DEPOSIT_ACCOUNT_ACTION,
  kind: CREATE_DEPOSIT_ACCOUNT_KIND,
  approverRole: 'admin',
  sensitive: true,
  describe: (data) =>
    `add deposit account ${data.channel} ${data.bank} ${data.account_no}` +
    (data.promptpay_id && data.promptpay_id !== 'none' ? ` (promptpay ${data.promptpay_id})` : '') +
    (data.biller_id && data.biller_id !== 'none' ? ` (biller ${data.biller_id})` : '') +
    ` to group ${data.deposit_group}`,
  change: (_data, prepared) => ({
    before: {},
    after: displayAccountFields(prepared.attributes, ACCOUNT_FIELD_NAMES, false),
  }),
  validate: (input) =>
    validateInput(createDepositAccountValidator, input, DEPOSIT_ACCOUNT_MESSAGES),
  prepare: async (trx, data) => {
    const attributes = resultingAccount(null, data)
    refuseIfAny(consistencyErrors(attributes))
    return prepareCreate(trx, attributes)
  },
  run: async (trx, prepared, data, context: RunContext) => {
    const account = await insertAccount(
      trx,
      prepared.attributes,
      context.actor,
      data.comment,
      context.request
    )
    return { deposit_account_id: account.id, deposit_group: account.depositGroup }
  },
})
