import type { Assert } from '@japa/assert'
import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import sharp from 'sharp'
import { billPaymentPayload, crc16ccittFalse, promptPayPayload } from '#payments/promptpay_qr'
import {
  buildSlipMiniQr,
  NO_QR,
  parseSlipText,
  QRCODE_ERROR,
  QRCODE_MISSING_TIME,
} from '#slips/mini_qr'
import { readQrTexts } from '#slips/qr_reader'
import {
  bulkyPhoto,
  garbageQrImage,
  noQrImage,
  photoLike,
  promptpayQrImage,
  sandboxSlip,
} from '#tests/helpers/slips'

/** Example mini-QR from public provider documentation (KBank), in the notes. */
const KBANK_EXAMPLE = '0041000600000101030040220013071152533APM077365102TH91048134'
/** Published known answer of npm `promptparse` (slip verify generator). */
const PROMPTPARSE_BBL = '004000060000010103002021900021231231212000115102TH91049C30'

function tlv(tag: string, value: string) {
  return `${tag}${String(value.length).padStart(2, '0')}${value}`
}

/** TrueMoney's variant: tag 00 = 00 "01", 01 "01", event, transaction id, date ddMMyyyy; no tag 51; lower-case CRC. */
function trueMoneySlip(transactionId: string, date: string) {
  const body =
    tlv(
      '00',
      tlv('00', '01') +
        tlv('01', '01') +
        tlv('02', 'P2P') +
        tlv('03', transactionId) +
        tlv('04', date)
    ) + '9104'
  return body + crc16ccittFalse(body).toLowerCase()
}

test.group('slip mini-QR: building and parsing', () => {
  test('the spec wordings the verification reports are exported verbatim', ({ assert }) => {
    assert.equal(QRCODE_ERROR, 'qrcode error')
    assert.equal(QRCODE_MISSING_TIME, 'qrcode error - missing transaction date/time')
    assert.equal(NO_QR, "can't read qr data.")
  })

  test('builds the published known answer and parses what it builds', ({ assert }) => {
    assert.equal(buildSlipMiniQr('002', '0002123123121200011'), PROMPTPARSE_BBL)
    for (const [bank, transRef] of [
      ['004', '20251122ABCDEFGHJK12'],
      ['014', '0141234567890'],
      ['000', 'x'],
      ['025', 'A'.repeat(78)],
    ]) {
      const text = buildSlipMiniQr(bank, transRef)
      assert.match(text, /^00\d{2}000600000101\d{2}/)
      assert.deepEqual(parseSlipText(text), {
        kind: 'slip',
        sendingBank: bank,
        transRef,
        transDate: null,
        issuer: 'bank',
      })
    }
  })

  test('refuses to build from a bank code that is not 3 digits or an unusable transRef', ({
    assert,
  }) => {
    assert.throws(() => buildSlipMiniQr('KBANK', 'ABC'), /3-digit/)
    assert.throws(() => buildSlipMiniQr('04', 'ABC'), /3-digit/)
    assert.throws(() => buildSlipMiniQr('004', ''), /transRef/)
    assert.throws(() => buildSlipMiniQr('004', 'A B'), /transRef/)
    assert.throws(() => buildSlipMiniQr('004', 'A'.repeat(79)), /transRef/)
  })

  test("reads the notes' KBank example: bank 004, transRef 013071152533APM07736", ({ assert }) => {
    assert.deepEqual(parseSlipText(KBANK_EXAMPLE), {
      kind: 'slip',
      sendingBank: '004',
      transRef: '013071152533APM07736',
      transDate: null,
      issuer: 'bank',
    })
    // Surrounding whitespace from a scanner does not matter.
    assert.equal(parseSlipText(` ${KBANK_EXAMPLE}\n`).kind, 'slip')
  })

  test('a wrong CRC, a truncated text or a changed character is garbage', ({ assert }) => {
    assert.deepEqual(parseSlipText(`${KBANK_EXAMPLE.slice(0, -4)}8135`), { kind: 'garbage' })
    assert.deepEqual(parseSlipText(`${KBANK_EXAMPLE.slice(0, -4)}81G4`), { kind: 'garbage' })
    assert.deepEqual(parseSlipText(KBANK_EXAMPLE.replace('APM', 'APN')), { kind: 'garbage' })
    assert.deepEqual(parseSlipText(KBANK_EXAMPLE.slice(0, 30)), { kind: 'garbage' })
    assert.deepEqual(parseSlipText(KBANK_EXAMPLE.slice(0, -8)), { kind: 'garbage' })
  })

  test('accepts a CRC whose leading zero the bank app dropped, and a lower-case CRC', ({
    assert,
  }) => {
    let withLeadingZero: { text: string; transRef: string } | undefined
    for (let n = 0; !withLeadingZero; n++) {
      const transRef = `20251122SANDBOX${String(n).padStart(5, '0')}`
      const text = buildSlipMiniQr('014', transRef)
      if (text.endsWith('9104' + '0' + text.slice(-3))) withLeadingZero = { text, transRef }
    }
    const dropped = withLeadingZero.text.slice(0, -4) + withLeadingZero.text.slice(-3)
    assert.deepEqual(parseSlipText(dropped), {
      kind: 'slip',
      sendingBank: '014',
      transRef: withLeadingZero.transRef,
      transDate: null,
      issuer: 'bank',
    })
    // Dropping a digit that is not a leading zero still breaks the CRC.
    assert.deepEqual(parseSlipText(KBANK_EXAMPLE.slice(0, -1)), { kind: 'garbage' })

    const mixedCase = buildSlipMiniQr('006', 'ABCDEF123456')
    assert.equal(
      parseSlipText(mixedCase.slice(0, -4) + mixedCase.slice(-4).toLowerCase()).kind,
      'slip'
    )
  })

  test('a slip-shaped text with another API id, bank code or country is garbage', ({ assert }) => {
    const withCrc = (body: string) => `${body}9104${crc16ccittFalse(`${body}9104`)}`
    const inner = (apiId: string, bank: string) =>
      tlv('00', tlv('00', apiId) + tlv('01', bank) + tlv('02', 'ABC123'))
    assert.equal(parseSlipText(withCrc(inner('000001', '004') + tlv('51', 'TH'))).kind, 'slip')
    assert.deepEqual(parseSlipText(withCrc(inner('000002', '004') + tlv('51', 'TH'))), {
      kind: 'garbage',
    })
    assert.deepEqual(parseSlipText(withCrc(inner('000001', 'K04') + tlv('51', 'TH'))), {
      kind: 'garbage',
    })
    assert.deepEqual(parseSlipText(withCrc(inner('000001', '004') + tlv('51', 'LA'))), {
      kind: 'garbage',
    })
    // A CRC in tag 63 (the payment QR's tag) is not a slip's.
    const body = inner('000001', '004') + tlv('51', 'TH') + '6304'
    assert.deepEqual(parseSlipText(body + crc16ccittFalse(body)), { kind: 'garbage' })
  })

  test('a PromptPay or bill-payment QR is a payment QR, not a slip', ({ assert }) => {
    assert.deepEqual(
      parseSlipText(promptPayPayload({ proxy: '0801234567', amountSatang: 15000 })),
      {
        kind: 'promptpay',
      }
    )
    assert.deepEqual(
      parseSlipText(
        billPaymentPayload({ billerId: '010555012345601', ref1: 'P123ABC', amountSatang: 2000 })
      ),
      { kind: 'promptpay' }
    )
    const payment = promptPayPayload({ proxy: '0801234567' })
    assert.deepEqual(parseSlipText(`${payment.slice(0, -4)}0000`), { kind: 'garbage' })
  })

  test("TrueMoney's variant: no tag 51, lower-case CRC, a date in the QR", ({ assert }) => {
    const text = trueMoneySlip('50018935012345', '15062025')
    assert.match(text, /[a-f]/)
    assert.deepEqual(parseSlipText(text), {
      kind: 'slip',
      sendingBank: '',
      transRef: '50018935012345',
      transDate: '20250615',
      issuer: 'truemoney',
    })
    assert.deepEqual(parseSlipText(trueMoneySlip('50018935012345', '31022025')), {
      kind: 'garbage',
    })
    assert.deepEqual(parseSlipText(`${text.slice(0, -1)}x`), { kind: 'garbage' })
  })

  test('texts that are not TLV are garbage', ({ assert }) => {
    for (const text of [
      '',
      'hello',
      'https://example.com/slip',
      '0041',
      '00020101',
      '9'.repeat(60),
    ]) {
      assert.deepEqual(parseSlipText(text), { kind: 'garbage' }, text)
    }
  })
})

test.group('slip images: finding the QR codes', (group) => {
  const transRef = '20251122SANDBOX4KQ7Z'
  const miniQr = buildSlipMiniQr('004', transRef)
  let png: Buffer
  let jpg: Buffer

  group.setup(async () => {
    const transferredAt = DateTime.fromISO('2025-11-22T10:15:32', { zone: 'Asia/Bangkok' })
    png = await sandboxSlip({ transRef, bankCode: 'KBANK', amount: 123_456, transferredAt })
    jpg = await sandboxSlip({ transRef, amount: 123_456, transferredAt, format: 'jpg' })
  })

  /** The image holds exactly the slip's mini-QR, and it reads back as the transfer. */
  async function assertSlip(assert: Assert, bytes: Buffer) {
    const texts = await readQrTexts(bytes)
    assert.deepEqual(texts, [miniQr])
    assert.deepEqual(parseSlipText(texts[0]), {
      kind: 'slip',
      sendingBank: '004',
      transRef,
      transDate: null,
      issuer: 'bank',
    })
  }

  test('a sandbox slip is a 720 × 1280 PNG or JPG with the mini-QR', async ({ assert }) => {
    assert.deepInclude(await sharp(png).metadata(), { format: 'png', width: 720, height: 1280 })
    assert.deepInclude(await sharp(jpg).metadata(), { format: 'jpeg', width: 720, height: 1280 })
    await assertSlip(assert, png)
    await assertSlip(assert, jpg)
  })

  test('rotated by 7° either way, as a photo of a screen', async ({ assert }) => {
    await assertSlip(assert, await photoLike(png, { rotate: 7 }))
    await assertSlip(assert, await photoLike(jpg, { rotate: -7 }))
  })

  test('rotated by 90°', async ({ assert }) => {
    await assertSlip(assert, await sharp(png).rotate(90).png().toBuffer())
    await assertSlip(assert, await photoLike(jpg, { rotate: 270 }))
  })

  test('scaled to 50 % and to 1080 × 1920', async ({ assert }) => {
    await assertSlip(assert, await sharp(png).resize(360, 640).png().toBuffer())
    await assertSlip(assert, await photoLike(jpg, { scale: 0.5, rotate: 3 }))
    const fullHd = await photoLike(png, { resize: { width: 1080, height: 1920 }, rotate: -2 })
    assert.deepInclude(await sharp(fullHd).metadata(), { width: 1080, height: 1920 })
    await assertSlip(assert, fullHd)
  })

  test('a photo-like JPG at quality 60', async ({ assert }) => {
    await assertSlip(assert, await photoLike(png, { jpegQuality: 60, rotate: 4, noise: 14 }))
  })

  test('a noisy photo of about 2 MB, just within the upload limit', async ({ assert }) => {
    const photo = await bulkyPhoto(png)
    assert.isAtLeast(photo.length, 1_500_000)
    assert.isAtMost(photo.length, 2_000_000)
    await assertSlip(assert, photo)
  })

  test('an image larger than a 4K screenshot is reduced and still read', async ({ assert }) => {
    const huge = await sharp(png).resize(2700, 4800).jpeg({ quality: 70 }).toBuffer()
    await assertSlip(assert, huge)
  })

  test('a picture without a QR gives no text; bytes that are no image give none', async ({
    assert,
  }) => {
    assert.deepEqual(await readQrTexts(await noQrImage()), [])
    assert.deepEqual(await readQrTexts(new TextEncoder().encode('not an image at all')), [])
    assert.deepEqual(await readQrTexts(png.subarray(0, 4000)), [])
  })

  test('a QR with random text is found but is garbage; a payment QR is a payment QR', async ({
    assert,
  }) => {
    const garbage = await readQrTexts(await garbageQrImage())
    assert.lengthOf(garbage, 1)
    assert.deepEqual(parseSlipText(garbage[0]), { kind: 'garbage' })

    const payload = promptPayPayload({ proxy: '0801234567', amountSatang: 15_000 })
    assert.deepEqual(await readQrTexts(await promptpayQrImage(payload)), [payload])
    assert.deepEqual(parseSlipText(payload), { kind: 'promptpay' })
  })

  test('a slip whose QR is replaced by another text carries that text', async ({ assert }) => {
    const bytes = await sandboxSlip({ miniQr: KBANK_EXAMPLE, format: 'jpg' })
    assert.deepEqual(await readQrTexts(await photoLike(bytes, { rotate: 5 })), [KBANK_EXAMPLE])
  })
})
