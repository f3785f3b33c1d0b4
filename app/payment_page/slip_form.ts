import type { HttpContext } from '@adonisjs/core/http'
import { slipMime } from '#slips/slip_image'

/** What a customer's slip form carried. */
export type SlipForm =
  | { kind: 'image'; bytes: Uint8Array }
  | { kind: 'missing' }
  | { kind: 'too-big' }
  | { kind: 'not-image' }

/** Room for the multipart boundaries, headers and the small fields around the file. */
const FORM_OVERHEAD_BYTES = 64 * 1024

/**
 * Reads the `slip` file of the payment page's multipart form into memory
 * (no temporary file, so nothing is left on disk by a refused upload).
 * The route processes its multipart body by hand (config/bodyparser.ts
 * `processManually`), so the limit here is this route's alone: file bytes
 * over `maxBytes` stop the read and the rest of the body is discarded.
 */
export async function readSlipForm(
  request: HttpContext['request'],
  maxBytes: number
): Promise<SlipForm> {
  // A body announced as far too big is refused before a byte of it is read.
  const declared = Number(request.header('content-length') ?? 0)
  if (declared > maxBytes + FORM_OVERHEAD_BYTES) return { kind: 'too-big' }
  if (request.bodyType !== 'multipart') return { kind: 'missing' }

  let image: Buffer | null = null
  let claimed = false
  request.multipart.onFile('*', { deferValidations: true }, async (part, report) => {
    // Only the first `slip` file is kept; any other file still counts toward the limit.
    const keep = part.name === 'slip' && !claimed
    if (keep) claimed = true
    const chunks: Buffer[] = []
    for await (const chunk of part) {
      await report(chunk)
      if (keep) chunks.push(chunk)
    }
    if (keep) image = Buffer.concat(chunks)
  })
  try {
    await request.multipart.process({ limit: maxBytes, maxFields: 16 })
  } catch (error) {
    const code = (error as { code?: string }).code
    if (code === 'E_REQUEST_ENTITY_TOO_LARGE') return { kind: 'too-big' }
    if (code === 'E_INVALID_MULTIPART_REQUEST') return { kind: 'missing' }
    throw error
  }
  const bytes = image as Buffer | null
  if (!bytes || bytes.length === 0) return { kind: 'missing' }
  // By the file's first bytes: its name and declared type are the sender's to choose.
  if (!slipMime(bytes)) return { kind: 'not-image' }
  return { kind: 'image', bytes }
}
