import { DateTime } from 'luxon'
import type PaymentSlip from '#slips/models/payment_slip'
import type { Forensics, LineSighting } from '#slips/forensics'
import type { VerificationChecks } from '#slips/verification'
import type { SourceAnswer } from '#slips/slip_check'
import { formatGatewayDateTime } from '#core/clock'
import { formatThb } from '#core/money'

const bangkokIso = (iso: unknown) =>
  typeof iso === 'string' && iso ? formatGatewayDateTime(DateTime.fromISO(iso)) : null
const thb = (satang: unknown) => (typeof satang === 'number' ? formatThb(satang) : null)

/** One check of the verification as a row: what the order expects, what the slip's source says. */
interface CheckRow {
  check: string
  result: string
  ok: boolean
  expected: string
  actual: string
  /** The orders a reuse names, linked to their pages. */
  orders?: OrderLabel[]
}

interface OrderLabel {
  text: string
  href: string | null
}

/**
 * Orders as operators know them: platform_order_id and merchant, found in
 * the slip's forensics (the slips and lines seen with its reference), never
 * the internal id unless nothing else is known (a record kept before the
 * lines carried their order).
 */
function orderLabeller(forensics: Forensics | null, lines: LineSighting[]) {
  const known = new Map<string, { platform_order_id: string; merchant_id: string | null }>()
  for (const seen of [...(forensics?.same_trans_ref ?? []), ...(forensics?.same_image ?? [])]) {
    known.set(`payment:${seen.payment_order_id}`, seen)
  }
  for (const line of [...(forensics?.statement_lines ?? []), ...lines]) {
    if (line.order_type && line.order_id !== null && line.platform_order_id) {
      known.set(`${line.order_type}:${line.order_id}`, {
        platform_order_id: line.platform_order_id,
        merchant_id: line.merchant_id ?? null,
      })
    }
  }
  return (orderType: string, orderId: number): OrderLabel => {
    const order = known.get(`${orderType}:${orderId}`)
    if (!order) return { text: `a ${orderType} order (id ${orderId})`, href: null }
    return {
      text: `${order.platform_order_id}${order.merchant_id ? ` (merchant ${order.merchant_id})` : ''}`,
      href: `/admin/orders/${encodeURIComponent(order.platform_order_id)}`,
    }
  }
}

function checkRows(
  checks: VerificationChecks | null | undefined,
  label: ReturnType<typeof orderLabeller>
): CheckRow[] {
  if (!checks) return []
  const account = (value: {
    accountNo?: string | null
    promptpayId?: string | null
    billerId?: string | null
  }) => [value.accountNo, value.promptpayId, value.billerId].filter(Boolean).join(' / ')
  return [
    {
      check: 'reference',
      result: checks.reference.result,
      ok: checks.reference.result !== 'error',
      expected: checks.reference.expected ?? '—',
      actual: checks.reference.actual ?? '—',
    },
    {
      check: 'amount',
      result: checks.amount.result,
      ok: checks.amount.result === 'ok',
      expected: thb(checks.amount.expected) ?? '—',
      actual: thb(checks.amount.actual) ?? '—',
    },
    {
      check: 'destination',
      result: checks.destination.result,
      ok: checks.destination.result === 'ok',
      expected: account(checks.destination.expected) || '—',
      actual:
        [checks.destination.actual?.account, checks.destination.actual?.proxy]
          .filter(Boolean)
          .join(' / ') || '—',
    },
    {
      check: 'time',
      result: checks.time.result,
      ok: checks.time.result === 'in_time',
      expected: `${bangkokIso(checks.time.earliest)} – ${bangkokIso(checks.time.latest)}`,
      actual: bangkokIso(checks.time.transferred_at) ?? '—',
    },
    {
      check: 'reuse',
      result: checks.reuse.result,
      ok: checks.reuse.result === 'ok',
      expected: 'used by no other order',
      actual:
        checks.reuse.used_by.length === 0
          ? checks.reuse.repeated_at_source
            ? `verified before, says ${checks.reuse.repeated_at_source} (repeated slip)`
            : 'none'
          : checks.reuse.used_by
              .map((use) => {
                const what = use.kind === 'slip' ? 'slip' : 'statement line'
                return `${what} of ${label(use.order.orderType, use.order.orderId).text}`
              })
              .join('; '),
      orders: checks.reuse.used_by.map((use) => ({
        ...label(use.order.orderType, use.order.orderId),
        text: `${use.kind === 'slip' ? 'slip' : 'statement line'} of ${label(use.order.orderType, use.order.orderId).text}`,
      })),
    },
  ]
}

/**
 * A slip as operators review it: the upload, what its QR said, the latest
 * verification (each check with expected and actual values, the facts and
 * which source gave them) and the forensics (the same image or transaction
 * reference on other orders, statement lines carrying the reference: as
 * they are now when `live.statementLines` is given, else as at the check).
 * The image itself is served by the back-office's authenticated slip route.
 */
export function slipDetails(slip: PaymentSlip, live: { statementLines?: LineSighting[] } = {}) {
  const record = (slip.verification ?? {}) as Record<string, any>
  const facts = record.facts as Record<string, any> | null | undefined
  const forensics = (record.forensics ?? null) as Forensics | null
  // The statement lines carrying the transRef now, when the page read them; else those of the check.
  const statementLines = live.statementLines ?? forensics?.statement_lines ?? []
  const label = orderLabeller(forensics, statementLines)
  const sighting = (entry: Forensics['same_image'][number]) => ({
    slip_id: entry.slip_id,
    platform_order_id: entry.platform_order_id,
    merchant_id: entry.merchant_id,
    source: entry.source,
    uploaded: bangkokIso(entry.uploaded_at),
    verification_status: entry.verification_status,
  })
  return {
    id: slip.id,
    image_url: `/admin/slips/${slip.id}/image`,
    source: slip.source,
    uploaded: formatGatewayDateTime(slip.createdAt),
    checked: formatGatewayDateTime(slip.checkedAt),
    sha256: slip.sha256,
    byte_size: slip.byteSize,
    mime: slip.mime,
    qr_kind: (record.qr?.kind as string | undefined) ?? null,
    qr_text: slip.qrText,
    sending_bank: slip.sendingBank,
    trans_ref: slip.transRef,
    verification_status: slip.verificationStatus,
    verification_msg: slip.verificationMsg,
    checks: checkRows(record.checks, label),
    facts: facts
      ? {
          source: String(facts.source ?? ''),
          amount: thb(facts.amount),
          receiver:
            [facts.receiver?.account, facts.receiver?.proxy].filter(Boolean).join(' / ') || null,
          transferred: bangkokIso(facts.transferred_at),
          reference1: (facts.reference1 as string | null) ?? null,
          evidence: facts.evidence ? JSON.stringify(facts.evidence) : null,
        }
      : null,
    sources: ((record.sources ?? []) as SourceAnswer[]).map((answer) => ({
      name: answer.name,
      answer: answer.answer,
      error: answer.error ?? null,
    })),
    forensics: {
      same_image: (forensics?.same_image ?? []).map(sighting),
      same_trans_ref: (forensics?.same_trans_ref ?? []).map(sighting),
      statement_lines: statementLines.map((line) => ({
        id: line.statement_line_id,
        href: `/admin/review/lines/${line.statement_line_id}`,
        deposit_account_id: line.deposit_account_id,
        amount: formatThb(line.amount),
        time: bangkokIso(line.line_at),
        status: line.status,
        order:
          line.order_type && line.order_id !== null
            ? label(line.order_type, line.order_id).text
            : null,
        order_href:
          line.order_type && line.order_id !== null
            ? label(line.order_type, line.order_id).href
            : null,
      })),
    },
  }
}

export type SlipDetails = ReturnType<typeof slipDetails>
