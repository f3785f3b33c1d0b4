import { rateFee } from '#core/money'
import type { GatewayAccountCode } from '#ledger/accounts'
import type { LedgerLeg, LedgerPosting } from '#ledger/ledger'

/**
 * Every money movement of the gateway, as named recipes: the only place
 * ledger postings are assembled. Actions choose a recipe and post it in
 * their own transaction; none builds legs itself.
 *
 * The ledger's sign: + increases an account. Merchant balances and the
 * gateway's revenue are positive; assets (the deposit accounts' bank
 * accounts, money the bank is yet to receive) are negative. Every posting
 * sums to zero.
 *
 * Bank money first: a statement import posts what each deposit account
 * received (bank → deposit_clearing) and sent (payout_clearing → bank);
 * a merchant credit then consumes a receipt from deposit_clearing, or, when
 * it is decided before its bank line exists, from deposit_receivable, which
 * the line clears when it arrives (docs/reconciliation.md).
 */

/** Where the money of a deposit credit comes from. */
export type CreditSource = 'clearing' | 'receivable'

const SOURCE_ACCOUNT: Record<CreditSource, GatewayAccountCode> = {
  clearing: 'deposit_clearing',
  receivable: 'deposit_receivable',
}

/**
 * A deposit credited to a merchant: `received` leaves the source; the
 * merchant gets `creditedBase` − fee, the fee goes to fee revenue, and what
 * was received above `creditedBase` (the satang a transfer_amount adds to
 * make the slot unique) to slot adjustment. Zero legs are left out. The one
 * recipe behind a payment paid, a late payment and a line credited to a
 * merchant.
 */
function depositCreditLegs(credit: {
  source: GatewayAccountCode
  received: number
  merchantId: number
  account: 'unsettled' | 'available'
  creditedBase: number
  fee: number
}): LedgerLeg[] {
  const net = credit.creditedBase - credit.fee
  const adjustment = credit.received - credit.creditedBase
  const legs: LedgerLeg[] = [{ gateway: credit.source, amount: -credit.received }]
  if (net !== 0) legs.push({ merchantId: credit.merchantId, account: credit.account, amount: net })
  if (credit.fee !== 0) legs.push({ gateway: 'fee_revenue', amount: credit.fee })
  if (adjustment !== 0) legs.push({ gateway: 'slot_adjustment', amount: adjustment })
  return legs
}

/**
 * What the merchant gets for a payment: the order's amount less its fee
 * when the bank received transfer_amount; when an operator credits another
 * amount received (an underpayment or an overpayment, docs/decisions.md),
 * that amount less the fee on it: never more than the bank received.
 */
export function paymentCredit(
  order: { amount: number; transferAmount: number },
  received: number,
  paymentFeeRateBps: number
) {
  const creditedBase = received === order.transferAmount ? order.amount : received
  const fee = Math.min(rateFee(creditedBase, paymentFeeRateBps), creditedBase)
  return { creditedBase, fee, credited: creditedBase - fee }
}

/**
 * A statement import's lines of one bank day on one deposit account: the
 * credits arrive in the bank account and wait, unclaimed, in deposit
 * clearing; the debits left the bank account, for payouts sent and returns
 * (payout clearing). One posting per import and day, keyed by both.
 */
export function bankStatementPosting(statement: {
  depositAccountId: number
  importId: number
  /** GMT+7, YYYY-MM-DD */
  day: string
  credits: number
  debits: number
}): LedgerPosting | null {
  const { credits, debits } = statement
  if (credits === 0 && debits === 0) return null
  const legs: LedgerLeg[] = []
  if (debits - credits !== 0)
    legs.push({ bank: statement.depositAccountId, amount: debits - credits })
  if (credits !== 0) legs.push({ gateway: 'deposit_clearing', amount: credits })
  if (debits !== 0) legs.push({ gateway: 'payout_clearing', amount: -debits })
  return {
    kind: 'bank_statement',
    reference: { type: 'statement_import', id: String(statement.importId) },
    idempotencyKey: `bank_statement:${statement.importId}:${statement.day}`,
    description: `deposit account ${statement.depositAccountId}, ${statement.day}: received and sent`,
    valueDate: statement.day,
    legs,
  }
}

/**
 * A payment order paid (open → unsettled_paid): what the bank received for
 * it leaves deposit clearing (its line was claimed) or deposit receivable
 * (its line is still to come), the merchant's unsettled balance gets the
 * credit less the fee. Keyed by the order: an order is paid once.
 */
export function paymentPaidPosting(
  order: { merchantId: number; platformOrderId: string; amount: number; transferAmount: number },
  paymentFeeRateBps: number,
  options: { source?: CreditSource; received?: number } = {}
): { fee: number; credited: number; creditedBase: number; posting: LedgerPosting } {
  const received = options.received ?? order.transferAmount
  const credit = paymentCredit(order, received, paymentFeeRateBps)
  return {
    ...credit,
    posting: {
      kind: 'payment_paid',
      reference: { type: 'payment', id: order.platformOrderId },
      legs: depositCreditLegs({
        source: SOURCE_ACCOUNT[options.source ?? 'clearing'],
        received,
        merchantId: order.merchantId,
        account: 'unsettled',
        creditedBase: credit.creditedBase,
        fee: credit.fee,
      }),
    },
  }
}

/** unsettled_paid → settled_paid: the credit moves from unsettled to the available balance. */
export function paymentSettledPosting(order: {
  merchantId: number
  platformOrderId: string
  net: number
}): LedgerPosting | null {
  if (order.net === 0) return null
  return {
    kind: 'payment_settled',
    reference: { type: 'payment', id: order.platformOrderId },
    legs: [
      { merchantId: order.merchantId, account: 'unsettled', amount: -order.net },
      { merchantId: order.merchantId, account: 'available', amount: order.net },
    ],
  }
}

/**
 * The late payment of an expired order (error is final): the line's money
 * goes to the merchant's available balance (no settlement run picks up an
 * error order), amount − the order's fee, keyed by the line.
 */
export function latePaymentPosting(
  order: { merchantId: number; platformOrderId: string; amount: number },
  line: { id: number; amount: number },
  fee: number
): LedgerPosting {
  return {
    kind: 'payment_late',
    reference: { type: 'payment', id: order.platformOrderId },
    idempotencyKey: `payment_late:statement_line:${line.id}`,
    description: `late payment, statement line #${line.id}`,
    legs: depositCreditLegs({
      source: 'deposit_clearing',
      received: line.amount,
      merchantId: order.merchantId,
      account: 'available',
      creditedBase: order.amount,
      fee,
    }),
  }
}

/**
 * A line no order claims, credited to the merchant an operator names: the
 * amount less the merchant's payment fee to its available balance, keyed by
 * the line.
 */
export function lineCreditPosting(
  line: { id: number; amount: number },
  merchant: { id: number; merchantId: string; paymentFeeRateBps: number }
) {
  const fee = Math.min(rateFee(line.amount, merchant.paymentFeeRateBps), line.amount)
  return {
    fee,
    credited: line.amount - fee,
    posting: {
      kind: 'statement_line_credit',
      reference: { type: 'statement_line', id: String(line.id) },
      description: `statement line #${line.id} credited to ${merchant.merchantId}`,
      legs: depositCreditLegs({
        source: 'deposit_clearing',
        received: line.amount,
        merchantId: merchant.id,
        account: 'available',
        creditedBase: line.amount,
        fee,
      }),
    } satisfies LedgerPosting,
  }
}

/**
 * A line returned to the payer: the money the gateway held for nobody is to
 * leave the bank again (payout clearing until the debit line shows it).
 */
export function returnToPayerPosting(
  line: { id: number; amount: number },
  to: { bank: string; accountNo: string }
): LedgerPosting {
  return {
    kind: 'statement_line_return',
    reference: { type: 'statement_line', id: String(line.id) },
    description: `statement line #${line.id} returned to ${to.bank} ${to.accountNo}`,
    legs: [
      { gateway: 'deposit_clearing', amount: -line.amount },
      { gateway: 'payout_clearing', amount: line.amount },
    ],
  }
}

/**
 * The bank line of a payment credited before it arrived: the receipt in
 * deposit clearing settles the receivable. Keyed by the line.
 */
export function receivableClearedPosting(
  line: { id: number; amount: number },
  order: { platformOrderId: string }
): LedgerPosting {
  return {
    kind: 'receivable_cleared',
    reference: { type: 'payment', id: order.platformOrderId },
    idempotencyKey: `receivable_cleared:statement_line:${line.id}`,
    description: `statement line #${line.id} received for ${order.platformOrderId}`,
    legs: [
      { gateway: 'deposit_clearing', amount: -line.amount },
      { gateway: 'deposit_receivable', amount: line.amount },
    ],
  }
}

/**
 * The line of a payment credited before it brought another amount than the
 * receivable expected, and an operator credits what arrived: the receipt
 * settles the receivable, and the merchant's credit, fee and slot
 * adjustment move from what was credited on the slip's word to what the
 * line received (the merchant's balance goes down for a short transfer).
 */
export function receivableSettledPosting(settlement: {
  line: { id: number; amount: number }
  order: { merchantId: number; platformOrderId: string }
  expected: number
  before: { creditedBase: number; fee: number }
  after: { creditedBase: number; fee: number }
  account: 'unsettled' | 'available'
}): LedgerPosting {
  const { line, before, after, expected } = settlement
  const net = after.creditedBase - after.fee - (before.creditedBase - before.fee)
  const fee = after.fee - before.fee
  const slot = line.amount - after.creditedBase - (expected - before.creditedBase)
  const legs: LedgerLeg[] = [
    { gateway: 'deposit_clearing', amount: -line.amount },
    { gateway: 'deposit_receivable', amount: expected },
  ]
  if (net !== 0)
    legs.push({ merchantId: settlement.order.merchantId, account: settlement.account, amount: net })
  if (fee !== 0) legs.push({ gateway: 'fee_revenue', amount: fee })
  if (slot !== 0) legs.push({ gateway: 'slot_adjustment', amount: slot })
  return {
    kind: 'receivable_cleared',
    reference: { type: 'payment', id: settlement.order.platformOrderId },
    idempotencyKey: `receivable_cleared:statement_line:${line.id}`,
    description: `statement line #${line.id} received ${line.amount} satang for ${settlement.order.platformOrderId}, ${expected} expected`,
    legs,
  }
}

/**
 * A payment credited before its bank line, whose line never came: the
 * credit is taken back from the merchant (unsettled, or available when it
 * had settled) with its fee and slot adjustment, and the receivable closes.
 */
export function receivableReversedPosting(reversal: {
  order: { merchantId: number; platformOrderId: string }
  expected: number
  credit: { creditedBase: number; fee: number }
  account: 'unsettled' | 'available'
}): LedgerPosting {
  const { credit, expected } = reversal
  const legs: LedgerLeg[] = [{ gateway: 'deposit_receivable', amount: expected }]
  const net = credit.creditedBase - credit.fee
  if (net !== 0) {
    legs.push({ merchantId: reversal.order.merchantId, account: reversal.account, amount: -net })
  }
  if (credit.fee !== 0) legs.push({ gateway: 'fee_revenue', amount: -credit.fee })
  if (expected !== credit.creditedBase) {
    legs.push({ gateway: 'slot_adjustment', amount: credit.creditedBase - expected })
  }
  return {
    kind: 'receivable_reversed',
    reference: { type: 'payment', id: reversal.order.platformOrderId },
    description: `${reversal.order.platformOrderId}: credited before its bank line, which never came`,
    legs,
  }
}

interface PayoutTerms {
  kind: 'withdraw' | 'settlement'
  platformOrderId: string
  merchantId: number
  amount: number
  fee: number
}

const total = (payout: PayoutTerms) => payout.amount + payout.fee

/** A withdrawal or settlement created: amount + fee held (available → frozen), never below zero. */
export function holdPosting(payout: PayoutTerms): LedgerPosting {
  return {
    kind: `${payout.kind}_hold`,
    reference: { type: payout.kind, id: payout.platformOrderId },
    legs: [
      { merchantId: payout.merchantId, account: 'available', amount: -total(payout) },
      { merchantId: payout.merchantId, account: 'frozen', amount: total(payout) },
    ],
    nonNegative: ['available'],
  }
}

/** The hold timed out: amount + fee back to available; the order stays open. */
export function holdReleasedPosting(payout: PayoutTerms): LedgerPosting {
  return {
    kind: `${payout.kind}_hold_release`,
    reference: { type: payout.kind, id: payout.platformOrderId },
    legs: [
      { merchantId: payout.merchantId, account: 'frozen', amount: -total(payout) },
      { merchantId: payout.merchantId, account: 'available', amount: total(payout) },
    ],
  }
}

/** The payout failed while its hold was held: amount + fee back to available. */
export function holdReturnedPosting(payout: PayoutTerms): LedgerPosting {
  return {
    kind: `${payout.kind}_hold_return`,
    reference: { type: payout.kind, id: payout.platformOrderId },
    legs: [
      { merchantId: payout.merchantId, account: 'frozen', amount: -total(payout) },
      { merchantId: payout.merchantId, account: 'available', amount: total(payout) },
    ],
  }
}

/**
 * The bank paid out: amount + fee leave the hold (or the available balance,
 * when the hold had timed out); the amount is to leave the bank (payout
 * clearing until its debit line), the fee is the gateway's.
 */
export function holdConsumedPosting(
  payout: PayoutTerms,
  from: 'frozen' | 'available'
): LedgerPosting {
  const legs: LedgerLeg[] = [
    { merchantId: payout.merchantId, account: from, amount: -total(payout) },
    { gateway: 'payout_clearing', amount: payout.amount },
  ]
  if (payout.fee > 0) legs.push({ gateway: 'fee_revenue', amount: payout.fee })
  return {
    kind: `${payout.kind}_success`,
    reference: { type: payout.kind, id: payout.platformOrderId },
    legs,
  }
}

/**
 * A debit line no transfer accounts for, explained by an operator (a bank
 * charge): the money the import moved out of the bank is the gateway's cost.
 */
export function bankChargePosting(line: { id: number; amount: number }): LedgerPosting {
  return {
    kind: 'bank_charge',
    reference: { type: 'statement_line', id: String(line.id) },
    description: `statement line #${line.id}: a debit explained by an operator`,
    legs: [
      { gateway: 'payout_clearing', amount: line.amount },
      { gateway: 'bank_charges', amount: -line.amount },
    ],
  }
}

/** An operator's opening balance or correction: from the adjustments account, always audited. */
export function adjustmentPosting(adjustment: {
  merchantId: number
  reference: { type: string; id: string }
  amount: number
  description: string
}): LedgerPosting {
  return {
    kind: 'opening_balance',
    reference: adjustment.reference,
    description: adjustment.description,
    legs: [
      { gateway: 'adjustments', amount: -adjustment.amount },
      { merchantId: adjustment.merchantId, account: 'available', amount: adjustment.amount },
    ],
  }
}

/** The ledger kinds that credit a merchant from a deposit: each must claim a receipt. */
export const DEPOSIT_CREDIT_KINDS = [
  'payment_paid',
  'payment_late',
  'statement_line_credit',
] as const
