import { test } from '@japa/runner'
import { ipMatches, normalizeCidr } from '#merchants/ip_whitelist'

test.group('ip whitelist matching', () => {
  test('normalises single addresses and CIDR blocks', ({ assert }) => {
    assert.equal(normalizeCidr('203.0.113.7'), '203.0.113.7/32')
    assert.equal(normalizeCidr('::ffff:203.0.113.7'), '203.0.113.7/32')
    assert.equal(normalizeCidr('2001:DB8::1'), '2001:db8::1/128')
    assert.equal(normalizeCidr('10.0.0.0/8'), '10.0.0.0/8')
    for (const bad of ['', 'example.com', '10.0.0.0/33', '1.2.3.4/x', '1.2.3.4/8/9', '300.1.1.1']) {
      assert.isNull(normalizeCidr(bad), bad)
    }
  })

  test('matches addresses, blocks and IPv4-mapped peers', ({ assert }) => {
    const list = ['203.0.113.7/32', '198.51.100.0/24', '2001:db8::/32']
    assert.isTrue(ipMatches(list, '203.0.113.7'))
    assert.isTrue(ipMatches(list, '::ffff:203.0.113.7'))
    assert.isTrue(ipMatches(list, '198.51.100.200'))
    assert.isTrue(ipMatches(list, '2001:db8:1::5'))
    assert.isFalse(ipMatches(list, '203.0.113.8'))
    assert.isFalse(ipMatches(list, '198.51.101.1'))
    assert.isFalse(ipMatches(list, 'not-an-ip'))
  })
})
