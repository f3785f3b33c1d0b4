import { test } from '@japa/runner'
import {
  PAYMENT_STATUSES,
  PAYMENT_TRANSITIONS,
  assertPaymentTransition,
  canTransition,
  IllegalTransitionError,
  operatorActionsFor,
  type PaymentStatus,
} from '#payments/payment_state'

const at = (status: PaymentStatus, statusBeforeFreeze: PaymentStatus | null = null) => ({
  status,
  statusBeforeFreeze,
})

test.group('payment state machine', () => {
  test('settled_paid and error are terminal', ({ assert }) => {
    for (const to of PAYMENT_STATUSES) {
      assert.isFalse(canTransition(at('settled_paid'), to))
      assert.isFalse(canTransition(at('error'), to))
    }
  })

  test('the spec transitions are allowed', ({ assert }) => {
    assert.isTrue(canTransition(at('open'), 'unsettled_paid'))
    assert.isTrue(canTransition(at('unsettled_paid'), 'settled_paid'))
    assert.isTrue(canTransition(at('open'), 'error'))
    assert.isTrue(canTransition(at('open'), 'freeze'))
    assert.isTrue(canTransition(at('unsettled_paid'), 'freeze'))
  })

  test('a frozen order leaves freeze according to the state it was frozen in', ({ assert }) => {
    // Frozen while open: paid, failed or reopened.
    for (const to of ['open', 'unsettled_paid', 'error'] as const) {
      assert.isTrue(canTransition(at('freeze', 'open'), to), to)
    }
    // Frozen after it was paid: only back to unsettled_paid (its money is already credited).
    assert.isTrue(canTransition(at('freeze', 'unsettled_paid'), 'unsettled_paid'))
    assert.isFalse(canTransition(at('freeze', 'unsettled_paid'), 'error'))
    assert.isFalse(canTransition(at('freeze', 'unsettled_paid'), 'open'))
    assert.isFalse(canTransition(at('freeze', 'open'), 'freeze'))
  })

  test('anything else is refused with an explicit error', ({ assert }) => {
    assert.throws(() => assertPaymentTransition(at('open'), 'settled_paid'), IllegalTransitionError)
    assert.throws(
      () => assertPaymentTransition(at('unsettled_paid'), 'open'),
      IllegalTransitionError
    )
    assert.throws(
      () => assertPaymentTransition(at('error'), 'open'),
      /cannot go from error to open/
    )
    // Every target named in the table is a known status.
    for (const targets of Object.values(PAYMENT_TRANSITIONS)) {
      for (const target of targets) assert.include(PAYMENT_STATUSES, target)
    }
  })
})

test.group('operator actions on the order page', () => {
  /** Every status, and for freeze every state it may have been frozen in. */
  const every = PAYMENT_STATUSES.flatMap((status) =>
    status === 'freeze'
      ? PAYMENT_STATUSES.filter((from) => from !== 'freeze').map((from) => at('freeze', from))
      : [at(status)]
  )

  test('each button is offered exactly when the state table has its transition', ({ assert }) => {
    for (const order of every) {
      const name = `${order.status}${order.statusBeforeFreeze ? ` (from ${order.statusBeforeFreeze})` : ''}`
      const actions = operatorActionsFor(order)
      const table = PAYMENT_TRANSITIONS[order.status]
      // Freeze: the table's transition to freeze (a frozen order is not frozen twice).
      assert.equal(
        actions.freeze,
        table.includes('freeze') && canTransition(order, 'freeze'),
        `freeze ${name}`
      )
      // Unfreeze: only a frozen order, back to the state it came from, as the table allows.
      assert.equal(
        actions.unfreeze,
        order.status === 'freeze' &&
          order.statusBeforeFreeze !== null &&
          table.includes(order.statusBeforeFreeze) &&
          canTransition(order, order.statusBeforeFreeze),
        `unfreeze ${name}`
      )
      // Mark paid: the transition to unsettled_paid of money not credited yet.
      const credited = (order.statusBeforeFreeze ?? order.status) === 'unsettled_paid'
      assert.equal(
        actions.markPaid,
        table.includes('unsettled_paid') && canTransition(order, 'unsettled_paid') && !credited,
        `mark paid ${name}`
      )
    }
  })

  test('the order page offers what the specification says', ({ assert }) => {
    assert.deepEqual(operatorActionsFor(at('open')), {
      freeze: true,
      unfreeze: false,
      markPaid: true,
    })
    assert.deepEqual(operatorActionsFor(at('unsettled_paid')), {
      freeze: true,
      unfreeze: false,
      markPaid: false,
    })
    for (const final of ['settled_paid', 'error'] as const) {
      assert.deepEqual(operatorActionsFor(at(final)), {
        freeze: false,
        unfreeze: false,
        markPaid: false,
      })
    }
    assert.deepEqual(operatorActionsFor(at('freeze', 'open')), {
      freeze: false,
      unfreeze: true,
      markPaid: true,
    })
    assert.deepEqual(operatorActionsFor(at('freeze', 'unsettled_paid')), {
      freeze: false,
      unfreeze: true,
      markPaid: false,
    })
  })
})
