import type { DateTime } from 'luxon'
import type { DepositChannel } from '#payments/models/deposit_account'
import type { ClaimedOrder, SlipFacts, SlipRefusalReason } from '#slips/verifiers/slip_verifier'
import { NO_QR, QRCODE_ERROR, QRCODE_MISSING_TIME } from '#slips/mini_qr'

/**
 * The rules that turn what a slip's image said, what the sources know of its
 * transaction and the order into the spec's verification_msg (POST
 * /slip/upload). Pure: no database, no clock. docs/decisions.md, "Slips:
 * verification", explains the wording and the order of the parts.
 */

export const VERIFICATION_PENDING = 'slip received, verification pending.'
export { NO_QR, QRCODE_ERROR, QRCODE_MISSING_TIME }

export type VerificationStatus = 'pending' | 'passed' | 'failed' | 'unreadable'

/** Statement times are minute-precise: the time window is widened by this much. */
export const TIME_SLACK_SECONDS = 60

/** What the image's QR said. */
export type SlipReading =
  | { kind: 'no_qr' }
  /** A QR that is not a slip's mini-QR (a PromptPay payment QR, anything else, a bad CRC). */
  | { kind: 'not_slip'; qrText: string; what: 'promptpay' | 'garbage' }
  | {
      kind: 'slip'
      qrText: string
      sendingBank: string
      transRef: string
      /** yyyyMMdd when the QR carries a date (TrueMoney); never a time. */
      transDate: string | null
    }

/** The order as the rules compare it. */
export interface OrderTerms {
  id: number
  channel: DepositChannel
  /** satang */
  transferAmount: number
  /** ref1 of a bill-payment order, null otherwise. */
  paymentReference: string | null
  orderAt: DateTime
  expireAt: DateTime
  account: { accountNo: string; promptpayId: string | null; billerId: string | null }
}

/**
 * Where else the slip's transaction reference has been seen before this
 * slip: slips of other orders uploaded earlier, statement lines matched to
 * other orders.
 */
export interface ReferenceUse {
  kind: 'slip' | 'statement_line'
  order: ClaimedOrder
}

export type AmountResult = 'ok' | 'mismatch'
export type DestinationResult = 'ok' | 'error'
export type TimeResult = 'in_time' | 'expired' | 'before_create'

export interface VerificationChecks {
  reference: {
    result: 'ok' | 'error' | 'not_applicable'
    expected: string | null
    actual: string | null
  }
  amount: { result: AmountResult; expected: number; actual: number }
  destination: {
    result: DestinationResult
    expected: OrderTerms['account']
    actual: SlipFacts['receiver']
  }
  time: {
    result: TimeResult
    transferred_at: string
    earliest: string
    latest: string
  }
  reuse: {
    result: 'ok' | 'error'
    used_by: ReferenceUse[]
    /** The source that said the transaction was verified before (a provider's repeated slip). */
    repeated_at_source?: string
  }
}

/** A source's refutation of the slip without the transaction's facts (docs/slips.md). */
export interface Refutation {
  source: string
  reason: SlipRefusalReason
}

export interface Verification {
  status: VerificationStatus
  message: string
  checks: VerificationChecks | null
}

export function verifySlip(
  reading: SlipReading,
  facts: SlipFacts | null,
  order: OrderTerms,
  uses: ReferenceUse[],
  refutation: Refutation | null = null
): Verification {
  if (reading.kind === 'no_qr') return { status: 'unreadable', message: NO_QR, checks: null }
  if (reading.kind === 'not_slip') {
    return { status: 'unreadable', message: QRCODE_ERROR, checks: null }
  }
  if (!facts && refutation) return refutedSlip(refutation, order, uses)
  if (!facts) return { status: 'pending', message: VERIFICATION_PENDING, checks: null }
  // A date alone (TrueMoney's QR) cannot tell whether the transfer was in time.
  const transferredAt = facts.transferredAt
  if (!transferredAt) {
    return { status: 'unreadable', message: QRCODE_MISSING_TIME, checks: null }
  }

  const elsewhere = uses.filter((use) => !isOrder(use.order, order.id))
  if (facts.claimedBy && !isOrder(facts.claimedBy, order.id)) {
    elsewhere.push({ kind: 'statement_line', order: facts.claimedBy })
  }
  // The transaction matched to this very order is this order's, whoever else
  // showed its slip: their slips are the reuse, not this one.
  const ownTransaction = facts.claimedBy !== null && isOrder(facts.claimedBy, order.id)
  // A source that has seen the transaction before (a provider's repeated
  // slip) names a reuse unless the gateway's own records show this order's
  // earlier slip or line with it: the same slip sent again for the same order.
  const repeatedElsewhere =
    facts.repeated === true && !uses.some((use) => isOrder(use.order, order.id))
  const reused = (elsewhere.length > 0 || repeatedElsewhere) && !ownTransaction
  const reference = referenceCheck(order, facts)
  const checks: VerificationChecks = {
    reference,
    amount: {
      result: facts.amount === order.transferAmount ? 'ok' : 'mismatch',
      expected: order.transferAmount,
      actual: facts.amount,
    },
    destination: {
      result: sameDestination(facts.receiver, order.account) ? 'ok' : 'error',
      expected: order.account,
      actual: facts.receiver,
    },
    time: timeCheck(transferredAt, order),
    reuse: {
      result: reused ? 'error' : 'ok',
      used_by: uniqueUses(elsewhere),
      ...(facts.repeated ? { repeated_at_source: facts.source } : {}),
    },
  }

  const time = TIME_TEXT[checks.time.result]
  // A bill payment's ref1 names the order and replaces the destination check;
  // a transfer of another amount does not pay it, ref1 or not.
  if (reference.result === 'ok' && !reused && checks.amount.result === 'ok') {
    return {
      status: checks.time.result === 'in_time' ? 'passed' : 'failed',
      message: `ref ok, ${time}.`,
      checks,
    }
  }

  const amount = checks.amount.result === 'ok' ? 'amount ok' : 'amount mismatch'
  const destination =
    checks.destination.result === 'ok'
      ? order.channel === 'transfer'
        ? 'destination ok (TRANSFER)'
        : 'destination ok'
      : 'destination error'
  // A transfer that went elsewhere is named first (the spec's all-failed row).
  const parts =
    checks.destination.result === 'error'
      ? [destination, amount, time]
      : [amount, destination, time]
  if (reused || reference.result === 'error') parts.push('ref error')
  const passed =
    checks.amount.result === 'ok' &&
    checks.destination.result === 'ok' &&
    checks.time.result === 'in_time' &&
    !reused &&
    reference.result !== 'error'
  return { status: passed ? 'passed' : 'failed', message: `${parts.join(', ')}.`, checks }
}

/**
 * A source refuted the slip without giving the transaction (no source gave
 * facts): failed, naming what it refuted; a reuse the gateway itself knows
 * of is added as `ref error`. A repeated slip the gateway has seen only on
 * this order's own earlier slip is that slip sent again: without facts it
 * stays pending, and the earlier slip carries the verdict.
 */
function refutedSlip(
  refutation: Refutation,
  order: OrderTerms,
  uses: ReferenceUse[]
): Verification {
  const elsewhere = uses.some((use) => !isOrder(use.order, order.id))
  if (refutation.reason === 'repeated') {
    if (!elsewhere && uses.some((use) => isOrder(use.order, order.id))) {
      return { status: 'pending', message: VERIFICATION_PENDING, checks: null }
    }
    return { status: 'failed', message: 'ref error.', checks: null }
  }
  const part = refutation.reason === 'amount_mismatch' ? 'amount mismatch' : 'destination error'
  return { status: 'failed', message: `${part}${elsewhere ? ', ref error' : ''}.`, checks: null }
}

const TIME_TEXT: Record<TimeResult, string> = {
  in_time: 'transfer in time',
  expired: 'transfer expired',
  before_create: 'transfer before create',
}

function isOrder(claimed: ClaimedOrder, orderId: number) {
  return claimed.orderType === 'payment' && claimed.orderId === orderId
}

function uniqueUses(uses: ReferenceUse[]) {
  const seen = new Set<string>()
  return uses.filter((use) => {
    const key = `${use.kind}:${use.order.orderType}:${use.order.orderId}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

/**
 * Only a QR order with a bill-payment reference has one to compare: the
 * source's ref1 either names this order or another one.
 */
function referenceCheck(order: OrderTerms, facts: SlipFacts): VerificationChecks['reference'] {
  if (order.channel !== 'qr' || !order.paymentReference || !facts.reference1) {
    return { result: 'not_applicable', expected: order.paymentReference, actual: facts.reference1 }
  }
  return {
    result: facts.reference1 === order.paymentReference ? 'ok' : 'error',
    expected: order.paymentReference,
    actual: facts.reference1,
  }
}

/**
 * In time: from the order's creation to its expiry, both widened by the
 * slack. Earlier than that the slip predates the order (an old slip);
 * later, the order had expired.
 */
export function timeCheck(
  transferredAt: DateTime,
  order: Pick<OrderTerms, 'orderAt' | 'expireAt'>
) {
  const earliest = order.orderAt.minus({ seconds: TIME_SLACK_SECONDS })
  const latest = order.expireAt.plus({ seconds: TIME_SLACK_SECONDS })
  const at = transferredAt.toMillis()
  const result: TimeResult =
    at < earliest.toMillis() ? 'before_create' : at > latest.toMillis() ? 'expired' : 'in_time'
  return {
    result,
    transferred_at: transferredAt.toUTC().toISO()!,
    earliest: earliest.toUTC().toISO()!,
    latest: latest.toUTC().toISO()!,
  }
}

/**
 * The receiver is the order's deposit account: its account number (a source
 * may mask all but a few digits) or its PromptPay or biller id.
 */
export function sameDestination(receiver: SlipFacts['receiver'], account: OrderTerms['account']) {
  if (receiver.account && maskedAccountMatches(receiver.account, account.accountNo)) return true
  if (!receiver.proxy) return false
  const proxy = normalizeProxy(receiver.proxy)
  return [account.promptpayId, account.billerId].some(
    (own) => own !== null && normalizeProxy(own) === proxy
  )
}

/**
 * `xxx-x-x1234-x` against `1234561234`: separators are ignored, the lengths
 * must agree and every shown digit must match. Without a mask: equal digits.
 */
export function maskedAccountMatches(shown: string, accountNo: string) {
  const masked = shown.replace(/[\s-]/g, '').toLowerCase()
  const actual = accountNo.replace(/\D/g, '')
  if (masked.length === 0 || masked.length !== actual.length) return false
  if (!/^[0-9x*]+$/.test(masked) || !/\d/.test(masked)) return false
  return [...masked].every(
    (character, index) => character === 'x' || character === '*' || character === actual[index]
  )
}

/**
 * PromptPay ids as people and QR payloads write them: a mobile number as
 * `0812345678`, `66812345678` or `0066812345678`; other ids as their digits.
 */
export function normalizeProxy(proxy: string) {
  const digits = proxy.replace(/\D/g, '')
  if (/^0066\d{9}$/.test(digits)) return `0${digits.slice(4)}`
  if (/^66\d{9}$/.test(digits)) return `0${digits.slice(2)}`
  return digits
}
