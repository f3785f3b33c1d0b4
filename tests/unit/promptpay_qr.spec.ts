import { test } from '@japa/runner'
import {
  billPaymentPayload,
  crc16ccittFalse,
  describePromptPay,
  emvValue,
  parseEmv,
  promptPayPayload,
  PromptPayQrError,
} from '#payments/promptpay_qr'
import { qrPngBuffer, qrPngDataUrl } from '#payments/qr_image'
import { decodeQr } from '#tests/helpers/qr_decode'

/** Expected payloads produced by npm `promptpay-qr` 0.5.0 (same field order). */
const PROMPTPAY_QR_VECTORS = {
  mobileStatic: '00020101021129370016A000000677010111011300668012345675802TH530376463046197',
  zeroMobile422:
    '00020101021229370016A000000677010111011300660000000005802TH530376454044.226304E469',
  mobile100: '00020101021229370016A000000677010111011300668123456785802TH53037645406100.006304BB8A',
  mobile2001: '00020101021229370016A000000677010111011300668123456785802TH5303764540520.01630482B2',
  mobile123450:
    '00020101021229370016A000000677010111011300668012345675802TH530376454071234.5063044EDA',
  nationalIdStatic: '00020101021129370016A000000677010111021312345678901235802TH53037646304EC40',
  nationalId123450:
    '00020101021229370016A000000677010111021312345678901235802TH530376454071234.506304F2B2',
  eWalletStatic: '00020101021129390016A00000067701011103151234567890123455802TH5303764630473AF',
  eWallet2001:
    '00020101021229390016A00000067701011103151234567890123455802TH5303764540520.016304AAC6',
}

/** For assert.throws with a label: any error message is fine. */
const ANY_MESSAGE = /.*/

/** PNG width from the IHDR chunk. */
function pngWidth(png: Buffer): number {
  return png.readUInt32BE(16)
}

test.group('PromptPay QR payloads', () => {
  test('CRC-16/CCITT-FALSE check value of "123456789" is 29B1', ({ assert }) => {
    assert.equal(crc16ccittFalse('123456789'), '29B1')
    assert.equal(crc16ccittFalse(''), 'FFFF')
  })

  test('reproduces the known-answer vectors from the notes byte for byte', ({ assert }) => {
    assert.equal(promptPayPayload({ proxy: '0801234567' }), PROMPTPAY_QR_VECTORS.mobileStatic)
    assert.equal(
      promptPayPayload({ proxy: '000-000-0000', amountSatang: 422 }),
      PROMPTPAY_QR_VECTORS.zeroMobile422
    )
  })

  test('mobile numbers become 0066 + 9 digits under sub-tag 01', ({ assert }) => {
    for (const proxy of ['081-234-5678', '081 234 5678', '+66 81 234 5678', '66812345678']) {
      assert.equal(
        promptPayPayload({ proxy, amountSatang: 10000 }),
        PROMPTPAY_QR_VECTORS.mobile100,
        proxy
      )
    }
    const described = describePromptPay(PROMPTPAY_QR_VECTORS.mobile100)
    assert.equal(described.proxyType, 'mobile')
    assert.equal(described.proxy, '0066812345678')
  })

  test('13-digit national/tax ids use sub-tag 02, 15-digit e-wallet ids sub-tag 03', ({
    assert,
  }) => {
    assert.equal(
      promptPayPayload({ proxy: '1234567890123' }),
      PROMPTPAY_QR_VECTORS.nationalIdStatic
    )
    assert.equal(
      promptPayPayload({ proxy: '1-2345-67890-12-3', amountSatang: 123450 }),
      PROMPTPAY_QR_VECTORS.nationalId123450
    )
    assert.equal(promptPayPayload({ proxy: '123456789012345' }), PROMPTPAY_QR_VECTORS.eWalletStatic)
    assert.equal(
      promptPayPayload({ proxy: '123456789012345', amountSatang: 2001 }),
      PROMPTPAY_QR_VECTORS.eWallet2001
    )

    assert.deepEqual(describePromptPay(PROMPTPAY_QR_VECTORS.nationalId123450), {
      type: 'promptpay',
      proxyType: 'nationalId',
      proxy: '1234567890123',
      billerId: null,
      ref1: null,
      ref2: null,
      amountSatang: 123450,
      dynamic: true,
      crcValid: true,
    })
    assert.deepEqual(describePromptPay(PROMPTPAY_QR_VECTORS.eWalletStatic), {
      type: 'promptpay',
      proxyType: 'eWallet',
      proxy: '123456789012345',
      billerId: null,
      ref1: null,
      ref2: null,
      amountSatang: null,
      dynamic: false,
      crcValid: true,
    })
  })

  test('amounts are written with two decimals and read back as satang', ({ assert }) => {
    const cases: Array<[number, string, string]> = [
      [2001, '20.01', PROMPTPAY_QR_VECTORS.mobile2001],
      [123450, '1234.50', PROMPTPAY_QR_VECTORS.mobile123450],
      [10000, '100.00', PROMPTPAY_QR_VECTORS.mobile100],
    ]
    for (const [amountSatang, text, expected] of cases) {
      const proxy = expected === PROMPTPAY_QR_VECTORS.mobile123450 ? '0801234567' : '0812345678'
      const payload = promptPayPayload({ proxy, amountSatang })
      assert.equal(payload, expected)
      const parsed = parseEmv(payload)
      assert.equal(emvValue(parsed, '54'), text)
      assert.equal(emvValue(parsed, '01'), '12')
      assert.equal(describePromptPay(payload).amountSatang, amountSatang)
    }
    // 1 satang and 29 satang (0.29 * 100 is not 29 in floats)
    assert.equal(
      emvValue(parseEmv(promptPayPayload({ proxy: '0812345678', amountSatang: 1 })), '54'),
      '0.01'
    )
    assert.equal(
      describePromptPay(promptPayPayload({ proxy: '0812345678', amountSatang: 29 })).amountSatang,
      29
    )
  })

  test('refuses proxies, amounts, biller ids and references it cannot encode', ({ assert }) => {
    for (const proxy of ['', '081234567', '1812345678', '12345678901234', '1234567890123456']) {
      assert.throws(() => promptPayPayload({ proxy }), PromptPayQrError, ANY_MESSAGE, proxy)
    }
    for (const amountSatang of [0, -100, 20.5, Number.NaN, 2 ** 53, 10_000_000_000_000]) {
      assert.throws(
        () => promptPayPayload({ proxy: '0812345678', amountSatang }),
        PromptPayQrError,
        ANY_MESSAGE,
        String(amountSatang)
      )
    }
    const bill = { billerId: '099400016550100', ref1: 'INV001' }
    for (const billerId of ['09940001655010', '0994000165501000', '09940001655010A']) {
      assert.throws(() => billPaymentPayload({ ...bill, billerId }), PromptPayQrError)
    }
    for (const ref of ['', 'inv001', 'INV-001', 'INV 001', 'A'.repeat(21), 'ใบแจ้งหนี้']) {
      assert.throws(
        () => billPaymentPayload({ ...bill, ref1: ref }),
        PromptPayQrError,
        ANY_MESSAGE,
        ref
      )
      assert.throws(
        () => billPaymentPayload({ ...bill, ref2: ref }),
        PromptPayQrError,
        ANY_MESSAGE,
        ref
      )
    }
    assert.doesNotThrow(() => billPaymentPayload({ ...bill, ref1: 'A'.repeat(20), ref2: '9' }))
  })

  test('bill payment payload (tag 30) parses back to its biller id and references', ({
    assert,
  }) => {
    const payload = billPaymentPayload({
      billerId: '099400016550100',
      ref1: 'INV2024001',
      ref2: 'A1',
      amountSatang: 123450,
    })
    assert.equal(
      payload.slice(0, -4),
      '00020101021230590016A00000067701011201150994000165501000210INV20240010302A1' +
        '5802TH530376454071234.506304'
    )
    assert.equal(payload.slice(-4), crc16ccittFalse(payload.slice(0, -4)))

    const parsed = parseEmv(payload)
    assert.deepEqual(
      parsed.fields.map((f) => f.tag),
      ['00', '01', '30', '58', '53', '54', '63']
    )
    assert.deepEqual(parsed.fields[2].subFields, [
      { tag: '00', length: 16, value: 'A000000677010112' },
      { tag: '01', length: 15, value: '099400016550100' },
      { tag: '02', length: 10, value: 'INV2024001' },
      { tag: '03', length: 2, value: 'A1' },
    ])
    assert.deepEqual(describePromptPay(payload), {
      type: 'billpayment',
      proxyType: null,
      proxy: null,
      billerId: '099400016550100',
      ref1: 'INV2024001',
      ref2: 'A1',
      amountSatang: 123450,
      dynamic: true,
      crcValid: true,
    })

    const staticBill = describePromptPay(
      billPaymentPayload({ billerId: '099400016550100', ref1: 'CUST42' })
    )
    assert.equal(staticBill.ref1, 'CUST42')
    assert.isNull(staticBill.ref2)
    assert.isNull(staticBill.amountSatang)
    assert.isFalse(staticBill.dynamic)
  })

  test('parses payloads written in another field order and with tag 62', ({ assert }) => {
    // npm promptparse 1.6.0 writes 53 before 58 and 54 after them.
    const other =
      '00020101021230590016A00000067701011201150994000165501000210INV20240010302A1' +
      '53037645802TH54071234.506304E073'
    const described = describePromptPay(other)
    assert.equal(described.ref1, 'INV2024001')
    assert.equal(described.amountSatang, 123450)

    const body =
      '00020101021129370016A000000677010111011300668123456785802TH5303764' +
      '62140710TERMINAL016304'
    const withTag62 = body + crc16ccittFalse(body)
    assert.deepEqual(parseEmv(withTag62).fields.find((f) => f.tag === '62')?.subFields, [
      { tag: '07', length: 10, value: 'TERMINAL01' },
    ])
  })

  test('parse rejects a wrong or missing CRC unless told not to be strict', ({ assert }) => {
    const good = PROMPTPAY_QR_VECTORS.mobileStatic
    const wrongCrc = good.slice(0, -4) + '6198'
    assert.throws(() => parseEmv(wrongCrc), PromptPayQrError, /CRC mismatch/)
    assert.throws(() => describePromptPay(wrongCrc), PromptPayQrError, /CRC mismatch/)

    const lenient = parseEmv(wrongCrc, { strict: false })
    assert.isFalse(lenient.crcValid)
    assert.equal(lenient.crc, '6198')
    assert.equal(lenient.computedCrc, '6197')
    assert.isFalse(describePromptPay(wrongCrc, { strict: false }).crcValid)

    // A changed digit with the old CRC kept.
    const tampered = good.replace('0066801234567', '0066801234568')
    assert.throws(() => parseEmv(tampered), PromptPayQrError)

    // Lowercase hex is the same CRC.
    const vector = PROMPTPAY_QR_VECTORS.zeroMobile422
    assert.isTrue(parseEmv(vector.slice(0, -4) + vector.slice(-4).toLowerCase()).crcValid)

    assert.throws(() => parseEmv(good.slice(0, -8)), PromptPayQrError, /no CRC/)
    assert.throws(() => parseEmv(good.slice(0, -2)), PromptPayQrError)
    assert.throws(() => parseEmv('0002010102xx'), PromptPayQrError)
  })

  test('a payload rendered to PNG decodes back to the same text (tag 29 and tag 30)', async ({
    assert,
  }) => {
    const payloads = [
      promptPayPayload({ proxy: '0812345678', amountSatang: 123450 }),
      billPaymentPayload({
        billerId: '099400016550100',
        ref1: 'ORDER20240601ABCDEF',
        ref2: 'MERCHANT7',
        amountSatang: 2001,
      }),
    ]
    for (const payload of payloads) {
      const png = await qrPngBuffer(payload)
      assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG')
      assert.isAtLeast(pngWidth(png), 320)
      assert.isAtMost(pngWidth(png), 360)
      assert.equal(await decodeQr(png), payload)

      const dataUrl = await qrPngDataUrl(payload)
      assert.match(dataUrl, /^data:image\/png;base64,/)
      const fromUrl = Buffer.from(dataUrl.slice('data:image/png;base64,'.length), 'base64')
      assert.equal(await decodeQr(fromUrl), payload)
    }
  })

  test('refuses to render a payload with a bad CRC', async ({ assert }) => {
    const bad = PROMPTPAY_QR_VECTORS.mobileStatic.slice(0, -4) + '0000'
    await assert.rejects(() => qrPngBuffer(bad), PromptPayQrError)
    await assert.rejects(() => qrPngDataUrl('not an EMV payload'), PromptPayQrError)
  })

  test('decodeQr gives null for bytes that are not an image', async ({ assert }) => {
    assert.isNull(await decodeQr(Buffer.from('not an image')))
  })
})
