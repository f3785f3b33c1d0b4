import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type PaymentOrder from '#payments/models/payment_order'
import { formatGatewayDateTime } from '#core/clock'
import { ActionError } from '#core/validation'
import { byWhom, latestOrderEvent } from '#core/already_done'

/**
 * An approval refused because the order it would move money on is frozen.
 * Unlike the other refusals on approval, the request is not spent: it stays
 * pending (nothing was written) and can be approved once the order is
 * unfrozen, or rejected.
 */
export class FrozenOrderRefusal extends ActionError {
  constructor(
    public platformOrderId: string,
    message: string
  ) {
    super([{ field: null, message }])
    this.name = 'FrozenOrderRefusal'
  }
}

/**
 * A freeze stops money: approving a request that would credit a frozen order
 * (mark it paid, approve its slip, attach a statement line to it) is refused
 * while the freeze lasts. `order` must have been read under its row lock in
 * the transaction that would credit it, so a freeze racing the approval is
 * either seen here or waits for the credit to commit (then it freezes a paid
 * order): exactly one outcome.
 */
export async function assertNotFrozenForApproval(
  trx: TransactionClientContract,
  order: PaymentOrder,
  requestId: number
) {
  if (order.status !== 'freeze') return
  // The freeze itself, not a later event that leaves it frozen (a review hold).
  const event = await latestOrderEvent(trx, 'payment', order.id, {
    to: 'freeze',
    notFrom: 'freeze',
  })
  const by = event
    ? ` (by ${byWhom(event.actor)} at ${formatGatewayDateTime(event.createdAt)?.slice(0, 16)} GMT+7)`
    : ''
  throw new FrozenOrderRefusal(
    order.platformOrderId,
    `${order.platformOrderId} is frozen${by}: unfreeze it before approving; ` +
      `approval request #${requestId} stays pending and nothing was paid`
  )
}
