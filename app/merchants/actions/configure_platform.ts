import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import Platform from '#merchants/models/platform'
import type ApprovalRequest from '#approvals/models/approval_request'
import {
  registerApprovableAction,
  type ApprovalTarget,
  type RunContext,
} from '#approvals/approvable_actions'
import {
  openApprovalRequest,
  supersedePendingRequest,
  approvalDetails,
} from '#approvals/approval_requests'
import { openHours, paymentPageDomain, platformSnapshot } from '#merchants/platform_rules'
import { clearable, thbAmount } from '#core/validation'
import { changedValues, recordAudit } from '#core/audit'
import { ActionError, assertConfirmed, onOff, validateInput } from '#core/validation'
import { actsFromShell } from '#approvals/maker_checker'
import { recordBreakGlass } from '#notifications/notifications'
import { formatAmount } from '#core/money'
import type { Actor } from '#core/actor'
import { inTransaction } from '#core/transaction'

export const configurePlatformValidator = vine.compile(
  vine.object({
    code: vine.string().trim(),
    name: vine.string().trim().minLength(1).maxLength(120).optional(),
    /** "none" clears it. */
    payment_page_domain: clearable(vine.any().use(paymentPageDomain())).optional(),
    /** The deposit killswitch: off makes every payment create answer 503 killswitch_off. */
    deposit_enabled: vine.any().use(onOff()).optional(),
    deposit_hours: vine.any().use(openHours()).optional(),
    settlement_hours: vine.any().use(openHours()).optional(),
    /** THB; marking a payment paid above it needs a second operator. "none": never. */
    four_eyes_threshold: clearable(vine.any().use(thbAmount({ allowZero: true }))).optional(),
    comment: vine.string().trim().maxLength(500).optional(),
  })
)

/**
 * Changes a platform's settings: name, payment page domain, the deposit
 * killswitch, deposit and settlement open hours, the four-eyes threshold.
 * Only the fields given change; returns the platform, the names of the
 * settings that changed (none: nothing written or audited) and the approval
 * requests opened.
 *
 * Four eyes: a back-office operator (an actor with an operator id) cannot
 * alone switch deposits back on after the killswitch, raise or remove the
 * four-eyes threshold, nor set a new payment page domain (where payers are
 * sent; removing it only stops flex payments and applies at once); those
 * changes become approval requests for another admin, and the rest of the
 * change is saved. From the command line (shell access to a server, outside
 * the back-office's roles) they apply at once, and the audit row says so; a
 * new payment page domain is also recorded as a break-glass use.
 *
 * A change applied directly closes the pending request it supersedes (status
 * superseded, with the reason, audited): switching deposits on from the
 * command line closes a waiting "switch deposits back on"; setting the
 * threshold directly (the command line, or an admin lowering it) closes a
 * waiting threshold change, which would otherwise later overwrite it.
 */
export async function configurePlatform(input: Record<string, unknown>, actor: Actor) {
  const data = await validateInput(configurePlatformValidator, input)
  return inTransaction(async (trx) => {
    const platform = await Platform.query({ client: trx })
      .where('code', data.code)
      .forUpdate()
      .first()
    if (!platform) throw ActionError.notFound('code', `no platform "${data.code}"`)

    const fromBackOffice = actor.operatorId !== undefined && actor.operatorId !== null
    const asked: Array<{ action: string; input: Record<string, unknown> }> = []
    const before = platformSnapshot(platform)
    const switchesOn = data.deposit_enabled === true && !platform.depositEnabled
    const threshold = data.four_eyes_threshold
    const weakens =
      threshold !== undefined &&
      platform.fourEyesThreshold !== null &&
      (threshold === null || threshold > platform.fourEyesThreshold)

    if (data.name !== undefined) platform.name = data.name
    const domain = data.payment_page_domain
    // A new payment page host decides where payers are sent: a second admin.
    const redirectsPayers =
      domain !== undefined && domain !== null && domain !== platform.paymentPageDomain
    if (domain !== undefined) {
      if (redirectsPayers && fromBackOffice) {
        asked.push({
          action: PAYMENT_PAGE_DOMAIN_ACTION,
          input: { code: platform.code, payment_page_domain: domain, comment: data.comment },
        })
      } else {
        platform.paymentPageDomain = domain
      }
    }
    if (data.deposit_enabled !== undefined) {
      if (switchesOn && fromBackOffice) {
        asked.push({
          action: 'platform.enable_deposits',
          input: { code: platform.code, comment: data.comment },
        })
      } else {
        platform.depositEnabled = data.deposit_enabled
      }
    }
    if (data.deposit_hours !== undefined) {
      ;[platform.depositOpenFrom, platform.depositOpenTo] = data.deposit_hours
    }
    if (data.settlement_hours !== undefined) {
      ;[platform.settlementOpenFrom, platform.settlementOpenTo] = data.settlement_hours
    }
    if (threshold !== undefined) {
      if (weakens && fromBackOffice) {
        asked.push({
          action: 'platform.four_eyes_threshold',
          input: { code: platform.code, four_eyes_threshold: threshold, comment: data.comment },
        })
      } else {
        platform.fourEyesThreshold = threshold
      }
    }

    const diff = changedValues(before, platformSnapshot(platform))
    const superseded: ApprovalRequest[] = []
    if (diff.changed.length > 0) {
      await platform.useTransaction(trx).save()
      const where = fromBackOffice ? 'in the back-office' : 'from the command line'
      const supersede = async (kind: string, what: string) => {
        const closed = await supersedePendingRequest(
          trx,
          kind,
          platformTarget(platform),
          actor,
          `${what} ${where} by ${actor.name}`
        )
        if (closed) superseded.push(closed)
      }
      if (diff.changed.includes('deposit_enabled') && platform.depositEnabled) {
        await supersede('enable_deposits', 'deposits switched on')
        if (actsFromShell(actor)) {
          await recordBreakGlass(trx, actor, {
            action: 'platform.enable_deposits',
            summary: `switched deposits of platform ${platform.code} back on`,
            target: { type: 'platform', id: platform.code },
          })
        }
      }
      if (diff.changed.includes('payment_page_domain')) {
        await supersede(
          PAYMENT_PAGE_DOMAIN_KIND,
          `payment page domain set to ${platform.paymentPageDomain ?? 'none'}`
        )
        if (redirectsPayers && actsFromShell(actor)) {
          await recordBreakGlass(trx, actor, {
            action: PAYMENT_PAGE_DOMAIN_ACTION,
            summary: `set the payment page domain of platform ${platform.code} from ${before.payment_page_domain ?? 'none'} to ${platform.paymentPageDomain}`,
            target: { type: 'platform', id: platform.code },
          })
        }
      }
      if (diff.changed.includes('four_eyes_threshold')) {
        await supersede(
          'four_eyes_threshold',
          `four-eyes threshold set to ${platformSnapshot(platform).four_eyes_threshold ?? 'none'}`
        )
        if (weakens && actsFromShell(actor)) {
          await recordBreakGlass(trx, actor, {
            action: 'platform.four_eyes_threshold',
            summary: `loosened the four-eyes threshold of platform ${platform.code} from ${before.four_eyes_threshold ?? 'none'} to ${platformSnapshot(platform).four_eyes_threshold ?? 'none'}`,
            target: { type: 'platform', id: platform.code },
          })
        }
      }
      const directly = !fromBackOffice && (switchesOn || weakens || redirectsPayers)
      const details: Record<string, unknown> = {}
      if (directly) details.four_eyes = 'not required from the command line'
      if (superseded.length > 0) {
        details.superseded_requests = superseded.map((request) => request.id)
      }
      await recordAudit(trx, actor, {
        action: 'platform.configure',
        target: { type: 'platform', id: platform.code },
        before: diff.before,
        after: diff.after,
        reason: { comment: data.comment },
        details: Object.keys(details).length > 0 ? details : null,
      })
    }

    const requests: ApprovalRequest[] = []
    for (const ask of asked) {
      requests.push(
        await openApprovalRequest(trx, {
          action: ask.action,
          target: platformTarget(platform),
          input: ask.input,
          prepared: { platform, target: platformTarget(platform) },
          actor,
          reason: { comment: data.comment },
        })
      )
    }
    return { platform, changed: diff.changed, requests, superseded }
  })
}

function platformTarget(platform: Platform): ApprovalTarget {
  return { type: 'platform', id: platform.code, amount: null, reviewedBy: null }
}

async function lockPlatform(trx: TransactionClientContract, code: string) {
  const platform = await Platform.query({ client: trx }).where('code', code).forUpdate().first()
  if (!platform) throw ActionError.notFound('code', `no platform "${code}"`)
  return platform
}

async function applyApproved(
  trx: TransactionClientContract,
  platform: Platform,
  change: (platform: Platform) => void,
  comment: string | undefined,
  context: RunContext
) {
  const before = platformSnapshot(platform)
  change(platform)
  const diff = changedValues(before, platformSnapshot(platform))
  await platform.useTransaction(trx).save()
  await recordAudit(trx, context.actor, {
    action: 'platform.configure',
    target: { type: 'platform', id: platform.code },
    before: diff.before,
    after: diff.after,
    reason: { comment },
    details: approvalDetails(context.request),
  })
  return diff.after
}

/* Switching deposits back on, as an approval request stores and runs it. */

const depositsOnSchema = vine.object({
  code: vine.string().trim(),
  comment: vine.string().trim().maxLength(500).optional(),
})
export const depositsOnValidator = vine.compile(depositsOnSchema)
export type DepositsOnData = Infer<typeof depositsOnSchema>

export async function prepareDepositsOn(trx: TransactionClientContract, data: DepositsOnData) {
  const platform = await lockPlatform(trx, data.code)
  if (platform.depositEnabled) {
    throw ActionError.field('code', `deposits of platform ${platform.code} are already on`)
  }
  return { platform, target: platformTarget(platform) }
}

export function runDepositsOn(
  trx: TransactionClientContract,
  prepared: Awaited<ReturnType<typeof prepareDepositsOn>>,
  data: DepositsOnData,
  context: RunContext
) {
  return applyApproved(
    trx,
    prepared.platform,
    (platform) => (platform.depositEnabled = true),
    data.comment,
    context
  )
}

/* Raising or removing the four-eyes threshold, as an approval request stores and runs it. */

const fourEyesThresholdSchema = vine.object({
  code: vine.string().trim(),
  /** Satang (stored as validated), null: never. */
  four_eyes_threshold: vine.number().withoutDecimals().min(0).nullable(),
  comment: vine.string().trim().maxLength(500).optional(),
})
export const fourEyesThresholdValidator = vine.compile(fourEyesThresholdSchema)
export type FourEyesThresholdData = Infer<typeof fourEyesThresholdSchema>

export async function prepareFourEyesThreshold(
  trx: TransactionClientContract,
  data: FourEyesThresholdData
) {
  const platform = await lockPlatform(trx, data.code)
  if (platform.fourEyesThreshold === data.four_eyes_threshold) {
    throw ActionError.field(
      'four_eyes_threshold',
      `the four-eyes threshold of platform ${platform.code} is already ${platformSnapshot(platform).four_eyes_threshold ?? 'none'}`
    )
  }
  return { platform, target: platformTarget(platform) }
}

export function runFourEyesThreshold(
  trx: TransactionClientContract,
  prepared: Awaited<ReturnType<typeof prepareFourEyesThreshold>>,
  data: FourEyesThresholdData,
  context: RunContext
) {
  return applyApproved(
    trx,
    prepared.platform,
    (platform) => (platform.fourEyesThreshold = data.four_eyes_threshold),
    data.comment,
    context
  )
}

/* A new payment page domain, as an approval request stores and runs it. */

export const PAYMENT_PAGE_DOMAIN_ACTION = 'platform.payment_page_domain'
export const PAYMENT_PAGE_DOMAIN_KIND = 'payment_page_domain'

const paymentPageDomainSchema = vine.object({
  code: vine.string().trim(),
  payment_page_domain: vine.any().use(paymentPageDomain()),
  comment: vine.string().trim().maxLength(500).optional(),
})
export const paymentPageDomainValidator = vine.compile(paymentPageDomainSchema)
export type PaymentPageDomainData = Infer<typeof paymentPageDomainSchema> & {
  payment_page_domain: string
}

export async function preparePaymentPageDomain(
  trx: TransactionClientContract,
  data: PaymentPageDomainData
) {
  const platform = await lockPlatform(trx, data.code)
  if (platform.paymentPageDomain === data.payment_page_domain) {
    throw ActionError.field(
      'payment_page_domain',
      `the payment page domain of platform ${platform.code} is already ${data.payment_page_domain}`
    )
  }
  return { platform, target: platformTarget(platform) }
}

/* Switching deposits back on and loosening four eyes wait for a second admin. */
registerApprovableAction<DepositsOnData, Awaited<ReturnType<typeof prepareDepositsOn>>>({
  name: 'platform.enable_deposits',
  sensitive: true,
  kind: 'enable_deposits',
  approverRole: 'admin',
  describe: (data) => `switch deposits of platform ${data.code} back on`,
  validate: (input) => validateInput(depositsOnValidator, input),
  prepare: (trx, data) => prepareDepositsOn(trx, data),
  run: (trx, prepared, data, context) => runDepositsOn(trx, prepared, data, context),
})

registerApprovableAction<
  FourEyesThresholdData,
  Awaited<ReturnType<typeof prepareFourEyesThreshold>>
>({
  name: 'platform.four_eyes_threshold',
  sensitive: true,
  kind: 'four_eyes_threshold',
  approverRole: 'admin',
  describe: (data) =>
    `set the four-eyes threshold of platform ${data.code} to ` +
    (data.four_eyes_threshold === null ? 'none' : formatAmount(data.four_eyes_threshold)),
  validate: (input) => validateInput(fourEyesThresholdValidator, input),
  prepare: (trx, data) => prepareFourEyesThreshold(trx, data),
  run: (trx, prepared, data, context) => runFourEyesThreshold(trx, prepared, data, context),
})

/* Sending payers to another payment page host waits for a second admin, always. */
registerApprovableAction<
  PaymentPageDomainData,
  Awaited<ReturnType<typeof preparePaymentPageDomain>>
>({
  name: PAYMENT_PAGE_DOMAIN_ACTION,
  kind: PAYMENT_PAGE_DOMAIN_KIND,
  approverRole: 'admin',
  sensitive: true,
  describe: (data) =>
    `set the payment page domain of platform ${data.code} to ${data.payment_page_domain}`,
  change: (data, prepared) => ({
    before: { payment_page_domain: prepared.platform.paymentPageDomain ?? 'none' },
    after: { payment_page_domain: data.payment_page_domain },
  }),
  validate: async (input) =>
    (await validateInput(paymentPageDomainValidator, input)) as PaymentPageDomainData,
  prepare: (trx, data) => preparePaymentPageDomain(trx, data),
  run: (trx, prepared, data, context) =>
    applyApproved(
      trx,
      prepared.platform,
      (platform) => (platform.paymentPageDomain = data.payment_page_domain),
      data.comment,
      context
    ),
})

/**
 * The deposit killswitch from the back-office, confirmed first: switching
 * deposits off makes every payment create answer 503. The rest is
 * configurePlatform.
 */
export async function switchPlatformDeposits(input: Record<string, unknown>, actor: Actor) {
  await assertConfirmed(input, 'tick the box to confirm the switch')
  return configurePlatform(
    { code: input.code, deposit_enabled: input.deposit_enabled, comment: input.comment },
    actor
  )
}
