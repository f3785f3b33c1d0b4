/**
 * Finds the QR codes in a slip image (PNG or JPG bytes): phone screenshots
 * and photos of screens, rotated, scaled or recompressed.
 *
 * zxing-wasm (zxing-cpp) decodes the image itself and tries rotated,
 * inverted and downscaled variants. It would fetch its .wasm from a CDN: the
 * binary is read once from node_modules instead, so reading never touches
 * the network.
 */

import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import sharp from 'sharp'
import { prepareZXingModule, readBarcodes, type ReaderOptions } from 'zxing-wasm/reader'

const READER_OPTIONS: ReaderOptions = {
  formats: ['QRCode'],
  tryHarder: true,
  tryRotate: true,
  tryInvert: true,
  tryDownscale: true,
  // A slip has one mini-QR; a few more covers a photo of a screen showing other codes.
  maxNumberOfSymbols: 8,
}

/**
 * Images with more pixels than a 4K phone screenshot are reduced before
 * decoding: the decoder's memory grows with the pixel count and is never
 * given back, and a small file can declare a huge image.
 */
const MAX_DIRECT_PIXELS = 2160 * 3840
/** Longest side of a reduced image: the mini-QR's modules stay several pixels wide. */
const REDUCED_LONG_SIDE = 3000

let ready: Promise<unknown> | undefined

function loadReader(): Promise<unknown> {
  ready ??= (async () => {
    const wasmPath = createRequire(import.meta.url).resolve('zxing-wasm/reader/zxing_reader.wasm')
    const bytes = await readFile(wasmPath)
    return prepareZXingModule({
      overrides: {
        wasmBinary: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
      },
      fireImmediately: true,
    })
  })().catch((error: unknown) => {
    // A failed load is retried by the next call instead of being cached.
    ready = undefined
    throw error
  })
  return ready
}

/** Grey pixels of a reduced copy, for images too large to decode directly. */
async function reducedImage(image: Uint8Array) {
  const { data, info } = await sharp(image, { failOn: 'none' })
    .resize(REDUCED_LONG_SIDE, REDUCED_LONG_SIDE, { fit: 'inside', withoutEnlargement: true })
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true })
  return {
    data: new Uint8ClampedArray(data.buffer, data.byteOffset, data.byteLength),
    width: info.width,
    height: info.height,
  }
}

/**
 * The texts of every QR code found in the image, in the decoder's order,
 * without duplicates; [] when there is none or the image cannot be decoded.
 */
export async function readQrTexts(image: Uint8Array): Promise<string[]> {
  await loadReader()
  let input: Parameters<typeof readBarcodes>[0] = image
  try {
    // Only the header is read here; the pixels are decoded once, by zxing.
    const { width, height } = await sharp(image).metadata()
    if (width * height > MAX_DIRECT_PIXELS) input = await reducedImage(image)
  } catch {
    return []
  }
  const results = await readBarcodes(input, READER_OPTIONS)
  const texts = results.filter((result) => result.isValid).map((result) => result.text)
  return [...new Set(texts)]
}
