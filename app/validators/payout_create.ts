import vine, { SimpleMessagesProvider } from '@vinejs/vine'
import type { BankCode } from '#services/banks'
import {
  accountNoRule,
  amountRule,
  bankRule,
  httpsUrlRule,
  validateBody,
} from '#validators/payment_create'

/**
 * Body of /withdraw/create and /thb-settlement/create. The amount's format is
 * checked here; its per-merchant min and max in the create operation, which
 * knows the merchant.
 */
const payoutCreateSchema = vine.compile(
  vine.object({
    merchant_order_id: vine.string().regex(/^[A-Za-z0-9]{1,40}$/),
    amount: vine.any().use(amountRule({ min: 1 })),
    bank: vine.any().use(bankRule()),
    account_name: vine.string().trim().minLength(1).maxLength(120),
    account_no: vine.any().use(accountNoRule()),
    notify_url: vine.any().use(httpsUrlRule()).optional(),
  })
)

payoutCreateSchema.messagesProvider = new SimpleMessagesProvider({
  'required': '{{ field }} is required',
  'string': '{{ field }} must be a string',
  'merchant_order_id.regex': 'merchant_order_id must be 1 to 40 letters or digits',
  'account_name.minLength': 'account_name must not be empty',
  'account_name.maxLength': 'account_name must be at most 120 characters',
})

export interface PayoutCreateInput {
  merchantOrderId: string
  amount: number
  bank: BankCode
  accountName: string
  accountNo: string
  notifyUrl: string | null
}

export async function validatePayoutCreate(
  body: Record<string, unknown>
): Promise<PayoutCreateInput> {
  const valid: any = await validateBody(payoutCreateSchema, body)
  return {
    merchantOrderId: valid.merchant_order_id,
    amount: valid.amount,
    bank: valid.bank,
    accountName: valid.account_name,
    accountNo: valid.account_no,
    notifyUrl: valid.notify_url ?? null,
  }
}
