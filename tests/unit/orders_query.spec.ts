import { test } from '@japa/runner'
import { hasErrors, orderQueryString, readOrderSearch } from '#payments/order_filters'

/** The orders list's filters as the back-office reads them from its address. */
test.group('orders search: reading the filters', () => {
  test('THB amounts become satang; Bangkok days become UTC instants', ({ assert }) => {
    const search = readOrderSearch({
      amount_min: '1,000.5',
      amount_max: '2000',
      from: '2026-11-20',
      to: '2026-11-21',
    })
    assert.isFalse(hasErrors(search))
    assert.equal(search.criteria.amountMin, 100050)
    assert.equal(search.criteria.amountMax, 200000)
    // Midnight in Bangkok (GMT+7) is 17:00 UTC the day before; `to` is inclusive.
    assert.equal(search.criteria.createdFrom!.toISOString(), '2026-11-19T17:00:00.000Z')
    assert.equal(search.criteria.createdBefore!.toISOString(), '2026-11-21T17:00:00.000Z')
  })

  test('every filter it cannot understand is an error beside its field', ({ assert }) => {
    const search = readOrderSearch({
      platform_order_id: 'ABC%',
      merchant: 'M1 OR 1=1',
      amount_min: '10.001',
      amount_max: '5',
      from: '2026-02-30',
      status: 'paid',
      channel: 'cash',
      bank: 'kbank',
      account_no: '---',
      slip: 'not a hash!',
    })
    assert.sameMembers(Object.keys(search.errors), [
      'platform_order_id',
      'merchant',
      'amount_min',
      'from',
      'status',
      'channel',
      'bank',
      'account_no',
      'slip',
    ])
    assert.isTrue(hasErrors(search))
    assert.isTrue(
      hasErrors(readOrderSearch({ amount_min: '10', amount_max: '5' })),
      'a range the wrong way round'
    )
  })

  test('platform_order_id: 24 characters exact, fewer a prefix; its marker picks the kind', ({
    assert,
  }) => {
    const exact = readOrderSearch({
      kind: 'payments',
      platform_order_id: 'ABCW20261120ABCDEFGHIJKL',
    })
    assert.equal(exact.kind, 'withdrawals')
    assert.deepEqual(exact.criteria.platformOrderId, { exact: 'ABCW20261120ABCDEFGHIJKL' })
    const prefix = readOrderSearch({ platform_order_id: 'ABCM2026' })
    assert.equal(prefix.kind, 'settlements')
    assert.deepEqual(prefix.criteria.platformOrderId, { like: 'ABCM2026%' })
  })

  test('statuses: the spec public ones cover their internal ones; payment-only filters are dropped for payouts', ({
    assert,
  }) => {
    const failed = readOrderSearch({ kind: 'withdrawals', status: 'public:failed' })
    assert.sameMembers(failed.criteria.statuses!, ['failed', 'error', 'cancelled', 'rejected'])
    const open = readOrderSearch({ kind: 'settlements', status: 'public:open' })
    assert.sameMembers(open.criteria.statuses!, ['new', 'queue', 'pending'])
    assert.deepEqual(readOrderSearch({ kind: 'withdrawals', status: 'queue' }).criteria.statuses, [
      'queue',
    ])
    assert.isTrue(
      readOrderSearch({ kind: 'payments', status: 'awaiting_review' }).criteria.awaitingReview
    )
    assert.isTrue(hasErrors(readOrderSearch({ kind: 'payments', status: 'public:open' })))

    const payout = readOrderSearch({ kind: 'withdrawals', slip: 'TR1', deposit_account: '3' })
    assert.deepEqual(payout.filters, {})
    assert.isNull(payout.criteria.slip)
  })

  test('customer account numbers are compared as stored (digits only); slip hashes in lowercase', ({
    assert,
  }) => {
    const search = readOrderSearch({ account_no: '123-4-56789-0', slip: 'AB'.repeat(32) })
    assert.equal(search.criteria.accountNo, '1234567890')
    assert.equal(search.criteria.slip, 'ab'.repeat(32))
    assert.equal(
      readOrderSearch({ slip: '2026112282X07H3TTN3Z' }).criteria.slip,
      '2026112282X07H3TTN3Z'
    )
  })

  test('the canonical query string: known filters, kind and a non-default sort, never a page', ({
    assert,
  }) => {
    const search = readOrderSearch({
      kind: 'payments',
      merchant: 'M1',
      sort: 'amount',
      dir: 'asc',
      page: '3',
      nonsense: 'x',
      status: '',
    })
    assert.equal(orderQueryString(search), 'kind=payments&merchant=M1&sort=amount&dir=asc')
    assert.equal(readOrderSearch({ sort: 'status; DROP TABLE' }).sort, 'created')
  })
})
