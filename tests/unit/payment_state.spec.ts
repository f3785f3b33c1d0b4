import { test } from '@japa/runner'
import {
  PAYMENT_STATUSES,
  PAYMENT_TRANSITIONS,
  assertPaymentTransition,
  canTransition,
  IllegalTransitionError,
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
