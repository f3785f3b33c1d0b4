import vine, { errors, SimpleMessagesProvider } from '@vinejs/vine'
import type { FieldContext } from '@vinejs/vine/types'
import { GatewayError } from '#exceptions/gateway_error'
import { slipMime } from '#slips/slip_image'
import slipsConfig from '#config/slips'

const MAX_BYTES = slipsConfig.merchantApi.maxBytes
/** Standard base64 alphabet, `=` padding only at the end. */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

/** platform_order_id: 24 characters, marker P at index 3 (spec: Order identifier). */
const paymentOrderIdRule = vine.createRule((value, _options, field: FieldContext) => {
  const id = value as string
  if (id.length !== 24) {
    field.report('platform_order_id must be 24 characters', 'platform_order_id.length', field)
  } else if (!/^[A-Z0-9]{3}[PWM]\d{8}[A-Z0-9]{12}$/.test(id)) {
    field.report(
      'platform_order_id must be a 3-character prefix, a marker, YYYYMMDD and 12 letters or digits',
      'platform_order_id.format',
      field
    )
  } else if (id[3] !== 'P') {
    field.report(
      'platform_order_id must have marker P at index 3 (a payment order)',
      'platform_order_id.marker',
      field
    )
  }
})

/**
 * image_base64: plain base64 (no `data:` prefix) of at most 2,000,000 bytes
 * of PNG or JPG. The size is known from the text's length, so an image too
 * large is refused before it is decoded; a valid one is decoded once into the
 * Buffer the upload uses.
 */
const slipImageRule = vine.createRule((value, _options, field: FieldContext) => {
  const text = value as string
  if (/^data:/i.test(text)) {
    field.report(
      'image_base64 must be plain base64 without a data: prefix',
      'image_base64.data_url',
      field
    )
    return
  }
  if (text.length === 0 || text.length % 4 === 1 || !BASE64.test(text)) {
    field.report(
      'image_base64 must be base64 (A-Z, a-z, 0-9, + and /, = padding; no spaces or line breaks)',
      'image_base64.base64',
      field
    )
    return
  }
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0
  const decodedBytes = Math.floor((text.length * 3) / 4) - padding
  if (decodedBytes > MAX_BYTES) {
    field.report(
      `image_base64 must decode to at most ${MAX_BYTES} bytes (this one is ${decodedBytes})`,
      'image_base64.size',
      field
    )
    return
  }
  const image = Buffer.from(text, 'base64')
  if (!slipMime(image)) {
    field.report('image_base64 must be a PNG or JPG image', 'image_base64.image', field)
    return
  }
  field.mutate(image, field)
})

const slipUploadSchema = vine.compile(
  vine.object({
    platform_order_id: vine.string().use(paymentOrderIdRule()),
    image_base64: vine.string().use(slipImageRule()),
  })
)

const MESSAGES = new SimpleMessagesProvider({
  required: '{{ field }} is required',
  string: '{{ field }} must be a string',
})

export interface SlipUploadInput {
  platformOrderId: string
  image: Buffer
}

/**
 * The body of /slip/upload: every failing field named in one 422
 * invalid-inputs message (spec: slip upload input failures are 422).
 */
export async function validateSlipUpload(body: Record<string, unknown>): Promise<SlipUploadInput> {
  const data = { ...body }
  for (const key of ['platform_order_id', 'image_base64']) {
    if (data[key] === null || data[key] === '') delete data[key]
  }
  try {
    const valid = await slipUploadSchema.validate(data, { messagesProvider: MESSAGES })
    return {
      platformOrderId: valid.platform_order_id,
      image: valid.image_base64 as unknown as Buffer,
    }
  } catch (error) {
    if (!(error instanceof errors.E_VALIDATION_ERROR)) throw error
    const messages = error.messages as Array<{ message: string }>
    throw GatewayError.invalidInputs(messages.map((item) => item.message).join('; '), 422)
  }
}
