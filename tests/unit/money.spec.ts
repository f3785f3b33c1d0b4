import { test } from '@japa/runner'
import { amountJson, assertSatang, formatAmount, parseAmount } from '#core/money'

test.group('money', () => {
  test('parses numbers and strings with up to two decimals into satang', ({ assert }) => {
    assert.equal(parseAmount(20), 2000)
    assert.equal(parseAmount('20'), 2000)
    assert.equal(parseAmount('20.5'), 2050)
    assert.equal(parseAmount('20.05'), 2005)
    assert.equal(parseAmount(20.1), 2010)
    assert.equal(parseAmount(0.29), 29) // 0.29 * 100 is 28.999999999999996 in floats
    assert.equal(parseAmount('1234567.89'), 123456789)
    assert.equal(parseAmount(' 100.00 '), 10000)
  })

  test('refuses anything that is not a plain non-negative amount', ({ assert }) => {
    for (const input of [
      '20.001',
      20.001,
      '-5',
      -5,
      '1e3',
      1e21,
      'abc',
      '',
      '.5',
      '5.',
      '0x10',
      null,
      undefined,
      {},
      [],
      true,
      Number.NaN,
      Infinity,
      '020',
    ]) {
      assert.isNull(parseAmount(input), `input ${String(input)}`)
    }
  })

  test('formats satang with exactly two decimals', ({ assert }) => {
    assert.equal(formatAmount(0), '0.00')
    assert.equal(formatAmount(5), '0.05')
    assert.equal(formatAmount(123450), '1234.50')
    assert.equal(formatAmount(-2050), '-20.50')
  })

  test('formatThb groups thousands as Thai readers write them, exactly, with the sign kept', async ({
    assert,
  }) => {
    const { formatThb } = await import('#core/money')
    assert.equal(formatThb(0), '0.00')
    assert.equal(formatThb(99999), '999.99')
    assert.equal(formatThb(100000), '1,000.00')
    assert.equal(formatThb(1000000), '10,000.00')
    assert.equal(formatThb(-1000050), '-10,000.50')
    assert.equal(formatThb(9_007_199_254_740_991), '90,071,992,547,409.91')
  })

  test('amountJson keeps the two decimals through JSON.stringify', ({ assert }) => {
    assert.equal(
      JSON.stringify({ a: amountJson(10000), b: amountJson(1), c: amountJson(-150) }),
      '{"a":100.00,"b":0.01,"c":-1.50}'
    )
  })

  test('assertSatang refuses values past the safe integer range', ({ assert }) => {
    assert.equal(assertSatang('12345'), 12345)
    assert.throws(() => assertSatang('9007199254740993'))
    assert.throws(() => assertSatang('1.5'))
  })
})

test.group('rate fees', () => {
  test('basis points of an amount, rounded half up to the satang, exact for large amounts', async ({
    assert,
  }) => {
    const { rateFee } = await import('#core/money')
    assert.equal(rateFee(1000_00, 150), 15_00)
    assert.equal(rateFee(33, 150), 0) // 0.495 satang
    assert.equal(rateFee(34, 150), 1) // 0.51 satang
    assert.equal(rateFee(100, 50), 1) // exactly half a satang rounds up
    assert.equal(rateFee(9_000_000_000_000_00, 10000), 9_000_000_000_000_00)
  })
})
