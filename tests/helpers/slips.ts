/**
 * Slip images for tests: the sandbox bank's slip, the same slip as a phone
 * photo of a screen would make it, and images that are not slips (a QR with
 * random text, a PromptPay payment QR, a picture without any QR).
 */

import { randomBytes } from 'node:crypto'
import { DateTime } from 'luxon'
import QRCode from 'qrcode'
import sharp from 'sharp'
import { BANKS, isBankCode } from '#core/banks'
import { randomString, UPPER_ALPHANUMERIC } from '#core/random'
import { buildSlipMiniQr } from '#slips/mini_qr'
import { maskAccountNo, renderSlipImage } from '#slips/sandbox_slip_image'

export interface SandboxSlipOptions {
  /** Default: yyyyMMdd + 12 random characters, like the sandbox bank's. */
  transRef?: string
  /** Sending bank code (spec bank list). Default KBANK. */
  bankCode?: string
  /** Satang. Default 150.00 THB. */
  amount?: number
  /** Default: now. */
  transferredAt?: DateTime
  format?: 'png' | 'jpg'
  /** Text of the QR drawn on the slip; default the mini-QR of bankCode and transRef. */
  miniQr?: string
  senderName?: string
  senderAccountNo?: string
  receiverName?: string
  receiverAccountNo?: string
}

/** A transRef like the sandbox bank's: yyyyMMdd + 12 upper-case letters and digits. */
export function sandboxTransRef(at: DateTime = DateTime.utc()): string {
  return `${at.toUTC().toFormat('yyyyLLdd')}${randomString(12, UPPER_ALPHANUMERIC)}`
}

/** PNG (default) or JPG bytes of a sandbox slip for the given transfer. */
export async function sandboxSlip(options: SandboxSlipOptions = {}): Promise<Buffer> {
  const bankCode = options.bankCode ?? 'KBANK'
  const transferredAt = options.transferredAt ?? DateTime.now()
  const transRef = options.transRef ?? sandboxTransRef(transferredAt)
  const sendingBank = isBankCode(bankCode) ? BANKS[bankCode] : '000'
  return renderSlipImage({
    bankCode,
    amount: options.amount ?? 15_000,
    senderName: options.senderName ?? 'นาย สมชาย ใจดี',
    senderAccountMasked: maskAccountNo(options.senderAccountNo ?? '1234567890'),
    receiverName: options.receiverName ?? 'บจก. ตัวอย่าง เพย์',
    receiverAccountMasked: maskAccountNo(options.receiverAccountNo ?? '9876543210'),
    transferredAt,
    transRef,
    miniQr: options.miniQr ?? buildSlipMiniQr(sendingBank, transRef),
    format: options.format ?? 'png',
  })
}

/**
 * Sensor grain: one grey channel around 128, standard deviation `sigma`,
 * triangular (two uniform bytes summed): cheaper than a true Gaussian.
 */
function grain(width: number, height: number, sigma: number): Buffer {
  const random = randomBytes(width * height * 2)
  const pixels = Buffer.alloc(width * height)
  // The sum of two uniform bytes has a standard deviation of √(2 · (256² − 1) / 12) ≈ 104.5.
  const factor = sigma / Math.sqrt((2 * (256 * 256 - 1)) / 12)
  for (let index = 0; index < pixels.length; index++) {
    const spread = random[2 * index] + random[2 * index + 1] - 255
    pixels[index] = Math.max(0, Math.min(255, Math.round(128 + spread * factor)))
  }
  return pixels
}

export interface PhotoLikeOptions {
  /** Degrees, clockwise; the corners show a dark desk. Default 0. */
  rotate?: number
  /** Factor on both sides after rotating, e.g. 0.5. Default 1. */
  scale?: number
  /** Exact output size instead of `scale`, e.g. 1080 × 1920. */
  resize?: { width: number; height: number }
  /** Default 70. */
  jpegQuality?: number
  /** Sensor grain, standard deviation in grey levels (0 = none). Default 10. */
  noise?: number
  /** Lens / focus blur sigma (0 = none, else at least 0.3). Default 0.6. */
  blur?: number
}

/**
 * What a phone photo (or a re-shared screenshot) does to a slip: rotated a
 * little on a dark background, rescaled, slightly darker, blurred and noisy,
 * re-encoded as JPG.
 */
export async function photoLike(bytes: Uint8Array, options: PhotoLikeOptions = {}) {
  const rotated = await sharp(bytes)
    .rotate(options.rotate ?? 0, { background: '#2f2f33' })
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true })
  const scale = options.scale ?? 1
  const width = options.resize?.width ?? Math.round(rotated.info.width * scale)
  const height = options.resize?.height ?? Math.round(rotated.info.height * scale)

  let image = sharp(rotated.data, { raw: rotated.info })
    .resize(width, height, { fit: 'fill' })
    .modulate({ brightness: 0.94 })
  const blur = options.blur ?? 0.6
  if (blur > 0) image = image.blur(blur)
  const noise = options.noise ?? 10
  if (noise > 0) {
    // Overlay with mid-grey is neutral: only the grain's spread shows.
    image = sharp(await image.raw().toBuffer(), { raw: { width, height, channels: 3 } }).composite([
      { input: grain(width, height, noise), raw: { width, height, channels: 1 }, blend: 'overlay' },
    ])
  }
  return image.jpeg({ quality: options.jpegQuality ?? 70 }).toBuffer()
}

/**
 * A large, noisy JPG of the slip whose size is just under `maxBytes` (by
 * default the 2,000,000 bytes /slip/upload accepts) and above 75 % of it.
 */
export async function bulkyPhoto(bytes: Uint8Array, maxBytes = 2_000_000): Promise<Buffer> {
  // 1440 × 2560 at quality 98 with grain 20 lands near 1.85 MB; the others are fallbacks.
  for (const [width, noise] of [
    [1440, 20],
    [1440, 16],
    [1440, 24],
    [1800, 16],
    [1080, 32],
  ]) {
    for (const jpegQuality of [98, 95, 92, 90, 87, 84, 80, 75]) {
      const photo = await photoLike(bytes, {
        resize: { width, height: Math.round((width * 16) / 9) },
        noise,
        blur: 0,
        jpegQuality,
      })
      if (photo.length <= maxBytes && photo.length >= maxBytes * 0.75) return photo
      if (photo.length < maxBytes * 0.75) break
    }
  }
  throw new Error(`could not make a photo between 75 % and 100 % of ${maxBytes} bytes`)
}

/** PNG of a QR whose text is random: found, but not a slip. */
export function garbageQrImage(): Promise<Buffer> {
  return QRCode.toBuffer(`note ${randomBytes(12).toString('hex')}`, {
    type: 'png',
    margin: 4,
    scale: 8,
  })
}

/** PNG of a payment QR (e.g. a PromptPay payload): a QR to pay with, not a slip. */
export function promptpayQrImage(payload: string): Promise<Buffer> {
  return QRCode.toBuffer(payload, { type: 'png', margin: 4, scale: 8 })
}

/** PNG of a picture with text and shapes but no QR code. */
export function noQrImage(): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="720" height="1280" font-family="Loma, sans-serif">
<rect width="720" height="1280" fill="#f5f7fa"/>
<rect x="40" y="80" width="520" height="120" rx="24" fill="#ffffff"/>
<text x="70" y="150" font-size="30" fill="#1f2933">โอนแล้วนะคะ / Paid already</text>
<rect x="160" y="240" width="520" height="120" rx="24" fill="#06c755"/>
<text x="190" y="310" font-size="30" fill="#ffffff">ขอบคุณครับ 1,500.00 บาท</text>
<rect x="40" y="420" width="640" height="640" rx="16" fill="#dde3ea"/>
<circle cx="360" cy="740" r="180" fill="#9aa5b1"/>
</svg>`
  return sharp(Buffer.from(svg)).png().toBuffer()
}
