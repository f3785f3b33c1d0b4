export type SlipMime = 'image/png' | 'image/jpeg'

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]

/**
 * PNG or JPEG by their magic bytes (the 8-byte PNG signature; JPEG's SOI
 * marker FF D8 followed by a marker FF), whatever the caller claims.
 */
export function slipMime(bytes: Uint8Array): SlipMime | null {
  if (bytes.length >= 8 && PNG_SIGNATURE.every((byte, index) => bytes[index] === byte)) {
    return 'image/png'
  }
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) {
    return 'image/jpeg'
  }
  return null
}

export function slipExtension(mime: SlipMime) {
  return mime === 'image/png' ? 'png' : 'jpg'
}

/** The image's key in the drive: one folder per order, one file per distinct image. */
export function slipStorageKey(orderUuid: string, sha256: string, mime: SlipMime) {
  return `slips/${orderUuid}/${sha256}.${slipExtension(mime)}`
}
