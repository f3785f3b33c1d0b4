import { test } from '@japa/runner'
import { validate, version } from 'uuid'
import { newUuidV7 } from '#core/random'

test.group('Order uuids', () => {
  test('are UUIDv7s of now, in strictly rising order, across refills of their random bytes', ({
    assert,
  }) => {
    const before = Date.now()
    // 1,000 uuids draw on four refills of the 4 KiB of random bytes (256 uuids each).
    const uuids = Array.from({ length: 1000 }, () => newUuidV7())
    const after = Date.now()

    for (const uuid of uuids) {
      assert.isTrue(validate(uuid), uuid)
      assert.equal(version(uuid), 7)
    }
    // Many share a millisecond: the counter keeps them in order (RFC 9562, method 1).
    for (let i = 1; i < uuids.length; i++) assert.isTrue(uuids[i] > uuids[i - 1], uuids[i])
    assert.equal(new Set(uuids).size, uuids.length)
    const millis = (uuid: string) => Number.parseInt(uuid.replace('-', '').slice(0, 12), 16)
    assert.isAtLeast(millis(uuids[0]), before)
    // A counter that ran over moves to the next millisecond: at most a few ahead.
    assert.isAtMost(millis(uuids.at(-1)!), after + 5)
    // The random tails differ from one uuid to the next.
    assert.equal(new Set(uuids.map((uuid) => uuid.slice(-12))).size, uuids.length)
  })
})
