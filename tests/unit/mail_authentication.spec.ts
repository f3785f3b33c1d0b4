import { test } from '@japa/runner'
import {
  parseAuthenticationResults,
  vouchForSender,
} from '#reconciliation/fetch/mail_authentication'

const FROM = 'k-electronic-document@kasikornbank.example'
const TRUSTED = ['mx.gateway.test']

test.group('statement mail: the receiving server vouches for the sender (RFC 8601)', () => {
  test('reads the authserv-id and each result, without comments, unfolded', ({ assert }) => {
    const parsed = parseAuthenticationResults(
      ' MX.Gateway.Test 1 (our server); spf=pass (sender ok) smtp.mailfrom=kasikornbank.example;\r\n\tdkim=pass (2048-bit key) header.d=KasikornBank.example header.s="k1"; dmarc=none'
    )
    assert.equal(parsed.authservId, 'mx.gateway.test')
    assert.deepEqual(
      parsed.results.map((result) => [result.method, result.result]),
      [
        ['spf', 'pass'],
        ['dkim', 'pass'],
        ['dmarc', 'none'],
      ]
    )
    assert.equal(parsed.results[1].properties.get('header.d'), 'kasikornbank.example')
    assert.equal(parsed.results[1].properties.get('header.s'), 'k1')
  })

  test('dkim=pass for the From domain, a parent of it, or by header.i; dmarc=pass for exactly it', ({
    assert,
  }) => {
    const vouched = (value: string, from = FROM) => vouchForSender([value], from, TRUSTED).vouchedBy
    assert.equal(
      vouched('mx.gateway.test; dkim=pass header.d=kasikornbank.example'),
      'dkim=pass header.d=kasikornbank.example'
    )
    assert.equal(
      vouched(
        'mx.gateway.test; dkim=pass header.d=kasikornbank.example',
        'a@mail.kasikornbank.example'
      ),
      'dkim=pass header.d=kasikornbank.example'
    )
    assert.equal(
      vouched('mx.gateway.test; dkim=pass header.i=@kasikornbank.example'),
      'dkim=pass header.d=kasikornbank.example'
    )
    assert.equal(
      vouched('mx.gateway.test; dkim=none; dmarc=pass header.from=kasikornbank.example'),
      'dmarc=pass header.from=kasikornbank.example'
    )
  })

  test('nothing else vouches', ({ assert }) => {
    const why = (values: string[], trusted = TRUSTED, from = FROM) => {
      const vouch = vouchForSender(values, from, trusted)
      assert.isNull(vouch.vouchedBy, values.join(' | '))
      return vouch.why
    }
    // No server trusted: nothing is read.
    assert.include(
      why(['mx.gateway.test; dkim=pass header.d=kasikornbank.example'], []),
      'STATEMENT_MAIL_AUTHSERV_ID'
    )
    // No header, or only another server's.
    assert.include(why([]), 'no Authentication-Results from mx.gateway.test')
    why(['mx.attacker.example; dkim=pass header.d=kasikornbank.example'])
    // Failed, neutral, or signed by another domain (a look-alike included).
    assert.include(why(['mx.gateway.test; dkim=fail header.d=kasikornbank.example']), 'dkim=fail')
    why(['mx.gateway.test; dkim=pass header.d=attacker.example'])
    why(
      ['mx.gateway.test; dkim=pass header.d=kasikornbank.example'],
      TRUSTED,
      'x@kasikornbank.example.attacker.example'
    )
    why(['mx.gateway.test; dkim=pass header.d=bank.example'], TRUSTED, 'x@kasikornbank.example')
    why(['mx.gateway.test; dmarc=pass header.from=example'])
    // The topmost header of our server decides: a pass written below it does not.
    why([
      'mx.gateway.test; dkim=fail header.d=kasikornbank.example',
      'mx.gateway.test; dkim=pass header.d=kasikornbank.example',
    ])
    // A result name only inside a comment is no result.
    why(['mx.gateway.test; none (dkim=pass header.d=kasikornbank.example)'])
  })
})
