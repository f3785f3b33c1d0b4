import { DateTime } from 'luxon'
import { v7 as uuidv7 } from 'uuid'
import db from '@adonisjs/lucid/services/db'
import type Merchant from '#merchants/models/merchant'
import Platform from '#merchants/models/platform'
import PaymentOrder, { type PaymentType } from '#payments/models/payment_order'
import type DepositAccount from '#payments/models/deposit_account'
import type { DepositChannel } from '#payments/models/deposit_account'
import { GatewayError } from '#exceptions/gateway_error'
import type { PaymentCreateInput } from '#merchant_api/validators/payment_create'
import { countWithinLimits, eligibleAccounts, lockAccount } from '#payments/deposit_pool'
import { reserveSlot } from '#payments/deposit_slots'
import { isWithinOpenPeriod } from '#merchants/open_period'
import { billPaymentPayload, promptPayPayload } from '#payments/promptpay_qr'
import { depositProvider } from '#payments/providers/registry'
import { newPlatformOrderId } from '#core/order_ids'
import { reserveMerchantOrderId } from '#merchants/merchant_order_ids'
import { isDuplicateKey, withDeadlockRetry } from '#core/db_retry'
import { scheduleExpiry } from '#payments/actions/expire_payment'
import { recordOrderEvent } from '#core/order_events'
import { merchantActor } from '#core/actor'

const CHANNELS_BY_TYPE: Record<PaymentType, DepositChannel[]> = {
  QR: ['qr'],
  TRANSFER: ['transfer'],
  FLEX: ['qr', 'transfer', 'external'],
}

const PROVIDER_TIMEOUT_MS = 5000

type AttemptOutcome =
  | { ok: true; order: PaymentOrder }
  | { ok: false; reason: 'inactive' | 'limit' | 'no_slot' | 'provider_failed' }

/**
 * Creates a payment order for /payment/create, /payment/create-transfer and
 * /payment/create-flex (spec: Endpoints). Checks run in this order:
 * permission (403), partner configuration (404), the platform's payment page
 * domain for flex (400), killswitch and open period (503), then each eligible
 * deposit account in turn, in its own short transaction that reserves the
 * merchant_order_id (409 on a duplicate), share-locks the account, takes the
 * smallest free transfer_amount, writes the order and counts it against the
 * account's limits (a refusal rolls it all back). Nothing in it reads more
 * than a few rows, whatever the number of orders of the day.
 */
export class CreatePayment {
  async execute(merchant: Merchant, type: PaymentType, input: PaymentCreateInput) {
    if (!merchant.paymentEnabled) {
      throw GatewayError.permissionDenied('payments are disabled for this merchant')
    }
    if (!merchant.depositGroup) {
      throw GatewayError.notFound(
        'partner configuration missing: no deposit group is set for this merchant'
      )
    }
    const platform = await Platform.findOrFail(merchant.platformId)
    if (type === 'FLEX' && !platform.paymentPageDomain) {
      throw GatewayError.invalidInputs('payment_page_domain is not configured for this platform')
    }
    if (!platform.depositEnabled) {
      throw GatewayError.serviceUnavailable('the deposit API is switched off for this platform', {
        code: 'killswitch_off',
      })
    }
    if (!isWithinOpenPeriod(platform.depositOpenFrom, platform.depositOpenTo)) {
      throw GatewayError.serviceUnavailable(
        `deposits are accepted from ${platform.depositOpenFrom} to ${platform.depositOpenTo} (GMT+7)`,
        { code: 'outside_open_period' }
      )
    }

    const candidates = await eligibleAccounts(
      merchant.depositGroup,
      CHANNELS_BY_TYPE[type],
      input.amount
    )
    const refusals: string[] = []
    for (const candidate of candidates) {
      const outcome = await withDeadlockRetry(() => this.#attempt(merchant, type, input, candidate))
      if (outcome.ok) {
        await scheduleExpiry(outcome.order)
        return { order: outcome.order, platform }
      }
      refusals.push(outcome.reason)
    }

    if (refusals.length > 0 && refusals.every((reason) => reason === 'limit')) {
      throw new GatewayError(
        429,
        'channel-limit-reached',
        'every eligible deposit channel has reached its hourly or daily limit'
      )
    }
    throw GatewayError.serviceUnavailable(
      'no deposit account can take this order now; retry shortly'
    )
  }

  async #attempt(
    merchant: Merchant,
    type: PaymentType,
    input: PaymentCreateInput,
    candidate: DepositAccount
  ): Promise<AttemptOutcome> {
    try {
      return await db.transaction(
        async (trx) => {
          await reserveMerchantOrderId(trx, merchant.id, input.merchantOrderId)

          const account = await lockAccount(trx, candidate.id)
          if (!account) return rollback('inactive')

          // The order's created_at: the hour and day it counts in.
          const now = DateTime.utc()
          // Bill-payment QR accounts match by reference, so the amount needs no adjustment.
          const byReference = account.channel === 'qr' && !!account.billerId
          const transferAmount = byReference
            ? input.amount
            : await reserveSlot(trx, account, input.amount)
          if (transferAmount === null) return rollback('no_slot')
          // The limit counters are locked from here to the commit, so they are
          // counted as late as possible: after the order is written, except
          // that a provider is never called for an order the limits refuse.
          const callsProvider = account.channel === 'external'
          if (callsProvider && !(await countWithinLimits(trx, account, transferAmount, now))) {
            return rollback('limit')
          }

          const platformOrderId = newPlatformOrderId(merchant.orderPrefix, 'P', now)
          const uuid = uuidv7()
          const expireAt = now.plus({ seconds: merchant.orderTtlSeconds })
          const paymentReference = byReference ? platformOrderId.slice(4) : null

          let qrcode: string | null = null
          let external: { redirectUrl: string; providerReference: string } | null = null
          if (account.channel === 'qr') {
            qrcode = byReference
              ? billPaymentPayload({
                  billerId: account.billerId!,
                  ref1: paymentReference!,
                  amountSatang: transferAmount,
                })
              : promptPayPayload({ proxy: account.promptpayId ?? '', amountSatang: transferAmount })
          } else if (account.channel === 'external') {
            const provider = depositProvider(account.provider)
            if (!provider) return rollback('provider_failed')
            try {
              external = await provider.createPayment(
                {
                  account,
                  orderUuid: uuid,
                  platformOrderId,
                  amount: transferAmount,
                  expireAt: expireAt.toJSDate(),
                },
                PROVIDER_TIMEOUT_MS
              )
            } catch {
              return rollback('provider_failed')
            }
          }

          const order = await PaymentOrder.create(
            {
              platformOrderId,
              uuid,
              merchantId: merchant.id,
              merchantOrderId: input.merchantOrderId,
              paymentType: type,
              channel: account.channel,
              depositAccountId: account.id,
              amount: input.amount,
              transferAmount,
              slotAmount: byReference ? null : transferAmount,
              qrcode,
              paymentReference,
              externalReference: external?.providerReference ?? null,
              externalUrl: external?.redirectUrl ?? null,
              customerBank: input.bank,
              customerAccountName: input.accountName,
              customerAccountNo: input.accountNo,
              notifyUrl: input.notifyUrl,
              status: 'open',
              awaitingReview: false,
              orderAt: now,
              expireAt,
              createdAt: now,
              updatedAt: now,
            },
            { client: trx }
          )
          await recordOrderEvent(trx, {
            orderType: 'payment',
            orderId: order.id,
            from: null,
            to: 'open',
            actor: merchantActor(merchant.merchantId),
          })
          if (!callsProvider && !(await countWithinLimits(trx, account, transferAmount, now))) {
            return rollback('limit')
          }
          order.$setRelated('depositAccount', account)
          return { ok: true as const, order }
        },
        // Each statement sees the latest committed rows: what other processes
        // reserved on this account before we got its lock.
        { isolationLevel: 'read committed' }
      )
    } catch (error) {
      if (error instanceof RolledBack) return { ok: false, reason: error.reason }
      // A slot taken under our feet would be a bug in the locking; the unique
      // key refused it, so nothing was written and the next account is tried.
      if (isDuplicateKey(error)) return { ok: false, reason: 'no_slot' }
      throw error
    }
  }
}

class RolledBack extends Error {
  constructor(public reason: 'inactive' | 'limit' | 'no_slot' | 'provider_failed') {
    super(reason)
  }
}

/** Throwing makes Lucid roll the attempt back, merchant_order_id reservation included. */
function rollback(reason: RolledBack['reason']): never {
  throw new RolledBack(reason)
}
