/**
 * Reads a QR code out of PNG or JPEG bytes with zxing-wasm (zxing-cpp).
 *
 * zxing-wasm fetches its .wasm from a CDN unless told otherwise: here the
 * binary is read from node_modules, so tests never touch the network.
 */

import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { prepareZXingModule, readBarcodes } from 'zxing-wasm/reader'

let ready: Promise<unknown> | undefined

function loadReader(): Promise<unknown> {
  ready ??= (async () => {
    const wasmPath = createRequire(import.meta.url).resolve('zxing-wasm/reader/zxing_reader.wasm')
    const bytes = await readFile(wasmPath)
    const wasmBinary = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)
    return prepareZXingModule({
      overrides: { wasmBinary: wasmBinary as ArrayBuffer },
      fireImmediately: true,
    })
  })()
  return ready
}

/** The text of the first QR code found in the image, or null when there is none. */
export async function decodeQr(bytes: Buffer): Promise<string | null> {
  await loadReader()
  const results = await readBarcodes(new Uint8Array(bytes), {
    formats: ['QRCode'],
    tryHarder: true,
    maxNumberOfSymbols: 1,
  })
  return results.find((result) => result.isValid)?.text ?? null
}
