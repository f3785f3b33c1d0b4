import vine, { errors, SimpleMessagesProvider } from '@vinejs/vine'
import type { FieldContext } from '@vinejs/vine/types'
import { GatewayError } from '#exceptions/gateway_error'
import { parseAmount, formatAmount } from '#core/money'
import { isBankCode } from '#core/banks'
import type { PaymentInput } from '#payments/payment_input'

export const MIN_PAYMENT_AMOUNT = 2000 // 20.00 THB

/** amount: number or string, at most 2 decimals; becomes satang. */
export const amountRule = vine.createRule<{ min: number; max?: number }>(
  (value, options, field: FieldContext) => {
    const satang = parseAmount(value)
    if (satang === null) {
      field.report('amount must be a number or a string with at most 2 decimals', 'amount', field)
      return
    }
    if (satang < options.min) {
      field.report(`amount must be at least ${formatAmount(options.min)}`, 'amount.min', field)
      return
    }
    if (options.max !== undefined && satang > options.max) {
      field.report(`amount must be at most ${formatAmount(options.max)}`, 'amount.max', field)
      return
    }
    field.mutate(satang, field)
  }
)

/** account_no: non-digits are stripped, then 10 to 15 digits must remain. */
export const accountNoRule = vine.createRule((value, _options, field: FieldContext) => {
  if (typeof value !== 'string' && typeof value !== 'number') {
    field.report('account_no must be a string of 10 to 15 digits', 'account_no', field)
    return
  }
  const digits = String(value).replace(/\D/g, '')
  if (digits.length < 10 || digits.length > 15) {
    field.report('account_no must have 10 to 15 digits', 'account_no', field)
    return
  }
  field.mutate(digits, field)
})

export const bankRule = vine.createRule((value, _options, field: FieldContext) => {
  if (!isBankCode(value)) field.report('invalid bank code', 'bank_code', field)
})

/** notify_url: an absolute https:// URL with a host and no embedded credentials. */
export const httpsUrlRule = vine.createRule((value, _options, field: FieldContext) => {
  let url: URL | undefined
  try {
    url = typeof value === 'string' && value.length <= 2048 ? new URL(value) : undefined
  } catch {}
  if (!url || url.protocol !== 'https:' || !url.hostname || url.username || url.password) {
    field.report(`${field.name} must be a well-formed HTTPS URL`, 'https_url', field)
  }
})

/**
 * The order body shared by the payment, withdraw and settlement create
 * endpoints (same fields, same rules); only the amount's lower bound differs.
 */
export function orderBodyValidator(minAmount: number) {
  const validator = vine.compile(
    vine.object({
      merchant_order_id: vine.string().regex(/^[A-Za-z0-9]{1,40}$/),
      amount: vine.any().use(amountRule({ min: minAmount })),
      bank: vine.any().use(bankRule()),
      account_name: vine.string().trim().minLength(1).maxLength(120),
      account_no: vine.any().use(accountNoRule()),
      notify_url: vine.any().use(httpsUrlRule()).optional(),
    })
  )
  validator.messagesProvider = new SimpleMessagesProvider({
    'required': '{{ field }} is required',
    'string': '{{ field }} must be a string',
    'merchant_order_id.regex': 'merchant_order_id must be 1 to 40 letters or digits',
    'account_name.minLength': 'account_name must not be empty',
    'account_name.maxLength': 'account_name must be at most 120 characters',
  })
  return validator
}

const paymentCreateSchema = orderBodyValidator(MIN_PAYMENT_AMOUNT)

/**
 * Validates the body of the three payment create endpoints. Every failing
 * field is named in one 400 invalid-inputs message; an unknown bank code alone
 * is the spec's 422 `invalid bank code`.
 */
export async function validatePaymentCreate(body: Record<string, unknown>): Promise<PaymentInput> {
  return toInput(await validateBody(paymentCreateSchema, body))
}

export async function validateBody<T>(
  schema: { validate: (data: unknown) => Promise<T> },
  body: Record<string, unknown>
): Promise<T> {
  // null notify_url is "omitted", as an optional field should be.
  const data = { ...body }
  for (const [key, value] of Object.entries(data)) if (value === null) delete data[key]
  try {
    return await schema.validate(data)
  } catch (error) {
    if (!(error instanceof errors.E_VALIDATION_ERROR)) throw error
    const messages = error.messages as Array<{ field: string; message: string; rule: string }>
    if (messages.length > 0 && messages.every((item) => item.rule === 'bank_code')) {
      throw GatewayError.invalidInputs('invalid bank code', 422)
    }
    throw GatewayError.invalidInputs(messages.map((item) => item.message).join('; '))
  }
}

function toInput(valid: any): PaymentInput {
  return {
    merchantOrderId: valid.merchant_order_id,
    amount: valid.amount,
    bank: valid.bank,
    accountName: valid.account_name,
    accountNo: valid.account_no,
    notifyUrl: valid.notify_url ?? null,
  }
}
