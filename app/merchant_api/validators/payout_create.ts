import type { PayoutInput } from '#payouts/payout_input'
import { orderBodyValidator, validateBody } from '#merchant_api/validators/payment_create'

/**
 * Body of /withdraw/create and /thb-settlement/create. The amount's format is
 * checked here; its per-merchant min and max in the create operation, which
 * knows the merchant.
 */
const payoutCreateSchema = orderBodyValidator(1)

export async function validatePayoutCreate(body: Record<string, unknown>): Promise<PayoutInput> {
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
