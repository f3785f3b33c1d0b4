import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import PaymentOrder from '#payments/models/payment_order'
import PayoutOrder from '#payouts/models/payout_order'
import type { PaymentStatus } from '#payments/payment_state'
import type { PayoutStatus } from '#payouts/payout_state'
import type { OpenReceivable } from '#reconciliation/receipts'
import type { PayoutConfirmation } from '#payouts/payout_confirmations'
import { judgeLine, NO_ORDER_NOTE, type Candidates } from '#reconciliation/matching/rules'
import type { LineRow } from '#reconciliation/matching/line_row'

/**
 * The matching rules of docs/reconciliation.md ("Matching rules") as
 * `judgeLine` decides them, on orders built in memory: no database. Every
 * verdict is compared whole (result, note, the object it names), so that a
 * rule that changes fails its test.
 */

const ACCOUNT = 1
const OTHER_ACCOUNT = 2
/** 1,000.37 THB: an amount with its slot satang. */
const AMOUNT = 100_037
/** The line's time; orders and receivables are placed around it. */
const AT = DateTime.fromISO('2025-03-01T03:00:00.000Z', { zone: 'utc' })

const WITHDRAW_ID = 'ABCW20250301WWWWWWWWWWWW'
const SETTLEMENT_ID = 'ABCM20250301MMMMMMMMMMMM'

/** As `candidateKey` in matching/rules.ts: the candidates' maps are keyed `account|value`. */
const key = (accountId: number, value: string | number) => `${accountId}|${value}`

function line(fields: Partial<LineRow> = {}): LineRow {
  return {
    id: 500,
    deposit_account_id: ACCOUNT,
    line_at: AT.toJSDate(),
    direction: 'credit',
    amount: AMOUNT,
    reference: null,
    trans_ref: null,
    status: 'new',
    ...fields,
  }
}

/** An open payment order on ACCOUNT holding AMOUNT, its slot covering AT. */
function paymentOrder(
  id: number,
  fields: Partial<{
    depositAccountId: number
    paymentReference: string | null
    transferAmount: number
    slotAmount: number | null
    status: PaymentStatus
    orderAt: DateTime
    expireAt: DateTime
  }> = {}
) {
  const order = new PaymentOrder()
  order.merge({
    id,
    platformOrderId: `ABCP20250301ORDER${String(id).padStart(7, '0')}`,
    depositAccountId: ACCOUNT,
    paymentReference: `REF${id}`,
    transferAmount: AMOUNT,
    slotAmount: AMOUNT,
    status: 'open',
    statusBeforeFreeze: null,
    orderAt: AT.minus({ minutes: 5 }),
    expireAt: AT.plus({ minutes: 10 }),
    ...fields,
  })
  return order
}

/** A bulk-file withdrawal waiting for its debit line. */
function payoutOrder(
  id: number,
  fields: Partial<{
    platformOrderId: string
    amount: number
    status: PayoutStatus
    connector: string
  }> = {}
) {
  const payout = new PayoutOrder()
  payout.merge({
    id,
    platformOrderId: WITHDRAW_ID,
    kind: 'withdraw',
    amount: 250_000,
    fee: 1_000,
    status: 'pending',
    connector: 'bulk_file',
    ...fields,
  })
  return payout
}

/** A payment credited before its line: open, on ACCOUNT, expecting AMOUNT around AT. */
function receivable(id: number, fields: Partial<OpenReceivable> = {}): OpenReceivable {
  return {
    id,
    depositAccountId: ACCOUNT,
    statementLineId: null,
    transRef: null,
    paymentOrderId: id + 1000,
    merchantId: 3,
    path: 'slip_approval',
    amountPolicy: 'exact',
    expectedAmount: AMOUNT,
    receivedAmount: null,
    credited: 98_537,
    fee: 1_500,
    expectedFrom: AT.minus({ minutes: 10 }).toJSDate(),
    expectedTo: AT.plus({ minutes: 10 }).toJSDate(),
    slipId: null,
    approvalRequestId: null,
    ledgerTransactionId: null,
    actor: 'operator:1',
    claimedAt: AT.minus({ minutes: 1 }).toJSDate(),
    clearedAt: null,
    reversedAt: null,
    platformOrderId: `ABCP20250301CREDIT${String(id).padStart(6, '0')}`,
    paymentReference: null,
    orderStatus: 'unsettled_paid',
    ...fields,
  }
}

/** A transfer out already made whose debit line has not come yet. */
function confirmation(id: number, fields: Partial<PayoutConfirmation> = {}): PayoutConfirmation {
  return {
    id,
    path: 'connector',
    payoutOrderId: null,
    returnedLineId: null,
    statementLineId: null,
    depositAccountId: ACCOUNT,
    amount: AMOUNT,
    actor: 'system',
    reason: null,
    createdAt: AT.minus({ hours: 1 }).toJSDate(),
    confirmedAt: null,
    ...fields,
  }
}

/** A return to a payer made in the bank's portal, of the credit on line `returnedLineId`. */
const payerReturn = (
  id: number,
  returnedLineId: number,
  fields: Partial<PayoutConfirmation> = {}
) => confirmation(id, { path: 'return', returnedLineId, ...fields })

/** Candidates as findCandidates files them: orders under both their references, slots by account. */
function candidates(
  parts: {
    named?: PaymentOrder[]
    slots?: PaymentOrder[]
    expired?: Array<[lineId: number, platformOrderId: string]>
    payouts?: PayoutOrder[]
    receivables?: OpenReceivable[]
    confirmations?: PayoutConfirmation[]
  } = {}
): Candidates {
  const byReference = new Map<string, PaymentOrder>()
  for (const order of parts.named ?? []) {
    byReference.set(key(order.depositAccountId, order.paymentReference!), order)
    byReference.set(key(order.depositAccountId, order.platformOrderId), order)
  }
  return {
    byReference,
    bySlot: new Map(
      (parts.slots ?? []).map((order) => [key(order.depositAccountId, order.slotAmount!), order])
    ),
    expired: new Map(parts.expired ?? []),
    payouts: new Map((parts.payouts ?? []).map((payout) => [payout.platformOrderId, payout])),
    receivables: parts.receivables ?? [],
    confirmations: parts.confirmations ?? [],
  }
}

/** A line at this many milliseconds from a point in time. */
const lineAt = (time: DateTime, milliseconds: number) =>
  line({ line_at: time.plus({ milliseconds }).toJSDate() })

test.group('judgeLine: payout references', () => {
  test('a debit naming a sent payout confirms its transfer', ({ assert }) => {
    const payout = payoutOrder(20, { status: 'success' })
    const sent = confirmation(31, { payoutOrderId: 20, amount: 250_000 })
    const verdict = judgeLine(
      line({ direction: 'debit', reference: WITHDRAW_ID, amount: 250_000 }),
      candidates({
        payouts: [payout],
        // Another payout's transfer, and this one's already confirmed by a line: not it.
        confirmations: [
          confirmation(29, { payoutOrderId: 21, amount: 250_000 }),
          confirmation(30, { payoutOrderId: 20, amount: 250_000, statementLineId: 400 }),
          sent,
        ],
      })
    )
    assert.deepEqual(verdict, { result: 'matched', confirmation: sent, payout })
  })

  test('a debit naming a sent payout for another amount is unmatched with what was sent', ({
    assert,
  }) => {
    const verdict = judgeLine(
      line({ direction: 'debit', reference: WITHDRAW_ID, amount: 250_001 }),
      candidates({
        payouts: [payoutOrder(20, { status: 'success' })],
        confirmations: [confirmation(31, { payoutOrderId: 20, amount: 250_000 })],
      })
    )
    assert.deepEqual(verdict, {
      result: 'unmatched',
      note: `${WITHDRAW_ID}: sent 250000 satang`,
    })
  })

  test('a debit naming a pending bulk-file payout for its amount confirms it', ({ assert }) => {
    const withdrawal = payoutOrder(20)
    const settlement = payoutOrder(22, { platformOrderId: SETTLEMENT_ID, amount: 90_000 })
    const found = candidates({ payouts: [withdrawal, settlement] })
    assert.deepEqual(
      judgeLine(line({ direction: 'debit', reference: WITHDRAW_ID, amount: 250_000 }), found),
      { result: 'matched', payout: withdrawal }
    )
    assert.deepEqual(
      judgeLine(line({ direction: 'debit', reference: SETTLEMENT_ID, amount: 90_000 }), found),
      { result: 'matched', payout: settlement }
    )
  })

  test('a debit naming a pending bulk-file payout for another amount is unmatched', ({
    assert,
  }) => {
    const found = candidates({ payouts: [payoutOrder(20)] })
    for (const amount of [1, 249_999, 250_001]) {
      assert.deepEqual(
        judgeLine(line({ direction: 'debit', reference: WITHDRAW_ID, amount }), found),
        { result: 'unmatched', note: `${WITHDRAW_ID}: the bank file sends 250000 satang` }
      )
    }
  })

  test('a credit naming a pending bulk-file payout for its amount is that transfer coming back', ({
    assert,
  }) => {
    const payout = payoutOrder(20)
    const verdict = judgeLine(
      line({ direction: 'credit', reference: WITHDRAW_ID, amount: 250_000 }),
      candidates({ payouts: [payout] })
    )
    assert.deepEqual(verdict, { result: 'matched', payout })
  })

  test('a small credit naming a pending bulk-file payout is no return of it', ({ assert }) => {
    // A 1.00 credit must not fail a 2,500.00 payout and refund it whole.
    const found = candidates({ payouts: [payoutOrder(20)] })
    for (const amount of [100, 249_999, 260_000]) {
      assert.deepEqual(
        judgeLine(line({ direction: 'credit', reference: WITHDRAW_ID, amount }), found),
        { result: 'unmatched', note: `${WITHDRAW_ID}: a return of 250000 satang is expected` }
      )
    }
  })

  test('a line naming no pending bulk-file payout is unmatched', ({ assert }) => {
    const note = { result: 'unmatched', note: `${WITHDRAW_ID}: no pending bulk-file payout` }
    const debit = line({ direction: 'debit', reference: WITHDRAW_ID, amount: 250_000 })
    const credit = line({ direction: 'credit', reference: WITHDRAW_ID, amount: 250_000 })
    const sentAndOpen = candidates({
      payouts: [payoutOrder(20, { status: 'success' })],
      confirmations: [confirmation(31, { payoutOrderId: 20, amount: 250_000 })],
    })
    const cases: Array<[string, LineRow, Candidates]> = [
      ['unknown payout', debit, candidates()],
      [
        'another connector',
        debit,
        candidates({ payouts: [payoutOrder(20, { connector: 'kbank' })] }),
      ],
      // Not exported yet: its line cannot be.
      ['still in queue', debit, candidates({ payouts: [payoutOrder(20, { status: 'queue' })] })],
      [
        'sent, its transfer already confirmed',
        debit,
        candidates({
          payouts: [payoutOrder(20, { status: 'success' })],
          confirmations: [
            confirmation(31, { payoutOrderId: 20, amount: 250_000, statementLineId: 400 }),
          ],
        }),
      ],
      // Only a debit confirms a sent transfer.
      ['a credit naming a sent payout', credit, sentAndOpen],
    ]
    for (const [name, row, found] of cases) {
      assert.deepEqual(judgeLine(row, found), note, name)
    }
  })
})

test.group('judgeLine: other debits', () => {
  test('a debit confirms the one return to a payer waiting for its amount on its account', ({
    assert,
  }) => {
    const waiting = payerReturn(40, 80)
    const verdict = judgeLine(
      line({ direction: 'debit' }),
      candidates({
        confirmations: [
          payerReturn(41, 81, { depositAccountId: OTHER_ACCOUNT }),
          payerReturn(42, 82, { statementLineId: 401 }),
          payerReturn(43, 83, { amount: AMOUNT + 1 }),
          // A payout's transfer is confirmed by its reference, not by its amount.
          confirmation(44, { payoutOrderId: 20 }),
          waiting,
        ],
      })
    )
    assert.deepEqual(verdict, { result: 'matched', confirmation: waiting })
  })

  test('a debit two waiting returns could be is unmatched, naming both lines', ({ assert }) => {
    const verdict = judgeLine(
      line({ direction: 'debit' }),
      candidates({ confirmations: [payerReturn(40, 80), payerReturn(41, 81)] })
    )
    assert.deepEqual(verdict, {
      result: 'unmatched',
      note: 'the returns of lines #80 and #81 both send this amount',
    })
  })

  test('any other debit is unmatched, even one naming an open order', ({ assert }) => {
    const order = paymentOrder(7)
    const note = { result: 'unmatched', note: NO_ORDER_NOTE.debit }
    assert.deepEqual(judgeLine(line({ direction: 'debit' }), candidates()), note)
    // Debits never pay payment orders, by reference or by slot.
    assert.deepEqual(
      judgeLine(
        line({ direction: 'debit', reference: 'REF7' }),
        candidates({ named: [order], slots: [order] })
      ),
      note
    )
    assert.equal(NO_ORDER_NOTE.debit, 'debit without a payout reference')
  })
})

test.group('judgeLine: payments credited before their line', () => {
  test("a credit carrying a receivable's transaction reference clears it", ({ assert }) => {
    const owed = receivable(60, { transRef: 'TX-60' })
    const verdict = judgeLine(
      line({ trans_ref: 'TX-60' }),
      candidates({
        // The slot's open order waits for this amount too: the named receivable comes first.
        slots: [paymentOrder(7)],
        receivables: [
          receivable(61, { transRef: 'TX-60', statementLineId: 402 }),
          receivable(62, { transRef: 'TX-60', depositAccountId: OTHER_ACCOUNT }),
          owed,
        ],
      })
    )
    assert.deepEqual(verdict, { result: 'matched', receivable: owed })
  })

  test("a credit naming a receivable's order by its reference clears it", ({ assert }) => {
    const order = paymentOrder(8, { status: 'unsettled_paid', slotAmount: null })
    const owed = receivable(60, { paymentOrderId: 8, platformOrderId: order.platformOrderId })
    const found = candidates({
      named: [order],
      receivables: [receivable(61, { paymentOrderId: 8, depositAccountId: OTHER_ACCOUNT }), owed],
    })
    for (const reference of ['REF8', order.platformOrderId]) {
      assert.deepEqual(
        judgeLine(line({ reference }), found),
        { result: 'matched', receivable: owed },
        reference
      )
    }
  })

  test('a credit naming a receivable for another amount is unmatched with the amount expected', ({
    assert,
  }) => {
    const order = paymentOrder(8, { status: 'unsettled_paid', slotAmount: null })
    const found = candidates({
      named: [order],
      receivables: [
        receivable(60, {
          paymentOrderId: 8,
          platformOrderId: order.platformOrderId,
          expectedAmount: 50_000,
        }),
        receivable(61, { transRef: 'TX-61', expectedAmount: 70_000 }),
      ],
    })
    assert.deepEqual(judgeLine(line({ reference: 'REF8' }), found), {
      result: 'unmatched',
      note: `${order.platformOrderId} was credited before its line, for 50000 satang`,
    })
    assert.deepEqual(judgeLine(line({ trans_ref: 'TX-61' }), found), {
      result: 'unmatched',
      note: `${receivable(61).platformOrderId} was credited before its line, for 70000 satang`,
    })
  })

  test('a cleared receivable or one on another account is not named by the line', ({ assert }) => {
    // Other amounts: had they been named, the verdict would be "credited before its line".
    const found = candidates({
      receivables: [
        receivable(60, { transRef: 'TX-60', statementLineId: 402, expectedAmount: 1 }),
        receivable(61, { transRef: 'TX-61', depositAccountId: OTHER_ACCOUNT, expectedAmount: 1 }),
      ],
    })
    const none = { result: 'unmatched', note: NO_ORDER_NOTE.credit }
    assert.deepEqual(judgeLine(line({ trans_ref: 'TX-60' }), found), none)
    assert.deepEqual(judgeLine(line({ trans_ref: 'TX-61' }), found), none)
  })

  test('a credit no order covers clears the one receivable expecting its amount at its time', ({
    assert,
  }) => {
    const expecting = receivable(60)
    const verdict = judgeLine(
      line({ trans_ref: 'TX-LINE' }),
      candidates({
        receivables: [
          receivable(61, { depositAccountId: OTHER_ACCOUNT }),
          receivable(62, { expectedAmount: AMOUNT + 1 }),
          receivable(63, { statementLineId: 402 }),
          // Its window ended just before the line, or starts just after it.
          receivable(64, { expectedTo: AT.minus({ milliseconds: 1 }).toJSDate() }),
          receivable(65, { expectedFrom: AT.plus({ milliseconds: 1 }).toJSDate() }),
          // No window: nothing says when its transfer was made.
          receivable(66, { expectedFrom: null }),
          receivable(67, { expectedTo: null }),
          // Another bank transaction: it waits for its own line.
          receivable(68, { transRef: 'TX-OTHER' }),
          expecting,
        ],
      })
    )
    assert.deepEqual(verdict, { result: 'matched', receivable: expecting })

    // A line without a transaction reference cannot tell: a slip's receivable expects it too.
    const slipNamed = receivable(69, { transRef: 'TX-OTHER' })
    assert.deepEqual(judgeLine(line(), candidates({ receivables: [slipNamed] })), {
      result: 'matched',
      receivable: slipNamed,
    })
    // The window's edges are inclusive.
    const exact = receivable(70, {
      expectedFrom: AT.toJSDate(),
      expectedTo: AT.toJSDate(),
    })
    assert.deepEqual(judgeLine(line(), candidates({ receivables: [exact] })), {
      result: 'matched',
      receivable: exact,
    })
  })

  test('a credit two receivables expect at that time is unmatched, naming both', ({ assert }) => {
    const first = receivable(60)
    const second = receivable(61)
    const verdict = judgeLine(line(), candidates({ receivables: [first, second] }))
    assert.deepEqual(verdict, {
      result: 'unmatched',
      note: `credited before their line, ${first.platformOrderId} and ${second.platformOrderId} both expect this amount`,
    })
  })

  test('a credit the slot holder and a receivable both expect is left to an operator', ({
    assert,
  }) => {
    const holder = paymentOrder(7)
    const owed = receivable(60)
    const verdict = judgeLine(line(), candidates({ slots: [holder], receivables: [owed] }))
    assert.deepEqual(verdict, {
      result: 'unmatched',
      note: `${holder.platformOrderId} and ${owed.platformOrderId} (credited before their line) both expect this amount`,
      order: holder,
    })
  })
})

test.group('judgeLine: credits to payment orders', () => {
  test('a credit naming an open order by its reference pays it', ({ assert }) => {
    const named = paymentOrder(7, { slotAmount: AMOUNT + 1 })
    // Another open order holds the line's amount: the reference wins.
    const holder = paymentOrder(9)
    const found = candidates({ named: [named], slots: [named, holder] })
    for (const reference of ['REF7', named.platformOrderId]) {
      assert.deepEqual(
        judgeLine(line({ reference }), found),
        { result: 'matched', order: named },
        reference
      )
    }
  })

  test('a credit naming an open order pays it even when a receivable expects its amount', ({
    assert,
  }) => {
    const named = paymentOrder(7)
    const verdict = judgeLine(
      line({ reference: 'REF7' }),
      candidates({ named: [named], slots: [named], receivables: [receivable(60)] })
    )
    assert.deepEqual(verdict, { result: 'matched', order: named })
  })

  test('a reference of an order on another account names nothing', ({ assert }) => {
    const elsewhere = paymentOrder(7, { depositAccountId: OTHER_ACCOUNT, slotAmount: null })
    const verdict = judgeLine(line({ reference: 'REF7' }), candidates({ named: [elsewhere] }))
    assert.deepEqual(verdict, { result: 'unmatched', note: NO_ORDER_NOTE.credit })
  })

  test('a credit pays the open order holding its amount from order time − 60 s to expiry + 60 s', ({
    assert,
  }) => {
    const holder = paymentOrder(7)
    const found = candidates({ slots: [holder] })
    const paid = { result: 'matched', order: holder }
    assert.deepEqual(judgeLine(lineAt(holder.orderAt, -60_000), found), paid, 'first instant')
    assert.deepEqual(judgeLine(lineAt(holder.expireAt, 60_000), found), paid, 'last instant')
    assert.deepEqual(judgeLine(line(), found), paid, 'inside')
  })

  test('a credit just outside the slot and its minute of slack pays no order', ({ assert }) => {
    const holder = paymentOrder(7)
    const found = candidates({ slots: [holder] })
    const none = { result: 'unmatched', note: NO_ORDER_NOTE.credit }
    assert.deepEqual(judgeLine(lineAt(holder.orderAt, -60_001), found), none, 'too early')
    assert.deepEqual(judgeLine(lineAt(holder.expireAt, 60_001), found), none, 'too late')
  })

  test('a slot held on another account does not pay the line', ({ assert }) => {
    const elsewhere = paymentOrder(7, { depositAccountId: OTHER_ACCOUNT })
    const none = { result: 'unmatched', note: NO_ORDER_NOTE.credit }
    assert.deepEqual(judgeLine(line(), candidates({ slots: [elsewhere] })), none)
    // Even filed under the line's account, the order's own account decides.
    const misfiled = candidates()
    misfiled.bySlot.set(key(ACCOUNT, AMOUNT), elsewhere)
    assert.deepEqual(judgeLine(line(), misfiled), none)
  })

  test('a slot released by a line judged before no longer pays', ({ assert }) => {
    // findCandidates keeps one model per order: paying it clears its slot_amount in the map too.
    const paidBefore = paymentOrder(7)
    const found = candidates({ slots: [paidBefore] })
    paidBefore.merge({ status: 'unsettled_paid', slotAmount: null })
    assert.deepEqual(judgeLine(line(), found), { result: 'unmatched', note: NO_ORDER_NOTE.credit })
  })

  test('a credit for an order that has expired is late, naming it', ({ assert }) => {
    const expired = paymentOrder(7, { status: 'error', slotAmount: null })
    const verdict = judgeLine(line({ reference: 'REF7' }), candidates({ named: [expired] }))
    assert.deepEqual(verdict, { result: 'late', note: expired.platformOrderId, order: expired })
  })

  test('a credit for an order no longer open is unmatched, naming its status', ({ assert }) => {
    const frozen = paymentOrder(7, { status: 'freeze' })
    const paid = paymentOrder(8, { status: 'unsettled_paid', slotAmount: null })
    // A frozen order keeps its slot: found by amount it decides the verdict too.
    const found = candidates({ named: [frozen, paid], slots: [frozen] })
    assert.deepEqual(judgeLine(line({ reference: 'REF7' }), found), {
      result: 'unmatched',
      note: `${frozen.platformOrderId} is freeze`,
      order: frozen,
    })
    assert.deepEqual(judgeLine(line(), found), {
      result: 'unmatched',
      note: `${frozen.platformOrderId} is freeze`,
      order: frozen,
    })
    assert.deepEqual(judgeLine(line({ reference: 'REF8' }), found), {
      result: 'unmatched',
      note: `${paid.platformOrderId} is unsettled_paid`,
      order: paid,
    })
  })

  test('a credit of another amount than the named order expects is unmatched', ({ assert }) => {
    const order = paymentOrder(7)
    const verdict = judgeLine(
      line({ reference: 'REF7', amount: AMOUNT - 37 }),
      candidates({ named: [order], slots: [order] })
    )
    assert.deepEqual(verdict, {
      result: 'unmatched',
      note: `${order.platformOrderId} expects 100037 satang`,
      order,
    })
  })

  test('a credit no open order covers is late for the expired order of its amount', ({
    assert,
  }) => {
    const found = candidates({ expired: [[500, 'ABCP20250301EXPIRED00001']] })
    assert.deepEqual(judgeLine(line(), found), {
      result: 'late',
      note: 'ABCP20250301EXPIRED00001',
    })
  })

  test('a credit nothing claims is unmatched as having no open order', ({ assert }) => {
    // An expired order another line pays late says nothing about this one.
    const found = candidates({ expired: [[501, 'ABCP20250301EXPIRED00001']] })
    assert.deepEqual(judgeLine(line(), found), { result: 'unmatched', note: NO_ORDER_NOTE.credit })
    assert.equal(NO_ORDER_NOTE.credit, 'no open order')
  })
})
