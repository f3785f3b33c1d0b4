import { DateTime } from 'luxon'
import type { ModelAttributes } from '@adonisjs/lucid/types/model'
import type Merchant from '#merchants/models/merchant'
import Platform from '#merchants/models/platform'
import PaymentOrder, { type PaymentType } from '#payments/models/payment_order'
import type DepositAccount from '#payments/models/deposit_account'
import type { DepositChannel } from '#payments/models/deposit_account'
import {
  ChannelLimitReached,
  DepositsOutsideOpenPeriod,
  DepositsSwitchedOff,
  NoDepositChannel,
  OperationDisabled,
  PartnerConfigurationMissing,
  PaymentPageNotConfigured,
} from '#core/refusals'
import type { PaymentInput } from '#payments/payment_input'
import {
  countOrderStatement,
  eligibleAccounts,
  isStaleAccount,
  lockAccountStatement,
  lockedAccount,
  unchangedAccountExpression,
} from '#payments/deposit_pool'
import { isLimitRefusal } from '#payments/deposit_usage_counters'
import {
  CHOSEN_SLOT,
  chooseSlotStatement,
  chosenSlot,
  heldAmounts,
  isAmountTaken,
  markSlotHeldByOrder,
  reserveSlotAbove,
  takeAmountStatement,
} from '#payments/deposit_slots'
import { isWithinOpenPeriod } from '#merchants/open_period'
import { billPaymentPayload, promptPayPayload } from '#payments/promptpay_qr'
import { depositProvider } from '#payments/providers/registry'
import { newPlatformOrderId } from '#core/order_ids'
import { newUuidV7 } from '#core/random'
import {
  asDuplicateMerchantOrderId,
  reserveMerchantOrderIdStatement,
} from '#merchants/merchant_order_ids'
import { isDuplicateKey, withDeadlockRetry } from '#core/db_retry'
import {
  isRequestTaken,
  RequestAlreadyProcessed,
  requestStatement,
  type RequestKey,
} from '#core/merchant_requests'
import { createdOrderEventStatement } from '#core/order_events'
import {
  batchTransaction,
  duplicateKeyName,
  insertStatement,
  markInserted,
  COMMIT,
  type Statement,
} from '#core/sql_batch'
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
 * permission, partner configuration, the platform's payment page domain for
 * flex, killswitch and open period (each a Refusal), then each eligible
 * deposit account in turn, in its own short transaction that reserves the
 * merchant_order_id (DuplicateMerchantOrderId), share-locks the account,
 * takes the smallest free transfer_amount, writes the order and counts it
 * against the account's limits (a refusal rolls it all back). Nothing in it reads more
 * than a few rows, whatever the number of orders of the day. In the common
 * case (the amount itself free, the pool's cached copy of the account still
 * matching its row) it is one round trip to the database, ending in the
 * COMMIT (statement batches, app/core/sql_batch.ts); otherwise two or more,
 * from the locked row.
 */
export class CreatePayment {
  /**
   * `request`: the merchant's request, written with the order so that it runs
   * once (RequestAlreadyProcessed when it already ran or runs now).
   */
  async execute(merchant: Merchant, type: PaymentType, input: PaymentInput, request?: RequestKey) {
    if (!merchant.paymentEnabled) {
      throw new OperationDisabled('payments are disabled for this merchant', 'payments')
    }
    if (!merchant.depositGroup) {
      throw new PartnerConfigurationMissing(
        'partner configuration missing: no deposit group is set for this merchant'
      )
    }
    const platform = await Platform.cached(merchant.platformId)
    if (type === 'FLEX' && !platform.paymentPageDomain) {
      throw new PaymentPageNotConfigured('payment_page_domain is not configured for this platform')
    }
    if (!platform.depositEnabled) {
      throw new DepositsSwitchedOff('the deposit API is switched off for this platform')
    }
    if (!isWithinOpenPeriod(platform.depositOpenFrom, platform.depositOpenTo)) {
      throw new DepositsOutsideOpenPeriod(
        `deposits are accepted from ${platform.depositOpenFrom} to ${platform.depositOpenTo} (GMT+7)`
      )
    }

    const candidates = await eligibleAccounts(
      merchant.depositGroup,
      CHANNELS_BY_TYPE[type],
      input.amount
    )
    const refusals: string[] = []
    for (const candidate of candidates) {
      // With the merchant's request row first in the batch, a re-run after an
      // unknown COMMIT either creates the order or finds the first run.
      const outcome = await withDeadlockRetry(
        () => this.#attempt(merchant, type, input, candidate, request),
        { idempotent: request !== undefined }
      )
      // No job is queued for the order's expiry: the worker's expiry sweep finds it by expire_at.
      if (outcome.ok) return { order: outcome.order, platform }
      refusals.push(outcome.reason)
    }

    if (refusals.length > 0 && refusals.every((reason) => reason === 'limit')) {
      throw new ChannelLimitReached(
        'every eligible deposit channel has reached its hourly or daily limit'
      )
    }
    throw new NoDepositChannel('no deposit account can take this order now; retry shortly')
  }

  async #attempt(
    merchant: Merchant,
    type: PaymentType,
    input: PaymentInput,
    candidate: DepositAccount,
    request: RequestKey | undefined,
    afterSlotRepair = false,
    fromLockedRow = false
  ): Promise<AttemptOutcome> {
    // The order's created_at: the hour and day it counts in.
    const now = DateTime.utc()
    // Made before anything is written: the request's row names the order by it.
    const platformOrderId = newPlatformOrderId(merchant.orderPrefix, 'P', now)
    const takesSlot = !matchesByReference(candidate)
    // The common case, one round trip: the order is built from the pool's
    // cached copy of the account and written with everything else and the
    // COMMIT; its insert refuses a copy that no longer matches the row. An
    // order the copy's limits refuse outright is left to the row to judge.
    const fromCache = !fromLockedRow && candidate.channel !== 'external'
    // On an account whose amounts are often held (a busy day), a transfer
    // account's amount is chosen inside that round trip, held or not
    // (chooseSlotStatement, heldAmounts). A PromptPay QR carries its amount
    // in the code made here, so it asks for the amount itself.
    const choosesSlot =
      fromCache &&
      takesSlot &&
      candidate.channel === 'transfer' &&
      heldAmounts.searchFirst(candidate.id)
    const cachedCount = fromCache
      ? countOrderStatement(candidate, input.amount, now, choosesSlot ? CHOSEN_SLOT : undefined)
      : null
    const choosing = choosesSlot && cachedCount !== null
    let transferAmount: number | null = input.amount
    try {
      return await batchTransaction(async (trx) => {
        // The merchant_order_id, the account share-locked, and the amount
        // itself as transfer_amount when the account adjusts amounts.
        // The request first: a duplicate of it waits here for this attempt's end.
        const opening = [
          ...(request ? [requestStatement(request, 'payment', platformOrderId)] : []),
          reserveMerchantOrderIdStatement(merchant.id, input.merchantOrderId),
          // The row itself only when it is read (not from the cached copy).
          lockAccountStatement(candidate.id, cachedCount ? 'id' : '*'),
          ...(choosing
            ? [chooseSlotStatement(candidate, input.amount, heldAmounts.windowWidth(candidate.id))]
            : takesSlot
              ? [takeAmountStatement(candidate.id, input.amount)]
              : []),
        ]
        const lockAt = request ? 2 : 1
        let account: DepositAccount | null
        try {
          if (cachedCount) {
            const order = newOrder(merchant, type, input, candidate, input.amount, takesSlot, {
              now,
              platformOrderId,
            })
            const results = await trx.run([
              ...opening,
              ...closing(merchant, order, cachedCount, {
                deposit_account_id: unchangedAccountExpression(candidate),
                ...(choosing ? { transfer_amount: CHOSEN_SLOT, slot_amount: CHOSEN_SLOT } : {}),
              }),
            ])
            if (choosing) {
              // The window is the opening's last statement.
              const chosen = chosenSlot(results[opening.length - 1])
              // The order's insert refuses a NULL transfer_amount: never here.
              if (chosen === null) throw new Error('the batch chose no transfer_amount')
              order.transferAmount = chosen
              order.slotAmount = chosen
              heldAmounts.record(candidate.id, chosen !== input.amount, chosen - input.amount)
            } else if (takesSlot) {
              heldAmounts.record(candidate.id, false)
            }
            return inserted(order, results[opening.length], candidate)
          }
          const results = await trx.run(opening)
          account = lockedAccount(results[lockAt])
        } catch (error) {
          if (request && isRequestTaken(error, request)) throw new RequestAlreadyProcessed(request)
          if (!takesSlot || !isAmountTaken(error)) {
            throw asDuplicateMerchantOrderId(error, input.merchantOrderId) ?? error
          }
          // The reservation and the lock were done; the amount is held: look above it.
          const [rows] = await trx.run([lockAccountStatement(candidate.id)])
          account = lockedAccount(rows)
          transferAmount = account ? await reserveSlotAbove(trx, account, input.amount) : null
          // How far above it the free amount was widens the next window.
          heldAmounts.record(
            candidate.id,
            true,
            transferAmount === null ? undefined : transferAmount - input.amount
          )
        }
        if (!account) return rollback('inactive')
        // An operator switched the account to or from bill payment between the
        // pool's read and this lock: the slot taken (or not) no longer fits.
        if (matchesByReference(account) === takesSlot) return rollback('inactive')
        if (transferAmount === null) return rollback('no_slot')

        const counting = countOrderStatement(account, transferAmount, now)
        if (!counting) return rollback('limit')
        // A provider is never called for an order the limits refuse: such an
        // order is counted first, and holds the counters' locks while it waits.
        const callsProvider = account.channel === 'external'
        if (callsProvider) await trx.run([counting])

        const order = newOrder(merchant, type, input, account, transferAmount, takesSlot, {
          now,
          platformOrderId,
        })
        if (callsProvider) {
          const provider = depositProvider(account.provider)
          if (!provider) return rollback('provider_failed')
          try {
            const external = await provider.createPayment(
              {
                account,
                orderUuid: order.uuid,
                platformOrderId: order.platformOrderId,
                amount: transferAmount,
                expireAt: order.expireAt.toJSDate(),
              },
              PROVIDER_TIMEOUT_MS
            )
            order.externalReference = external.providerReference
            order.externalUrl = external.redirectUrl
          } catch {
            return rollback('provider_failed')
          }
        }
        // The last round trip: the order, its event and its count, committed
        // with them, so the counters' row locks, which every create on the
        // account needs, are held only inside the server.
        const results = await trx.run(closing(merchant, order, callsProvider ? null : counting))
        return inserted(order, results[0], account)
      })
    } catch (error) {
      if (error instanceof RolledBack) return { ok: false, reason: error.reason }
      if (isLimitRefusal(error)) return { ok: false, reason: 'limit' }
      // The cached copy of the account is out of date (an operator's change
      // not yet seen by this process): once more, from the locked row.
      if (isStaleAccount(error)) {
        return this.#attempt(merchant, type, input, candidate, request, afterSlotRepair, true)
      }
      // The amount the batch chose is not known here: again from the locked
      // row, which takes (and repairs) an amount it knows.
      if (duplicateKeyName(error) === SLOT_KEY && choosing) {
        return this.#attempt(merchant, type, input, candidate, request, afterSlotRepair, true)
      }
      if (duplicateKeyName(error) === SLOT_KEY && transferAmount !== null && !afterSlotRepair) {
        // The order's unique slot key refused an amount whose slot row said
        // free (only a hand edit of the tables does that): the row is marked
        // held, and the attempt runs again once, taking another amount.
        await markSlotHeldByOrder(candidate.id, transferAmount)
        return this.#attempt(merchant, type, input, candidate, request, true, fromLockedRow)
      }
      // Any other duplicate (a slot taken under our feet would be a bug in the
      // locking): nothing was written and the next account is tried.
      if (isDuplicateKey(error)) return { ok: false, reason: 'no_slot' }
      throw error
    }
  }
}

/**
 * A new open order on `account` for `transferAmount` (its QR payload
 * included). Exported for bench/create_statements.ts.
 */
export function newOrder(
  merchant: Merchant,
  type: PaymentType,
  input: PaymentInput,
  account: DepositAccount,
  transferAmount: number,
  takesSlot: boolean,
  { now, platformOrderId }: { now: DateTime; platformOrderId: string }
) {
  const paymentReference = takesSlot ? null : platformOrderId.slice(4)
  let qrcode: string | null = null
  if (account.channel === 'qr') {
    qrcode = takesSlot
      ? promptPayPayload({ proxy: account.promptpayId ?? '', amountSatang: transferAmount })
      : billPaymentPayload({
          billerId: account.billerId!,
          ref1: paymentReference!,
          amountSatang: transferAmount,
        })
  }
  // The attributes set at once, as Lucid's hydration does: fill() would set
  // each through the model's proxy (a twentieth of a create's CPU).
  const order = new PaymentOrder()
  order.$attributes = {
    platformOrderId,
    uuid: newUuidV7(),
    merchantId: merchant.id,
    merchantOrderId: input.merchantOrderId,
    paymentType: type,
    channel: account.channel,
    depositAccountId: account.id,
    amount: input.amount,
    transferAmount,
    slotAmount: takesSlot ? transferAmount : null,
    qrcode,
    paymentReference,
    externalReference: null,
    externalUrl: null,
    customerBank: input.bank,
    customerAccountName: input.accountName,
    customerAccountNo: input.accountNo,
    notifyUrl: input.notifyUrl,
    status: 'open',
    awaitingReview: false,
    orderAt: now,
    expireAt: now.plus({ seconds: merchant.orderTtlSeconds }),
    createdAt: now,
    updatedAt: now,
  } satisfies Partial<ModelAttributes<PaymentOrder>>
  return order
}

/**
 * The statements that end a create: the order (with `expressions` for
 * columns the server decides: its deposit_account_id as a guard, its chosen
 * transfer_amount), its event, its count, the COMMIT.
 */
function closing(
  merchant: Merchant,
  order: PaymentOrder,
  counting: Statement | null,
  expressions: Record<string, Statement> = {}
) {
  return [
    insertStatement(order, expressions),
    createdOrderEventStatement({
      orderType: 'payment',
      to: 'open',
      actor: merchantActor(merchant.merchantId),
    }),
    ...(counting ? [counting] : []),
    COMMIT,
  ]
}

function inserted(order: PaymentOrder, result: { insertId: number }, account: DepositAccount) {
  markInserted(order, result)
  order.$setRelated('depositAccount', account)
  return { ok: true as const, order }
}

/** Bill-payment QR accounts match by reference, so the amount needs no adjustment. */
function matchesByReference(account: DepositAccount) {
  return account.channel === 'qr' && !!account.billerId
}

/** payment_orders' unique key on (deposit_account_id, slot_amount). */
const SLOT_KEY = 'payment_orders_deposit_account_id_slot_amount_unique'

class RolledBack extends Error {
  constructor(public reason: 'inactive' | 'limit' | 'no_slot' | 'provider_failed') {
    super(reason)
  }
}

/** Throwing makes Lucid roll the attempt back, merchant_order_id reservation included. */
function rollback(reason: RolledBack['reason']): never {
  throw new RolledBack(reason)
}
