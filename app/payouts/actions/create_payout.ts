import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import payoutsConfig from '#config/payouts'
import type Merchant from '#merchants/models/merchant'
import Platform from '#merchants/models/platform'
import PayoutOrder, { type PayoutKind } from '#payouts/models/payout_order'
import { GatewayError } from '#exceptions/gateway_error'
import type { PayoutCreateInput } from '#merchant_api/validators/payout_create'
import { payoutConnector } from '#payouts/connectors/registry'
import { payoutFee } from '#payouts/fees'
import { isWithinOpenPeriod } from '#merchants/open_period'
import { reserveMerchantOrderId } from '#merchants/merchant_order_ids'
import { postLedgerTransaction } from '#ledger/ledger'
import { InsufficientBalanceError } from '#ledger/errors'
import { newPlatformOrderId } from '#core/order_ids'
import { formatAmount } from '#core/money'
import { withDeadlockRetry } from '#core/db_retry'
import { dispatch } from '#core/queue/queue_manager'
import { recordOrderEvent } from '#core/order_events'
import { merchantActor } from '#core/actor'
import logger from '@adonisjs/core/services/logger'

export const DUPLICATE_WINDOW_MINUTES = 3
export const holdSeconds = () => payoutsConfig.holdSeconds

/**
 * /withdraw/create and /thb-settlement/create. Checks: permission and
 * settlement hours (403), payout route (404), amount range and registered
 * settlement accounts (400); then one transaction that reserves the
 * settlement's merchant_order_id (409), locks the merchant's balance row,
 * applies the 3-minute duplicate rule (409), writes the order and takes the
 * hold of amount + fee with a conditional update (400 when the balance is
 * short, and nothing is written).
 */
export class CreatePayout {
  async execute(merchant: Merchant, kind: PayoutKind, input: PayoutCreateInput) {
    if (!merchant.withdrawEnabled) {
      throw GatewayError.permissionDenied('withdrawals are disabled for this merchant')
    }
    if (kind === 'settlement') {
      if (!merchant.settlementEnabled) {
        throw GatewayError.permissionDenied('settlements are disabled for this merchant')
      }
      const platform = await Platform.findOrFail(merchant.platformId)
      if (!isWithinOpenPeriod(platform.settlementOpenFrom, platform.settlementOpenTo)) {
        throw GatewayError.permissionDenied(
          `settlements are accepted from ${platform.settlementOpenFrom} to ${platform.settlementOpenTo} (GMT+7)`
        )
      }
    }
    const connector = payoutConnector(merchant.payoutRoute)
    if (!connector) {
      throw GatewayError.notFound(
        'partner configuration missing: no payout route is set for this merchant'
      )
    }

    const [min, max] =
      kind === 'withdraw'
        ? [merchant.withdrawMin, merchant.withdrawMax]
        : [merchant.settlementMin, merchant.settlementMax]
    if (input.amount < min) {
      throw GatewayError.invalidInputs(`amount must be at least ${formatAmount(min)}`)
    }
    if (max !== null && input.amount > max) {
      throw GatewayError.invalidInputs(`amount must be at most ${formatAmount(max)}`)
    }
    if (kind === 'settlement') await assertRegisteredSettlementAccount(merchant, input)

    const fee = payoutFee(merchant, kind, input.amount)
    const order = await withDeadlockRetry(() =>
      db.transaction(
        async (trx) => {
          if (kind === 'settlement') {
            await reserveMerchantOrderId(trx, merchant.id, input.merchantOrderId, 'settlement')
          }
          // Serialises this merchant's payouts: the duplicate rule below reads
          // what every other process committed before us.
          await trx.from('merchant_balances').where('merchant_id', merchant.id).forUpdate().first()

          const now = DateTime.utc()
          if (kind === 'withdraw' && merchant.withdrawDuplicateCheck) {
            const duplicate = await trx
              .from('payout_orders')
              .where({
                merchant_id: merchant.id,
                kind: 'withdraw',
                bank: input.bank,
                account_no: input.accountNo,
                amount: input.amount,
              })
              .where(
                'created_at',
                '>=',
                now.minus({ minutes: DUPLICATE_WINDOW_MINUTES }).toJSDate()
              )
              .first()
            if (duplicate) {
              throw GatewayError.duplicateEntry(
                `a withdrawal of ${formatAmount(input.amount)} to ${input.bank} ${input.accountNo} was made in the last ${DUPLICATE_WINDOW_MINUTES} minutes`
              )
            }
          }

          const created = await PayoutOrder.create(
            {
              platformOrderId: newPlatformOrderId(
                merchant.orderPrefix,
                kind === 'withdraw' ? 'W' : 'M',
                now
              ),
              merchantId: merchant.id,
              kind,
              merchantOrderId: input.merchantOrderId,
              amount: input.amount,
              fee,
              bank: input.bank,
              accountNo: input.accountNo,
              accountName: input.accountName,
              notifyUrl: input.notifyUrl,
              status: 'new',
              holdState: 'held',
              holdExpiresAt: now.plus({ seconds: holdSeconds() }),
              connector: connector.name,
              orderAt: now,
            },
            { client: trx }
          )

          try {
            await postLedgerTransaction(trx, {
              kind: `${kind}_hold`,
              reference: { type: kind, id: created.platformOrderId },
              legs: [
                { merchantId: merchant.id, account: 'available', amount: -(input.amount + fee) },
                { merchantId: merchant.id, account: 'frozen', amount: input.amount + fee },
              ],
              nonNegative: ['available'],
            })
          } catch (error) {
            if (!(error instanceof InsufficientBalanceError)) throw error
            throw GatewayError.invalidInputs(
              `insufficient balance: amount + fee = ${formatAmount(input.amount + fee)} exceeds the available balance`
            )
          }
          await recordOrderEvent(trx, {
            orderType: kind,
            orderId: created.id,
            from: null,
            to: 'new',
            actor: merchantActor(merchant.merchantId),
          })
          return created
        },
        { isolationLevel: 'read committed' }
      )
    )

    await scheduleAfterCreate(order)
    return order
  }
}

/**
 * The worker takes over from here. If Redis is unreachable the order is safe
 * in the database: the payout sweep dispatches it and releases its hold.
 */
async function scheduleAfterCreate(order: PayoutOrder) {
  try {
    await dispatch(
      'dispatchPayout',
      { payoutOrderId: order.id },
      { jobId: `payout-dispatch-${order.id}` }
    )
    await dispatch(
      'releasePayoutHold',
      { payoutOrderId: order.id },
      {
        jobId: `payout-hold-${order.id}`,
        delay: Math.max(0, order.holdExpiresAt.toMillis() - Date.now()),
      }
    )
  } catch (error) {
    logger.warn(
      { err: error, platform_order_id: order.platformOrderId },
      'payout jobs not scheduled; the sweep will pick the order up'
    )
  }
}

async function assertRegisteredSettlementAccount(merchant: Merchant, input: PayoutCreateInput) {
  const registered = await db.from('merchant_settlement_accounts').where('merchant_id', merchant.id)
  if (registered.length === 0) return
  const allowed = registered.some(
    (row) => row.bank === input.bank && row.account_no === input.accountNo
  )
  if (!allowed) {
    throw GatewayError.invalidInputs(
      `${input.bank} ${input.accountNo} is not one of this merchant's registered settlement accounts`
    )
  }
}
