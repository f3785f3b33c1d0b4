import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import { Secret } from '@adonisjs/core/helpers'
import {
  verifySlip,
  type OrderTerms,
  type ReferenceUse,
  type SlipReading,
} from '#slips/verification'
import {
  SlipDelayed,
  SlipRefused,
  SlipSourceFailed,
  type SlipFacts,
  type SlipOrder,
  type SlipVerifier,
} from '#slips/verifiers/slip_verifier'
import {
  SLIP_VERIFIER_NAMES,
  askSlipVerifiers,
  buildSlipVerifiers,
} from '#slips/verifiers/registry'
import { SlipOkVerifier, readSlipOkAnswer } from '#slips/verifiers/slipok_verifier'
import { EasySlipVerifier, readEasySlipAnswer } from '#slips/verifiers/easyslip_verifier'
import {
  bahtToSatang,
  bangkokDateTime,
  isoDateTime,
  redact,
  slipPayload,
} from '#slips/verifiers/provider_http'
import { buildSlipMiniQr } from '#slips/mini_qr'
import { StatementVerifier } from '#slips/verifiers/statement_verifier'
import { SandboxSlipVerifier } from '#slips/verifiers/sandbox_verifier'

/*
 * The rules the slip providers added, without a network or a database: a
 * source's "repeated" flag and refusals in the verdict, the order in which
 * sources are asked and what a failing one leads to, the registry's
 * configuration errors, and the providers' amounts and times.
 */

const ORDER_AT = DateTime.fromISO('2026-03-01T03:00:00Z')
const ORDER: OrderTerms = {
  id: 7,
  channel: 'qr',
  transferAmount: 10_001,
  paymentReference: null,
  orderAt: ORDER_AT,
  expireAt: ORDER_AT.plus({ minutes: 15 }),
  account: { accountNo: '1230000001', promptpayId: '0812345678', billerId: null },
}
const SLIP: SlipReading = {
  kind: 'slip',
  qrText: buildSlipMiniQr('004', '20260301REF000000001'),
  sendingBank: '004',
  transRef: '20260301REF000000001',
  transDate: null,
}
const OWN_EARLIER: ReferenceUse = { kind: 'slip', order: { orderType: 'payment', orderId: 7 } }
const OTHER_ORDER: ReferenceUse = { kind: 'slip', order: { orderType: 'payment', orderId: 99 } }

function facts(overrides: Partial<SlipFacts> = {}): SlipFacts {
  return {
    amount: 10_001,
    receiver: { account: 'xxx-x-x0000-x', proxy: null },
    transferredAt: ORDER_AT.plus({ minutes: 2 }).setZone('UTC+7'),
    reference1: null,
    source: 'slipok',
    evidence: {},
    claimedBy: null,
    ...overrides,
  }
}

test.group('Slip providers: the verdict of a repeated slip and of a refusal', () => {
  test('a source’s repeated flag is a reuse, unless this order’s own earlier slip explains it', ({
    assert,
  }) => {
    const cases: Array<[string, SlipFacts, ReferenceUse[], string, string]> = [
      ['not repeated', facts(), [], 'passed', 'amount ok, destination ok, transfer in time.'],
      [
        'repeated, unknown to the gateway',
        facts({ repeated: true }),
        [],
        'failed',
        'amount ok, destination ok, transfer in time, ref error.',
      ],
      [
        'repeated: this order’s slip sent again',
        facts({ repeated: true }),
        [OWN_EARLIER],
        'passed',
        'amount ok, destination ok, transfer in time.',
      ],
      [
        'repeated, and another order’s slip',
        facts({ repeated: true }),
        [OWN_EARLIER, OTHER_ORDER],
        'failed',
        'amount ok, destination ok, transfer in time, ref error.',
      ],
    ]
    for (const [name, given, uses, status, message] of cases) {
      const verdict = verifySlip(SLIP, given, ORDER, uses)
      assert.equal(verdict.status, status, name)
      assert.equal(verdict.message, message, name)
    }
    const repeated = verifySlip(SLIP, facts({ repeated: true }), ORDER, [])
    assert.deepEqual(repeated.checks!.reuse, {
      result: 'error',
      used_by: [],
      repeated_at_source: 'slipok',
    })
  })

  test('a refusal without facts fails the slip naming what was refuted; facts decide over it', ({
    assert,
  }) => {
    const cases: Array<[string, Parameters<typeof verifySlip>[4], ReferenceUse[], string, string]> =
      [
        [
          'amount',
          { source: 'slipok', reason: 'amount_mismatch' },
          [],
          'failed',
          'amount mismatch.',
        ],
        [
          'receiver',
          { source: 'slipok', reason: 'receiver_mismatch' },
          [],
          'failed',
          'destination error.',
        ],
        [
          'amount, and a reuse the gateway knows',
          { source: 'slipok', reason: 'amount_mismatch' },
          [OTHER_ORDER],
          'failed',
          'amount mismatch, ref error.',
        ],
        ['repeated', { source: 'slipok', reason: 'repeated' }, [], 'failed', 'ref error.'],
        [
          'repeated: this order’s own earlier slip',
          { source: 'slipok', reason: 'repeated' },
          [OWN_EARLIER],
          'pending',
          'slip received, verification pending.',
        ],
        [
          'repeated: this order’s and another’s',
          { source: 'slipok', reason: 'repeated' },
          [OWN_EARLIER, OTHER_ORDER],
          'failed',
          'ref error.',
        ],
      ]
    for (const [name, refutation, uses, status, message] of cases) {
      const verdict = verifySlip(SLIP, null, ORDER, uses, refutation)
      assert.deepEqual(
        [verdict.status, verdict.message, verdict.checks],
        [status, message, null],
        name
      )
    }
    // Facts are judged by the rules whatever a source refuted; an image without a slip stays unreadable.
    const judged = verifySlip(SLIP, facts(), ORDER, [], { source: 'x', reason: 'amount_mismatch' })
    assert.equal(judged.status, 'passed')
    const unreadable = verifySlip({ kind: 'no_qr' }, null, ORDER, [], {
      source: 'x',
      reason: 'amount_mismatch',
    })
    assert.equal(unreadable.status, 'unreadable')
  })
})

/** A source that answers from a script and counts its lookups. */
function source(name: string, answer: () => SlipFacts | null): SlipVerifier & { calls: number } {
  return {
    name,
    calls: 0,
    async lookup() {
      this.calls++
      return answer()
    },
  }
}

const TARGET = { order: { platformOrderId: 'DMOP20260301TEST00000001' } } as unknown as SlipOrder
const REFERENCE = { sendingBank: '004', transRef: '20260301REF000000001' }
const down = (name: string, reason: 'timeout' | 'quota' | 'credentials' | 'server_error') =>
  source(name, () => {
    throw new SlipSourceFailed(name, reason, 'cannot answer')
  })

test.group('Slip providers: the sources are asked in order; a failing one never decides', () => {
  test('a source that cannot answer is skipped for the next one; its facts decide', async ({
    assert,
  }) => {
    const first = down('slipok', 'quota')
    const second = source('easyslip', () => facts({ source: 'easyslip' }))
    const third = source('statement', () => facts({ source: 'statement' }))
    const outcome = await askSlipVerifiers(REFERENCE, TARGET, [first, second, third])
    assert.equal(outcome.facts!.source, 'easyslip')
    assert.isNull(outcome.refusal)
    assert.deepEqual(
      outcome.answers.map(({ name, answer, reason }) => [name, answer, reason]),
      [
        ['slipok', 'failed', 'quota'],
        ['easyslip', 'found', undefined],
      ]
    )
    assert.equal(third.calls, 0, 'asked no further once a source knew the transaction')
  })

  test('every source failing, unknown or delayed leaves no facts and no refusal: pending', async ({
    assert,
  }) => {
    const outcome = await askSlipVerifiers(REFERENCE, TARGET, [
      down('slipok', 'timeout'),
      source('easyslip', () => {
        throw new SlipDelayed('easyslip', 'not yet')
      }),
      source('statement', () => null),
      source('sandbox', () => {
        throw new Error('database away')
      }),
    ])
    assert.deepEqual(
      [outcome.facts, outcome.refusal, outcome.answers.map(({ answer }) => answer)],
      [null, null, ['failed', 'delayed', 'unknown', 'failed']]
    )
    const verdict = verifySlip(SLIP, outcome.facts, ORDER, [], outcome.refusal)
    assert.equal(verdict.status, 'pending')
  })

  test('a refusal keeps the next sources asked: their facts decide, marked repeated when it was a repeat', async ({
    assert,
  }) => {
    const refusing = (reason: 'repeated' | 'amount_mismatch') =>
      source('slipok', () => {
        throw new SlipRefused('slipok', reason, 'refused')
      })
    const found = await askSlipVerifiers(REFERENCE, TARGET, [
      refusing('repeated'),
      source('easyslip', () => facts({ source: 'easyslip' })),
    ])
    assert.isTrue(found.facts!.repeated)
    assert.isNull(found.refusal)

    const alone = await askSlipVerifiers(REFERENCE, TARGET, [
      refusing('amount_mismatch'),
      refusing('repeated'),
      source('statement', () => null),
    ])
    assert.isNull(alone.facts)
    assert.deepEqual(alone.refusal, { source: 'slipok', reason: 'amount_mismatch' })
    assert.deepEqual(
      alone.answers.map(({ answer, reason }) => `${answer} ${reason ?? ''}`.trim()),
      ['refused amount_mismatch', 'refused repeated', 'unknown']
    )
  })
})

test.group('Slip providers: configuration', () => {
  const settings = {
    timeoutMs: 1000,
    caFile: undefined,
    slipok: { url: 'https://slipok.test/api', branchId: '1', apiKey: new Secret('k1') },
    easyslip: { url: 'https://easyslip.test/v2/verify/bank', apiKey: new Secret('k2') },
  }

  test('SLIP_VERIFIERS names each source; a provider without its settings is refused by name', ({
    assert,
  }) => {
    assert.deepEqual(SLIP_VERIFIER_NAMES, ['statement', 'sandbox', 'slipok', 'easyslip'])
    const built = buildSlipVerifiers(['statement', 'sandbox', 'slipok', 'easyslip'], settings)
    assert.instanceOf(built[0], StatementVerifier)
    assert.instanceOf(built[1], SandboxSlipVerifier)
    assert.instanceOf(built[2], SlipOkVerifier)
    assert.instanceOf(built[3], EasySlipVerifier)
    assert.throws(
      () => buildSlipVerifiers(['slipOK'], settings),
      'SLIP_VERIFIERS: unknown slip verifier "slipOK" (known: statement, sandbox, slipok, easyslip)'
    )
    assert.throws(
      () =>
        buildSlipVerifiers(['slipok'], {
          ...settings,
          slipok: { ...settings.slipok, apiKey: undefined as any },
        }),
      'SLIP_VERIFIERS names slipok, but SLIPOK_API_KEY is not set'
    )
    assert.throws(
      () =>
        buildSlipVerifiers(['slipok'], {
          ...settings,
          slipok: { ...settings.slipok, branchId: undefined as any },
        }),
      'SLIP_VERIFIERS names slipok, but SLIPOK_BRANCH_ID is not set'
    )
    assert.throws(
      () =>
        buildSlipVerifiers(['easyslip'], {
          ...settings,
          easyslip: { ...settings.easyslip, apiKey: undefined as any },
        }),
      'SLIP_VERIFIERS names easyslip, but EASYSLIP_API_KEY is not set'
    )
  })
})

test.group('Slip providers: amounts, times and answers', () => {
  test('baht become satang exactly; anything else is not an amount', ({ assert }) => {
    assert.equal(bahtToSatang(20.1), 2010)
    assert.equal(bahtToSatang(0.29), 29)
    assert.equal(bahtToSatang(1000), 100_000)
    assert.equal(bahtToSatang('149.99'), 14_999)
    for (const value of [0.1 + 0.2, 1.005, -1, 1e21, '1,000.00', null, Number.NaN, '']) {
      assert.isNull(bahtToSatang(value), String(value))
    }
  })

  test('slip dates and times are Bangkok time', ({ assert }) => {
    assert.equal(
      bangkokDateTime('20260301', '00:00:01')!.toUTC().toISO(),
      '2026-02-28T17:00:01.000Z'
    )
    assert.isNull(bangkokDateTime('20260231', '10:00:00'))
    assert.equal(isoDateTime('2026-03-01T00:00:00')!.toUTC().toISO(), '2026-02-28T17:00:00.000Z')
    assert.equal(isoDateTime('2026-02-28T17:00:00.000Z')!.toISO(), '2026-03-01T00:00:00.000+07:00')
  })

  test('the QR text sent is the image’s own, else the bank mini-QR rebuilt', ({ assert }) => {
    assert.equal(
      slipPayload('slipok', { sendingBank: '004', transRef: 'X1', qrText: 'RAW' }),
      'RAW'
    )
    assert.equal(
      slipPayload('slipok', { sendingBank: '004', transRef: 'X1' }),
      buildSlipMiniQr('004', 'X1')
    )
    assert.throws(
      () => slipPayload('slipok', { sendingBank: '', transRef: 'X1' }),
      /no QR text to send/
    )
  })

  test('answers that are not the documented shapes are failures, and keys are redacted', ({
    assert,
  }) => {
    const reference = { sendingBank: '004', transRef: 'T1' }
    const failure = (read: () => unknown) => {
      try {
        read()
      } catch (error) {
        if (error instanceof SlipSourceFailed) return error.reason
        throw error
      }
      return 'no failure'
    }
    assert.equal(
      failure(() => readSlipOkAnswer({ status: 200, json: undefined }, reference)),
      'bad_answer'
    )
    assert.equal(
      failure(() => readSlipOkAnswer({ status: 503, json: undefined }, reference)),
      'server_error'
    )
    assert.equal(
      failure(() => readSlipOkAnswer({ status: 429, json: {} }, reference)),
      'quota'
    )
    assert.equal(
      failure(() =>
        readSlipOkAnswer(
          { status: 200, json: { success: true, data: { success: false } } },
          reference
        )
      ),
      'bad_answer'
    )
    // EasySlip v1's success shape is not v2's: not believed.
    assert.equal(
      failure(() =>
        readEasySlipAnswer(
          { status: 200, json: { status: 200, data: { transRef: 'T1', amount: { amount: 1 } } } },
          reference
        )
      ),
      'bad_answer'
    )
    const key = new Secret('sk-live-123')
    try {
      readEasySlipAnswer(
        {
          status: 401,
          json: {
            success: false,
            error: { code: 'INVALID_API_KEY', message: 'key sk-live-123 invalid' },
          },
        },
        reference,
        [key]
      )
      assert.fail('refused')
    } catch (error) {
      assert.instanceOf(error, SlipSourceFailed)
      assert.notInclude((error as Error).message, 'sk-live-123')
      assert.include((error as Error).message, '[redacted]')
    }
    assert.equal(redact('a sk-live-123 b', [key]), 'a [redacted] b')
  })
})
