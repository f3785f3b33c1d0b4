/**
 * Server-side PNG rendering of PromptPay payloads with the `qrcode` package:
 * error correction M, the standard 4-module quiet zone, black on white.
 *
 * The module size is a whole number of pixels chosen so that the image is
 * about 340 px wide (a PromptPay payload of 70-110 characters gives 320-360
 * px): `qrcode`'s own `width` option would use a fractional scale and draw
 * modules of uneven size, which scanners read less reliably.
 */

import QRCode, { type QRCodeToBufferOptions, type QRCodeToDataURLOptions } from 'qrcode'
import { parseEmv } from '#payments/promptpay_qr'

const ERROR_CORRECTION = 'M'
const MARGIN_MODULES = 4
const TARGET_WIDTH_PX = 340

function renderOptions(payload: string) {
  // Refuse to draw a payload that a banking app would reject (bad TLV or CRC).
  parseEmv(payload)
  const modules = QRCode.create(payload, { errorCorrectionLevel: ERROR_CORRECTION }).modules.size
  const scale = Math.max(1, Math.round(TARGET_WIDTH_PX / (modules + 2 * MARGIN_MODULES)))
  return {
    errorCorrectionLevel: ERROR_CORRECTION,
    margin: MARGIN_MODULES,
    scale,
    color: { dark: '#000000ff', light: '#ffffffff' },
  } as const
}

/** `data:image/png;base64,...` for an <img src>. */
export async function qrPngDataUrl(payload: string): Promise<string> {
  const options: QRCodeToDataURLOptions = { ...renderOptions(payload), type: 'image/png' }
  return QRCode.toDataURL(payload, options)
}

/** The same PNG as raw bytes, e.g. for an `image/png` HTTP response. */
export async function qrPngBuffer(payload: string): Promise<Buffer> {
  const options: QRCodeToBufferOptions = { ...renderOptions(payload), type: 'png' }
  return QRCode.toBuffer(payload, options)
}
