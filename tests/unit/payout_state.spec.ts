import { test } from '@japa/runner'
import { OPEN_PAYOUT_STATUSES, PUBLIC_PAYOUT_STATUS } from '#payouts/payout_state'
import { WAITING_MEANING, WAITING_STATUSES } from '#admin/queries/payouts'

test.group('payout state machine', () => {
  test('the open statuses are those the API shows as open, in the order they come', ({
    assert,
  }) => {
    assert.deepEqual(OPEN_PAYOUT_STATUSES, ['new', 'queue', 'pending'])
    for (const [status, shown] of Object.entries(PUBLIC_PAYOUT_STATUS)) {
      assert.equal(OPEN_PAYOUT_STATUSES.includes(status as any), shown === 'open', status)
    }
  })

  test("the back-office's waiting statuses are the open ones, each with its meaning", ({
    assert,
  }) => {
    assert.deepEqual(WAITING_STATUSES, OPEN_PAYOUT_STATUSES)
    for (const status of WAITING_STATUSES) assert.isString(WAITING_MEANING[status])
  })
})
