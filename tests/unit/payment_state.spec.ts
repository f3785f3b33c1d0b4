import { test } from '@japa/runner'
import {
  PAYMENT_STATUSES,
  PAYMENT_TRANSITIONS,
  assertPaymentTransition,
  canTransition,
  IllegalTransitionError,
} from '#deposits/payment_state'

test.group('payment state machine', () => {
  test('settled_paid and error are terminal', ({ assert }) => {
    for (const to of PAYMENT_STATUSES) {
      assert.isFalse(canTransition('settled_paid', to))
      assert.isFalse(canTransition('error', to))
    }
  })

  test('the spec transitions are allowed', ({ assert }) => {
    assert.isTrue(canTransition('open', 'unsettled_paid'))
    assert.isTrue(canTransition('unsettled_paid', 'settled_paid'))
    assert.isTrue(canTransition('open', 'error'))
    assert.isTrue(canTransition('open', 'freeze'))
    assert.isTrue(canTransition('freeze', 'open'))
  })

  test('anything else is refused with an explicit error', ({ assert }) => {
    assert.throws(() => assertPaymentTransition('open', 'settled_paid'), IllegalTransitionError)
    assert.throws(() => assertPaymentTransition('unsettled_paid', 'open'), IllegalTransitionError)
    assert.throws(() => assertPaymentTransition('error', 'open'), /cannot go from error to open/)
    // Every target named in the table is a known status.
    for (const targets of Object.values(PAYMENT_TRANSITIONS)) {
      for (const target of targets) assert.include(PAYMENT_STATUSES, target)
    }
  })
})
