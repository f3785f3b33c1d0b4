import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { DateTime } from 'luxon'
import Operator from '#operators/models/operator'
import { OPERATOR_ROLES, roleRank, type OperatorRole } from '#operators/roles'
import { endAllSessions } from '#operators/sign_in'
import { issueEnrolmentLink, mailEnrolmentLinkAfterCommit } from '#operators/enrolment_link'
import { operatorTarget } from '#operators/operator_target'
import type ApprovalRequest from '#approvals/models/approval_request'
import { registerApprovableAction, type RunContext } from '#approvals/approvable_actions'
import { actsInBackOffice, askOrApplyFromShell } from '#approvals/maker_checker'
import { changedValues, recordAudit } from '#core/audit'
import { ActionError, onOff, validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import { inTransaction } from '#core/transaction'

export const updateOperatorValidator = vine.compile(
  vine.object({
    email: vine.string().trim().toLowerCase(),
    role: vine.enum(OPERATOR_ROLES).optional(),
    /** off: the operator can no longer sign in, and their sessions end. */
    enabled: vine.any().use(onOff()).optional(),
    /** on: the authenticator app and recovery codes are forgotten; the next sign-in enrols again. */
    reset_second_factor: vine.any().use(onOff()).optional(),
    /** on: the password is forgotten and a new enrolment link is issued. */
    new_link: vine.any().use(onOff()).optional(),
    comment: vine.string().trim().maxLength(500).optional(),
  })
)

export const RAISE_OPERATOR_ACTION = 'operator.raise'
export const ENABLE_OPERATOR_ACTION = 'operator.enable'
export const RESET_2FA_ACTION = 'operator.reset_2fa'
export const NEW_LINK_ACTION = 'operator.new_link'

function snapshot(operator: Operator) {
  return {
    role: operator.role,
    enabled: operator.disabledAt === null,
    second_factor: operator.totpEnabledAt !== null,
    password: operator.password !== null,
  }
}

async function lockOperator(trx: TransactionClientContract, email: string) {
  const operator = await Operator.query({ client: trx }).where('email', email).forUpdate().first()
  if (!operator) throw ActionError.notFound('email', `no operator ${email}`)
  return operator
}

function refuseOwnAccess(operator: Operator, actor: Actor) {
  if (actor.operatorId === operator.id) {
    throw ActionError.general('you cannot change your own role or access; ask another admin')
  }
}

/*
 * The changes that give access (each one alone, as a request stores it): a
 * higher role, re-enabling, a new second factor, a new password. `by` is
 * who asked: the requester when a second admin approved.
 */

interface By {
  id: number | null
  actor: string
}

function byOf(actor: Actor, request: ApprovalRequest | null): By {
  return request
    ? { id: request.requestedBy, actor: request.requestedByActor }
    : { id: actor.operatorId ?? null, actor: actor.name }
}

function raise(operator: Operator, role: OperatorRole, by: By) {
  operator.role = role
  operator.raisedBy = by.id
  operator.raisedByActor = by.actor
  operator.raisedAt = DateTime.utc()
}

function enable(operator: Operator, by: By) {
  operator.disabledAt = null
  operator.enabledBy = by.id
  operator.enabledByActor = by.actor
  operator.enabledAt = DateTime.utc()
}

function resetSecondFactor(operator: Operator) {
  operator.totpSecretEncrypted = null
  operator.totpEnabledAt = null
  operator.totpLastStep = null
  operator.recoveryCodeHashes = null
}

function newLink(operator: Operator) {
  const link = issueEnrolmentLink(operator)
  operator.password = null
  return link
}

/**
 * Changes an operator's role, disables or enables them, resets their second
 * factor (a lost phone) or their password (a new enrolment link). Any of
 * these ends their sessions. An operator cannot change their own access.
 *
 * What only takes access away applies at once: lowering a role, disabling.
 * What gives access (raising a role, re-enabling, resetting the second
 * factor, a new link) is, in the back-office, an approval request for a
 * second admin (`requests`); from the server's shell it applies at once and
 * is recorded as a break-glass use. A new link is mailed to the operator's
 * own address when it is issued in the back-office, and returned (to print)
 * only from the shell.
 */
export async function updateOperator(input: Record<string, unknown>, actor: Actor) {
  const data = await validateInput(updateOperatorValidator, input)
  const result = await inTransaction(async (trx) => {
    const operator = await lockOperator(trx, data.email)
    refuseOwnAccess(operator, actor)
    const before = snapshot(operator)
    const requests: ApprovalRequest[] = []
    const by = byOf(actor, null)
    const prepared = { operator, target: operatorTarget(operator.email) }
    const ask = async (
      action: string,
      asked: Record<string, unknown>,
      field: string | null,
      summary: string,
      apply: () => void
    ) => {
      const outcome = await askOrApplyFromShell(trx, {
        action,
        target: prepared.target,
        input: { email: operator.email, ...asked, comment: data.comment },
        prepared,
        actor,
        reason: { comment: data.comment },
        field,
        summary: `${summary} (${operator.email})`,
        run: async () => apply(),
      })
      if (outcome.request) requests.push(outcome.request)
    }

    if (data.role !== undefined && data.role !== operator.role) {
      const role = data.role
      if (roleRank(role) > roleRank(operator.role)) {
        await ask(
          RAISE_OPERATOR_ACTION,
          { role },
          'role',
          `raised the role from ${operator.role} to ${role}`,
          () => raise(operator, role, by)
        )
      } else {
        operator.role = role
      }
    }
    if (data.enabled === false && operator.disabledAt === null) {
      operator.disabledAt = DateTime.utc()
    } else if (data.enabled === true && operator.disabledAt !== null) {
      await ask(ENABLE_OPERATOR_ACTION, {}, null, 're-enabled the operator', () =>
        enable(operator, by)
      )
    }
    if (data.reset_second_factor && operator.totpEnabledAt !== null) {
      await ask(RESET_2FA_ACTION, {}, null, 'reset the second factor', () =>
        resetSecondFactor(operator)
      )
    }
    let link: ReturnType<typeof newLink> | null = null
    if (data.new_link) {
      await ask(NEW_LINK_ACTION, {}, null, 'issued a new enrolment link', () => {
        link = newLink(operator)
      })
    }

    const diff = changedValues(before, snapshot(operator))
    const issued = link as ReturnType<typeof newLink> | null
    if (diff.changed.length > 0 || issued) {
      await operator.useTransaction(trx).save()
      await recordAudit(trx, actor, {
        action: 'operator.update',
        target: { type: 'operator', id: operator.email },
        before: diff.before,
        after: diff.after,
        reason: { comment: data.comment },
        details: issued ? { enrolment_link_expires_at: issued.expiresAt.toISO() } : undefined,
      })
    }
    return { operator, changed: diff.changed, link: issued, requests }
  })
  const { operator, changed } = result
  if (
    changed.includes('enabled') ||
    changed.includes('second_factor') ||
    changed.includes('role') ||
    result.link
  ) {
    await endAllSessions(operator.id)
  }
  return result
}

/* The changes that give access, as an approval request stores and runs them. */

const changeSchema = vine.object({
  email: vine.string().trim().toLowerCase(),
  comment: vine.string().trim().maxLength(500).optional(),
})
const changeValidator = vine.compile(changeSchema)
type ChangeData = Infer<typeof changeSchema>

const raiseSchema = vine.object({
  email: vine.string().trim().toLowerCase(),
  role: vine.enum(OPERATOR_ROLES),
  comment: vine.string().trim().maxLength(500).optional(),
})
const raiseValidator = vine.compile(raiseSchema)
type RaiseData = Infer<typeof raiseSchema>

type Prepared = { operator: Operator; target: ReturnType<typeof operatorTarget> }

/**
 * Carries out an approved change: the operator (locked by prepare) changes,
 * audited with the request and its requester; their sessions end and a new
 * link is mailed to them once the approval commits.
 */
async function runApproved(
  trx: TransactionClientContract,
  operator: Operator,
  comment: string | undefined,
  context: RunContext,
  apply: (by: By) => ReturnType<typeof newLink> | void
) {
  const before = snapshot(operator)
  const link = apply(byOf(context.actor, context.request)) ?? null
  const diff = changedValues(before, snapshot(operator))
  await operator.useTransaction(trx).save()
  const mailedTo =
    link && actsInBackOffice(context.actor)
      ? mailEnrolmentLinkAfterCommit(trx, operator, link, 'new_link')
      : null
  await recordAudit(trx, context.actor, {
    action: 'operator.update',
    target: { type: 'operator', id: operator.email },
    before: diff.before,
    after: diff.after,
    reason: { comment },
    details: {
      ...(link ? { enrolment_link_expires_at: link.expiresAt.toISO() } : {}),
      ...(mailedTo ? { enrolment_link_mailed_to: mailedTo } : {}),
      approval_request_id: context.request?.id ?? null,
      requested_by: context.request?.requestedByActor ?? null,
    },
  })
  const operatorId = operator.id
  trx.after('commit', () => endAllSessions(operatorId).catch(() => {}))
  return {
    email: operator.email,
    changed: diff.changed,
    ...(link ? { enrolment_link_mailed_to: mailedTo } : {}),
  }
}

async function prepareChange(
  trx: TransactionClientContract,
  email: string,
  actor: Actor
): Promise<Prepared> {
  const operator = await lockOperator(trx, email)
  refuseOwnAccess(operator, actor)
  return { operator, target: operatorTarget(operator.email) }
}

const passwordOf = (operator: Operator) =>
  operator.password !== null ? 'set' : operator.enrolmentExpiresAt ? 'link pending' : 'none'

registerApprovableAction<RaiseData, Prepared>({
  name: RAISE_OPERATOR_ACTION,
  kind: 'operator_raise',
  approverRole: 'admin',
  sensitive: true,
  describe: (data) => `raise operator ${data.email} to ${data.role}`,
  change: (data, prepared) => ({
    before: { email: data.email, role: prepared.operator.role },
    after: { email: data.email, role: data.role },
  }),
  validate: (input) => validateInput(raiseValidator, input),
  prepare: async (trx, data, actor) => {
    const prepared = await prepareChange(trx, data.email, actor)
    if (roleRank(data.role) <= roleRank(prepared.operator.role)) {
      throw ActionError.field(
        'role',
        `${data.email} is already ${prepared.operator.role}: nothing to raise`
      )
    }
    return prepared
  },
  run: (trx, prepared, data, context) =>
    runApproved(trx, prepared.operator, data.comment, context, (by) =>
      raise(prepared.operator, data.role, by)
    ),
})

registerApprovableAction<ChangeData, Prepared>({
  name: ENABLE_OPERATOR_ACTION,
  kind: 'operator_enable',
  approverRole: 'admin',
  sensitive: true,
  describe: (data) => `re-enable operator ${data.email}`,
  change: (data, prepared) => ({
    before: { email: data.email, role: prepared.operator.role, access: 'disabled' },
    after: { email: data.email, role: prepared.operator.role, access: 'enabled' },
  }),
  validate: (input) => validateInput(changeValidator, input),
  prepare: async (trx, data, actor) => {
    const prepared = await prepareChange(trx, data.email, actor)
    if (prepared.operator.disabledAt === null) {
      throw ActionError.field('email', `${data.email} is already enabled`)
    }
    return prepared
  },
  run: (trx, prepared, data, context) =>
    runApproved(trx, prepared.operator, data.comment, context, (by) =>
      enable(prepared.operator, by)
    ),
})

registerApprovableAction<ChangeData, Prepared>({
  name: RESET_2FA_ACTION,
  kind: 'operator_reset_2fa',
  approverRole: 'admin',
  sensitive: true,
  describe: (data) =>
    `reset the second factor of operator ${data.email} (their next sign-in enrols a new authenticator app)`,
  change: (data, prepared) => ({
    before: { email: data.email, role: prepared.operator.role, second_factor: 'enrolled' },
    after: { email: data.email, role: prepared.operator.role, second_factor: 'enrols again' },
  }),
  validate: (input) => validateInput(changeValidator, input),
  prepare: async (trx, data, actor) => {
    const prepared = await prepareChange(trx, data.email, actor)
    if (prepared.operator.totpEnabledAt === null) {
      throw ActionError.field('email', `${data.email} has no second factor enrolled`)
    }
    return prepared
  },
  run: (trx, prepared, data, context) =>
    runApproved(trx, prepared.operator, data.comment, context, () =>
      resetSecondFactor(prepared.operator)
    ),
})

registerApprovableAction<ChangeData, Prepared>({
  name: NEW_LINK_ACTION,
  kind: 'operator_new_link',
  approverRole: 'admin',
  sensitive: true,
  describe: (data) =>
    `issue a new enrolment link to operator ${data.email} (their password stops working; the link is mailed to that address)`,
  change: (data, prepared) => ({
    before: {
      email: data.email,
      role: prepared.operator.role,
      password: passwordOf(prepared.operator),
    },
    after: {
      email: data.email,
      role: prepared.operator.role,
      password: `new link mailed to ${data.email}`,
    },
  }),
  validate: (input) => validateInput(changeValidator, input),
  prepare: (trx, data, actor) => prepareChange(trx, data.email, actor),
  run: (trx, prepared, data, context) =>
    runApproved(trx, prepared.operator, data.comment, context, () => newLink(prepared.operator)),
})
