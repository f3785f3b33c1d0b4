import { DateTime } from 'luxon'
import payoutsConfig from '#config/payouts'
import type Merchant from '#merchants/models/merchant'
import Platform from '#merchants/models/platform'
import PayoutOrder, { type PayoutKind } from '#payouts/models/payout_order'
import {
  InsufficientBalance,
  InvalidOrderInput,
  OperationDisabled,
  PartnerConfigurationMissing,
  SettlementsOutsideOpenPeriod,
} from '#core/refusals'
import type { PayoutInput } from '#payouts/payout_input'
import { payoutConnector } from '#payouts/connectors/registry'
import { payoutFee } from '#payouts/fees'
import { isWithinOpenPeriod } from '#merchants/open_period'
import {
  asDuplicateMerchantOrderId,
  reserveMerchantOrderIdStatement,
} from '#merchants/merchant_order_ids'
import { ledgerRefusal, postingStatements } from '#ledger/ledger'
import {
  isRequestTaken,
  RequestAlreadyProcessed,
  requestStatement,
  type RequestKey,
} from '#core/merchant_requests'
import { holdPosting } from '#ledger/recipes'
import { asDuplicateWithdrawal, recordWithdrawalStatement } from '#payouts/duplicate_withdrawals'
import { InsufficientBalanceError } from '#ledger/errors'
import { newPlatformOrderId } from '#core/order_ids'
import { formatAmount } from '#core/money'
import { withDeadlockRetry } from '#core/db_retry'
import { dispatch } from '#core/queue/queue_manager'
import { orderJobId } from '#core/queue/job_ids'
import { createdOrderEventStatement } from '#core/order_events'
import { batchTransaction, insertStatement, markInserted, COMMIT } from '#core/sql_batch'
import { merchantActor } from '#core/actor'
import logger from '@adonisjs/core/services/logger'
import { settlementDestinationRefusal } from '#merchants/settlement_accounts'

export const holdSeconds = () => payoutsConfig.holdSeconds

/**
 * /withdraw/create and /thb-settlement/create. Checks: permission and
 * settlement hours, payout route, amount range and registered settlement
 * accounts (each a Refusal); then one transaction that reserves the
 * settlement's merchant_order_id (DuplicateMerchantOrderId) or applies the
 * 3-minute duplicate rule of withdrawals (DuplicateWithdrawal), writes the
 * order and takes the hold of amount + fee with a conditional update
 * (InsufficientBalance when the balance is short, and nothing is written),
 * in one statement batch ending in the COMMIT
 * (app/core/sql_batch.ts).
 */
export class CreatePayout {
  /**
   * `request`: the merchant's request, written with the order so that it runs
   * once (RequestAlreadyProcessed when it already ran or runs now).
   */
  async execute(merchant: Merchant, kind: PayoutKind, input: PayoutInput, request?: RequestKey) {
    if (!merchant.withdrawEnabled) {
      throw new OperationDisabled('withdrawals are disabled for this merchant', 'withdrawals')
    }
    if (kind === 'settlement') {
      if (!merchant.settlementEnabled) {
        throw new OperationDisabled('settlements are disabled for this merchant', 'settlements')
      }
      const platform = await Platform.cached(merchant.platformId)
      if (!isWithinOpenPeriod(platform.settlementOpenFrom, platform.settlementOpenTo)) {
        throw new SettlementsOutsideOpenPeriod(
          `settlements are accepted from ${platform.settlementOpenFrom} to ${platform.settlementOpenTo} (GMT+7)`
        )
      }
    }
    const connector = payoutConnector(merchant.payoutRoute)
    if (!connector) {
      throw new PartnerConfigurationMissing(
        'partner configuration missing: no payout route is set for this merchant'
      )
    }

    const [min, max] =
      kind === 'withdraw'
        ? [merchant.withdrawMin, merchant.withdrawMax]
        : [merchant.settlementMin, merchant.settlementMax]
    if (input.amount < min) {
      throw new InvalidOrderInput(`amount must be at least ${formatAmount(min)}`)
    }
    if (max !== null && input.amount > max) {
      throw new InvalidOrderInput(`amount must be at most ${formatAmount(max)}`)
    }
    if (kind === 'settlement') await assertRegisteredSettlementAccount(merchant, input)

    const fee = payoutFee(merchant, kind, input.amount)
    // With the merchant's request row first in the batch, a re-run after an
    // unknown COMMIT either creates the order or finds the first run.
    const order = await withDeadlockRetry(
      () =>
        batchTransaction(async (trx) => {
          const now = DateTime.utc()
          const created = new PayoutOrder().fill({
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
          })
          const hold = holdPosting({
            kind,
            platformOrderId: created.platformOrderId,
            merchantId: merchant.id,
            amount: input.amount,
            fee,
          })
          const holdStatements = postingStatements(hold)

          // One round trip, ending in the COMMIT: the duplicate rule's row (a
          // settlement's merchant_order_id, a withdrawal's bank, account and
          // amount), the order, its event and the hold of amount + fee. The
          // merchant's balance row, which every payout of the merchant needs,
          // is locked and released inside the server.
          try {
            const results = await trx.run([
              // The request first: a duplicate of it waits here for this one's end.
              ...(request ? [requestStatement(request, kind, created.platformOrderId)] : []),
              kind === 'settlement'
                ? reserveMerchantOrderIdStatement(merchant.id, input.merchantOrderId, 'settlement')
                : recordWithdrawalStatement(
                    merchant.id,
                    input,
                    now,
                    merchant.withdrawDuplicateCheck
                  ),
              insertStatement(created),
              createdOrderEventStatement({
                orderType: kind,
                to: 'new',
                actor: merchantActor(merchant.merchantId),
              }),
              ...holdStatements,
              COMMIT,
            ])
            return markInserted(created, results[request ? 2 : 1])
          } catch (error) {
            if (request && isRequestTaken(error, request))
              throw new RequestAlreadyProcessed(request)
            const refusal =
              asDuplicateMerchantOrderId(error, input.merchantOrderId) ??
              asDuplicateWithdrawal(error, input) ??
              ledgerRefusal(error, hold, merchant.id)
            if (refusal instanceof InsufficientBalanceError) {
              throw new InsufficientBalance(
                `insufficient balance: amount + fee = ${formatAmount(input.amount + fee)} exceeds the available balance`
              )
            }
            throw refusal ?? error
          }
        }),
      { idempotent: request !== undefined }
    )

    await scheduleAfterCreate(order)
    return order
  }
}

/**
 * The worker takes over from here. If Redis is unreachable the order is safe
 * in the database: the payout sweep dispatches it. No job is queued for the
 * hold: the hold sweep releases it once overdue (releaseOverdueHolds).
 */
async function scheduleAfterCreate(order: PayoutOrder) {
  try {
    // Job id from the platform_order_id, never the auto-increment id (see orderJobId).
    await dispatch(
      'dispatchPayout',
      { payoutOrderId: order.id },
      { jobId: orderJobId('payout-dispatch', order.platformOrderId) }
    )
  } catch (error) {
    logger.warn(
      { err: error, platform_order_id: order.platformOrderId },
      'payout job not scheduled; the sweep will pick the order up'
    )
  }
}

async function assertRegisteredSettlementAccount(merchant: Merchant, input: PayoutInput) {
  const refused = await settlementDestinationRefusal(merchant.id, input.bank, input.accountNo)
  if (refused) throw new InvalidOrderInput(refused)
}
