import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import {
  maskedAccountMatches,
  normalizeProxy,
  verifySlip,
  type OrderTerms,
  type ReferenceUse,
  type SlipReading,
  type VerificationStatus,
} from '#slips/verification'
import type { SlipFacts } from '#slips/verifiers/slip_verifier'

const ORDER_AT = DateTime.fromISO('2026-03-01T03:00:00Z')
const EXPIRE_AT = ORDER_AT.plus({ minutes: 15 })

const ORDER: OrderTerms = {
  id: 7,
  channel: 'qr',
  transferAmount: 10_001,
  paymentReference: null,
  orderAt: ORDER_AT,
  expireAt: EXPIRE_AT,
  account: { accountNo: '1230000001', promptpayId: '0812345678', billerId: null },
}
const TRANSFER_ORDER: OrderTerms = {
  ...ORDER,
  channel: 'transfer',
  account: { accountNo: '1230000002', promptpayId: null, billerId: null },
}
const BILL_ORDER: OrderTerms = {
  ...ORDER,
  paymentReference: '20260301ABCDEFGHIJKL',
  account: { accountNo: '1230000003', promptpayId: null, billerId: '010555555555501' },
}

const SLIP: SlipReading = {
  kind: 'slip',
  qrText: '0041…',
  sendingBank: '004',
  transRef: '20260301REF000000001',
  transDate: null,
}

function facts(overrides: Partial<SlipFacts> = {}): SlipFacts {
  return {
    amount: 10_001,
    receiver: { account: 'xxxxxx0001', proxy: '0812345678' },
    transferredAt: ORDER_AT.plus({ minutes: 2 }),
    reference1: null,
    source: 'test',
    evidence: {},
    claimedBy: null,
    ...overrides,
  }
}

const OTHER_ORDER_SLIP: ReferenceUse = {
  kind: 'slip',
  order: { orderType: 'payment', orderId: 99 },
}
const OWN_EARLIER_SLIP: ReferenceUse = { kind: 'slip', order: { orderType: 'payment', orderId: 7 } }

interface Case {
  name: string
  reading?: SlipReading
  facts: SlipFacts | null
  order?: OrderTerms
  uses?: ReferenceUse[]
  message: string
  status: VerificationStatus
}

const CASES: Case[] = [
  {
    name: 'no QR in the image',
    reading: { kind: 'no_qr' },
    facts: null,
    message: "can't read qr data.",
    status: 'unreadable',
  },
  {
    name: 'a PromptPay payment QR instead of a slip',
    reading: { kind: 'not_slip', qrText: '000201…', what: 'promptpay' },
    facts: null,
    message: 'qrcode error',
    status: 'unreadable',
  },
  {
    name: 'a QR with other text (or a bad CRC)',
    reading: { kind: 'not_slip', qrText: 'hello', what: 'garbage' },
    facts: facts(),
    message: 'qrcode error',
    status: 'unreadable',
  },
  {
    name: 'nothing known of the transaction yet',
    facts: null,
    message: 'slip received, verification pending.',
    status: 'pending',
  },
  {
    name: 'nothing known yet, even with the reference seen elsewhere',
    facts: null,
    uses: [OTHER_ORDER_SLIP],
    message: 'slip received, verification pending.',
    status: 'pending',
  },
  {
    name: 'facts without a transfer time',
    facts: facts({ transferredAt: null }),
    message: 'qrcode error - missing transaction date/time',
    status: 'unreadable',
  },
  {
    name: 'a date in the QR does not make up for the missing time',
    reading: { ...SLIP, transDate: '20260301' } as SlipReading,
    facts: facts({ transferredAt: null }),
    message: 'qrcode error - missing transaction date/time',
    status: 'unreadable',
  },
  {
    name: 'QR order: all three checks pass (masked account)',
    facts: facts({ receiver: { account: 'xxx-x-x0000-1', proxy: null } }),
    message: 'amount ok, destination ok, transfer in time.',
    status: 'passed',
  },
  {
    name: 'QR order: destination by PromptPay id in another notation',
    facts: facts({ receiver: { account: null, proxy: '0066812345678' } }),
    message: 'amount ok, destination ok, transfer in time.',
    status: 'passed',
  },
  {
    name: 'TRANSFER order: all three checks pass',
    order: TRANSFER_ORDER,
    facts: facts({ receiver: { account: '1230000002', proxy: null } }),
    message: 'amount ok, destination ok (TRANSFER), transfer in time.',
    status: 'passed',
  },
  {
    name: 'all three checks fail (the spec row)',
    facts: facts({
      amount: 5_000,
      receiver: { account: '9990000001', proxy: '0899999999' },
      transferredAt: EXPIRE_AT.plus({ minutes: 10 }),
    }),
    message: 'destination error, amount mismatch, transfer expired.',
    status: 'failed',
  },
  {
    name: 'wrong amount only',
    facts: facts({ amount: 10_000 }),
    message: 'amount mismatch, destination ok, transfer in time.',
    status: 'failed',
  },
  {
    name: 'wrong destination only: named first',
    facts: facts({ receiver: { account: 'xxxxxx9999', proxy: null } }),
    message: 'destination error, amount ok, transfer in time.',
    status: 'failed',
  },
  {
    name: 'TRANSFER order with a wrong destination',
    order: TRANSFER_ORDER,
    facts: facts({ receiver: { account: '1230000001', proxy: null } }),
    message: 'destination error, amount ok, transfer in time.',
    status: 'failed',
  },
  {
    name: 'transfer after expiry + 60 s',
    facts: facts({ transferredAt: EXPIRE_AT.plus({ seconds: 61 }) }),
    message: 'amount ok, destination ok, transfer expired.',
    status: 'failed',
  },
  {
    name: 'transfer exactly at expiry + 60 s is in time (statement minutes)',
    facts: facts({ transferredAt: EXPIRE_AT.plus({ seconds: 60 }) }),
    message: 'amount ok, destination ok, transfer in time.',
    status: 'passed',
  },
  {
    name: 'transfer 60 s before creation is in time',
    facts: facts({ transferredAt: ORDER_AT.minus({ seconds: 60 }) }),
    message: 'amount ok, destination ok, transfer in time.',
    status: 'passed',
  },
  {
    name: 'transfer more than 60 s before creation: the suffix replaces the time result',
    facts: facts({ transferredAt: ORDER_AT.minus({ seconds: 61 }) }),
    message: 'amount ok, destination ok, transfer before create.',
    status: 'failed',
  },
  {
    name: 'reference used by another order’s slip',
    facts: facts(),
    uses: [OTHER_ORDER_SLIP],
    message: 'amount ok, destination ok, transfer in time, ref error.',
    status: 'failed',
  },
  {
    name: 'an earlier slip of the same order is not reuse',
    facts: facts(),
    uses: [
      OWN_EARLIER_SLIP,
      { kind: 'statement_line', order: { orderType: 'payment', orderId: 7 } },
    ],
    message: 'amount ok, destination ok, transfer in time.',
    status: 'passed',
  },
  {
    name: 'the transaction is matched to this order: other orders’ slips of it are their reuse',
    facts: facts({ claimedBy: { orderType: 'payment', orderId: 7 } }),
    uses: [OTHER_ORDER_SLIP],
    message: 'amount ok, destination ok, transfer in time.',
    status: 'passed',
  },
  {
    name: 'transaction already matched to another order (a payout line too)',
    facts: facts({ claimedBy: { orderType: 'withdraw', orderId: 7 } }),
    message: 'amount ok, destination ok, transfer in time, ref error.',
    status: 'failed',
  },
  {
    name: 'before creation and reused: both suffixes',
    facts: facts({ transferredAt: ORDER_AT.minus({ hours: 3 }) }),
    uses: [OTHER_ORDER_SLIP],
    message: 'amount ok, destination ok, transfer before create, ref error.',
    status: 'failed',
  },
  {
    name: 'bill payment: ref1 names the order',
    order: BILL_ORDER,
    facts: facts({
      reference1: '20260301ABCDEFGHIJKL',
      receiver: { account: null, proxy: '010555555555501' },
    }),
    message: 'ref ok, transfer in time.',
    status: 'passed',
  },
  {
    name: 'bill payment: ref ok supersedes the destination check',
    order: BILL_ORDER,
    facts: facts({ reference1: '20260301ABCDEFGHIJKL', receiver: { account: null, proxy: null } }),
    message: 'ref ok, transfer in time.',
    status: 'passed',
  },
  {
    name: 'bill payment: ref ok, before creation',
    order: BILL_ORDER,
    facts: facts({
      reference1: '20260301ABCDEFGHIJKL',
      transferredAt: ORDER_AT.minus({ minutes: 5 }),
    }),
    message: 'ref ok, transfer before create.',
    status: 'failed',
  },
  {
    name: 'bill payment: the right ref1 with another amount is not "ref ok"',
    order: BILL_ORDER,
    facts: facts({
      amount: 100,
      reference1: '20260301ABCDEFGHIJKL',
      receiver: { account: null, proxy: '010555555555501' },
    }),
    message: 'amount mismatch, destination ok, transfer in time.',
    status: 'failed',
  },
  {
    name: 'bill payment: ref1 of another order',
    order: BILL_ORDER,
    facts: facts({
      reference1: '20260301ZZZZZZZZZZZZ',
      receiver: { account: null, proxy: '010555555555501' },
    }),
    message: 'amount ok, destination ok, transfer in time, ref error.',
    status: 'failed',
  },
  {
    name: 'bill payment: the right ref1 but the transaction is another order’s',
    order: BILL_ORDER,
    facts: facts({
      reference1: '20260301ABCDEFGHIJKL',
      receiver: { account: null, proxy: '010555555555501' },
    }),
    uses: [OTHER_ORDER_SLIP],
    message: 'amount ok, destination ok, transfer in time, ref error.',
    status: 'failed',
  },
  {
    name: 'bill payment without ref1 from the source: amount and destination decide',
    order: BILL_ORDER,
    facts: facts({ receiver: { account: '1230000003', proxy: null } }),
    message: 'amount ok, destination ok, transfer in time.',
    status: 'passed',
  },
  {
    name: 'a PromptPay order ignores a ref1',
    facts: facts({ reference1: 'SOMETHINGELSE' }),
    message: 'amount ok, destination ok, transfer in time.',
    status: 'passed',
  },
]

test.group('slip verification rules', () => {
  test('{name}')
    .with(CASES)
    .run(({ assert }, row) => {
      const verification = verifySlip(
        row.reading ?? SLIP,
        row.facts,
        row.order ?? ORDER,
        row.uses ?? []
      )
      assert.equal(verification.message, row.message)
      assert.equal(verification.status, row.status)
    })

  test('the checks keep what was compared', ({ assert }) => {
    const verification = verifySlip(SLIP, facts({ amount: 9_999 }), ORDER, [OTHER_ORDER_SLIP])
    assert.deepEqual(verification.checks?.amount, {
      result: 'mismatch',
      expected: 10_001,
      actual: 9_999,
    })
    assert.equal(verification.checks?.time.result, 'in_time')
    assert.equal(verification.checks?.time.earliest, '2026-03-01T02:59:00.000Z')
    assert.equal(verification.checks?.time.latest, '2026-03-01T03:16:00.000Z')
    assert.deepEqual(verification.checks?.reuse, { result: 'error', used_by: [OTHER_ORDER_SLIP] })
  })

  test('masked accounts and PromptPay ids', ({ assert }) => {
    assert.isTrue(maskedAccountMatches('xxx-x-x5678-x', '1234556789'))
    assert.isTrue(maskedAccountMatches('1234567890', '123-4-56789-0'))
    assert.isFalse(maskedAccountMatches('xxxxxx7890', '12345678901'))
    assert.isFalse(maskedAccountMatches('xxxxxxxxxx', '1234567890'), 'nothing shown proves nothing')
    assert.isFalse(maskedAccountMatches('xxxxxx7891', '1234567890'))
    assert.equal(normalizeProxy('0066812345678'), '0812345678')
    assert.equal(normalizeProxy('66812345678'), '0812345678')
    assert.equal(normalizeProxy('081-234-5678'), '0812345678')
    assert.equal(normalizeProxy('1234567890123'), '1234567890123')
  })
})
