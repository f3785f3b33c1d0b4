import vine from '@vinejs/vine'
import { approvalDetails } from '#approvals/approval_requests'
import type { Infer } from '@vinejs/vine/types'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import Operator from '#operators/models/operator'
import { OPERATOR_ROLES } from '#operators/roles'
import type ApprovalRequest from '#approvals/models/approval_request'
import { registerApprovableAction, type RunContext } from '#approvals/approvable_actions'
import { actsInBackOffice, askOrApplyFromShell } from '#approvals/maker_checker'
import { recordAudit } from '#core/audit'
import { ActionError, validateInput } from '#core/validation'
import { isDuplicateKey } from '#core/db_retry'
import { issueEnrolmentLink, mailEnrolmentLinkAfterCommit } from '#operators/enrolment_link'
import { operatorTarget } from '#operators/operator_target'
import type { Actor } from '#core/actor'
import { inTransaction } from '#core/transaction'

export const CREATE_OPERATOR_ACTION = 'operator.create'

const schema = vine.object({
  email: vine.string().trim().toLowerCase().email().maxLength(191),
  name: vine.string().trim().minLength(1).maxLength(120).optional(),
  role: vine.enum(OPERATOR_ROLES),
  comment: vine.string().trim().maxLength(500).optional(),
})
export const createOperatorValidator = vine.compile(schema)
export type CreateOperatorData = Infer<typeof schema>

const MESSAGES = { 'email.email': 'email must be an email address' }

function alreadyExists(email: string) {
  return ActionError.field('email', `an operator with email ${email} already exists`)
}

/** Checks the email is free (locking its place in the index); on approval this is the re-check. */
export async function prepareCreate(trx: TransactionClientContract, data: CreateOperatorData) {
  const existing = await Operator.query({ client: trx })
    .where('email', data.email)
    .forUpdate()
    .first()
  if (existing) throw alreadyExists(data.email)
  return { target: operatorTarget(data.email) }
}

/**
 * The account itself, without a password, and its one-time enrolment link
 * (only its hash is stored). Its creator is the operator who asked (the
 * requester when a second admin approved). In the back-office the link is
 * mailed to the new operator's address once the transaction commits, and
 * never returned; from the server's shell it is returned, to be printed.
 */
async function carryOutCreate(
  trx: TransactionClientContract,
  data: CreateOperatorData,
  actor: Actor,
  request: ApprovalRequest | null
) {
  const operator = new Operator().merge({
    email: data.email,
    name: data.name ?? data.email.split('@')[0],
    role: data.role,
    password: null,
    createdBy: request ? request.requestedBy : (actor.operatorId ?? null),
    createdByActor: request ? request.requestedByActor : actor.name,
  })
  const link = issueEnrolmentLink(operator)
  try {
    await operator.useTransaction(trx).save()
  } catch (error) {
    if (isDuplicateKey(error)) throw alreadyExists(data.email)
    throw error
  }
  const mailedTo = actsInBackOffice(actor)
    ? mailEnrolmentLinkAfterCommit(trx, operator, link, 'new_account')
    : null
  await recordAudit(trx, actor, {
    action: 'operator.create',
    target: { type: 'operator', id: operator.email },
    after: { email: operator.email, name: operator.name, role: operator.role },
    reason: { comment: data.comment },
    details: {
      enrolment_link_expires_at: link.expiresAt.toISO(),
      ...(mailedTo ? { enrolment_link_mailed_to: mailedTo } : {}),
      ...approvalDetails(request),
    },
  })
  return { operator, link: mailedTo ? null : link, mailedTo }
}

/**
 * Creates an operator. A viewer (reads only) is created at once. An
 * operator or an admin decides on money, so in the back-office the account
 * is an approval request for a second admin, created only on approval; from
 * the server's shell it is created at once and recorded as a break-glass
 * use (the first admin of a gateway is created this way).
 *
 * Returns the operator (null while a request waits), the link when it may
 * be shown (the shell only), the address it was mailed to (the
 * back-office), and the request opened.
 */
export async function createOperator(input: Record<string, unknown>, actor: Actor) {
  const data = await validateInput(createOperatorValidator, input, MESSAGES)
  try {
    return await inTransaction(async (trx) => {
      const prepared = await prepareCreate(trx, data)
      if (data.role === 'viewer') {
        return { ...(await carryOutCreate(trx, data, actor, null)), request: null }
      }
      const outcome = await askOrApplyFromShell(trx, {
        action: CREATE_OPERATOR_ACTION,
        target: prepared.target,
        input: data,
        prepared,
        actor,
        reason: { comment: data.comment },
        field: 'email',
        summary: `created operator ${data.email} (${data.role})`,
        run: () => carryOutCreate(trx, data, actor, null),
      })
      if (outcome.request) {
        return { operator: null, link: null, mailedTo: null, request: outcome.request }
      }
      return { ...outcome.result, request: null }
    })
  } catch (error) {
    if (isDuplicateKey(error)) throw alreadyExists(data.email)
    throw error
  }
}

/* An operator or admin account waits for a second admin when asked in the back-office. */
registerApprovableAction<CreateOperatorData, Awaited<ReturnType<typeof prepareCreate>>>({
  name: CREATE_OPERATOR_ACTION,
  kind: 'operator_create',
  approverRole: 'admin',
  sensitive: true,
  describe: (data) =>
    `create ${data.role} ${data.email} (the enrolment link is mailed to that address)`,
  change: (data) => ({
    before: { account: 'none' },
    after: { account: 'created', email: data.email, role: data.role },
  }),
  validate: (input) => validateInput(createOperatorValidator, input, MESSAGES),
  prepare: (trx, data) => prepareCreate(trx, data),
  run: async (trx, _prepared, data, context: RunContext) => {
    const { operator, mailedTo } = await carryOutCreate(trx, data, context.actor, context.request)
    return {
      email: operator.email,
      role: operator.role,
      enrolment_link_mailed_to: mailedTo,
    }
  },
})
