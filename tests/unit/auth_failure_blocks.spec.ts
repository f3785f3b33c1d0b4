import { test } from '@japa/runner'
import { durationLabel, parseBlockSubject } from '#merchant_api/auth_failure_blocks'
import { parseAuthFailureKey } from '#merchant_api/rate_limits'

test.group('failed-authentication blocks: keys and subjects', () => {
  test('a counter key names its kind, limit, window and subject (IPv6 colons included)', ({
    assert,
  }) => {
    assert.deepEqual(parseAuthFailureKey('gw:rl:auth-failures:ip:30:60:203.0.113.7'), {
      kind: 'ip',
      limit: 30,
      windowSeconds: 60,
      subject: '203.0.113.7',
    })
    assert.deepEqual(parseAuthFailureKey('gw:rl:auth-failures:ip:30:60:2001:db8::1'), {
      kind: 'ip',
      limit: 30,
      windowSeconds: 60,
      subject: '2001:db8::1',
    })
    assert.deepEqual(parseAuthFailureKey('gw:rl:auth-failures:merchant:5:60:M123456789'), {
      kind: 'merchant',
      limit: 5,
      windowSeconds: 60,
      subject: 'M123456789',
    })
    assert.isNull(parseAuthFailureKey('gw:rl:ip:2000:10:203.0.113.7'))
    assert.isNull(parseAuthFailureKey('gw:rl:auth-failures:other:30:60:x'))
  })

  test('what an operator types becomes the subject the counters use', ({ assert }) => {
    assert.deepEqual(parseBlockSubject(' 203.0.113.7 '), { kind: 'ip', subject: '203.0.113.7' })
    assert.deepEqual(parseBlockSubject('::ffff:203.0.113.7'), {
      kind: 'ip',
      subject: '203.0.113.7',
    })
    assert.deepEqual(parseBlockSubject('2001:DB8:0:0:0:0:0:1'), {
      kind: 'ip',
      subject: '2001:db8::1',
    })
    assert.deepEqual(parseBlockSubject('M123456789'), { kind: 'merchant', subject: 'M123456789' })
    assert.isNull(parseBlockSubject('203.0.113.0/24'))
    assert.isNull(parseBlockSubject('not an address!'))
    assert.isNull(parseBlockSubject(''))
  })

  test('time left reads in minutes and seconds', ({ assert }) => {
    assert.equal(durationLabel(287), '4 min 47 s')
    assert.equal(durationLabel(12), '12 s')
    assert.equal(durationLabel(0), '0 s')
  })
})
