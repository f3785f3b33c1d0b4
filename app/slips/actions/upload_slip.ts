import { createHash } from 'node:crypto'
import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import drive from '@adonisjs/drive/services/main'
import logger from '@adonisjs/core/services/logger'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import PaymentOrder from '#payments/models/payment_order'
import DepositAccount from '#payments/models/deposit_account'
import { flagForReview } from '#payments/review_flag'
import Merchant from '#merchants/models/merchant'
import PaymentSlip, { type SlipSource } from '#slips/models/payment_slip'
import { slipMime, slipStorageKey } from '#slips/slip_image'
import { checkSlip, readSlip } from '#slips/slip_check'
import {
  InvalidSlipImage,
  SlipLimitReached,
  SlipsNotAccepted,
  SlipUploadTooSoon,
} from '#core/refusals'
import type { Actor } from '#core/actor'
import { linkRequest, recordRequest, type RequestKey } from '#core/merchant_requests'
import slipsConfig from '#config/slips'
import paymentsConfig from '#config/payments'
import { inTransaction } from '#core/transaction'

export type { SlipSource }

export interface UploadSlipInput {
  order: PaymentOrder
  image: Uint8Array
  source: SlipSource
  actor: Actor
  /** The merchant's request, written with the slip so that it runs once. */
  request?: RequestKey
}

export interface UploadSlipResult {
  slip: PaymentSlip
  verificationMsg: string
}

/**
 * Attaches a payment slip to its order. The image is checked (PNG or JPG by
 * its bytes, the source's size limit) and the source's per-order limits are
 * applied; then its QR is read and the slip verified against the order
 * before anything is written. The image goes to the drive, and one
 * transaction, with the order row locked, applies the limits again (two
 * uploads at once: one is accepted), stores the slip, flags the order for
 * operator review and writes the order event and the audit row. A refused
 * upload leaves no file behind and does not count toward any limit.
 *
 * Money never moves and the order's status does not change; an open order
 * awaiting review does not expire until the review ends.
 */
export async function uploadSlip(input: UploadSlipInput): Promise<UploadSlipResult> {
  const { image, source, actor } = input
  const mime = slipMime(image)
  if (!mime) throw new InvalidSlipImage('the image must be a PNG or JPG file')
  const maxBytes = limitsOf(source).maxBytes
  if (image.byteLength > maxBytes) {
    throw new InvalidSlipImage(`the image must be at most ${maxBytes} bytes`)
  }
  const merchant = await Merchant.findOrFail(input.order.merchantId)
  // Cheap refusals before the image is decoded; applied again under the lock.
  await assertUploadAllowed(db.connection(), input.order, merchant, source)

  const reading = await readSlip(image)
  const sha256 = createHash('sha256').update(image).digest('hex')
  const account = await DepositAccount.findOrFail(input.order.depositAccountId)
  const check = await checkSlip({ reading, sha256, target: { order: input.order, account } })
  const { verification } = check

  const storageKey = slipStorageKey(input.order.uuid, sha256, mime)
  await drive.use().put(storageKey, image)
  try {
    const slip = await inTransaction(
      async (trx) => {
        // The request first: a duplicate of it waits here for this one's end.
        if (input.request) await recordRequest(trx, input.request, 'slip')
        const order = await PaymentOrder.query({ client: trx })
          .where('id', input.order.id)
          .forUpdate()
          .firstOrFail()
        await assertUploadAllowed(trx, order, merchant, source)
        const created = await PaymentSlip.create(
          {
            paymentOrderId: order.id,
            merchantId: order.merchantId,
            source,
            storageKey,
            sha256,
            byteSize: image.byteLength,
            mime,
            qrText: reading.kind === 'no_qr' ? null : reading.qrText.slice(0, 4096),
            sendingBank: reading.kind === 'slip' ? reading.sendingBank || null : null,
            transRef: reading.kind === 'slip' ? reading.transRef : null,
            verificationStatus: verification.status,
            verificationMsg: verification.message,
            verification: check.record,
            checkedAt: DateTime.utc(),
          },
          { client: trx }
        )
        if (input.request) await linkRequest(trx, input.request, created.id)
        await flagForReview(trx, order, {
          actor,
          reason: `slip ${created.id} uploaded (${source}): ${verification.message}`,
          audit: {
            action: 'slip.upload',
            details: {
              slip_id: created.id,
              source,
              sha256,
              byte_size: image.byteLength,
              mime,
              trans_ref: created.transRef,
              verification_status: verification.status,
              verification_msg: verification.message,
            },
          },
        })
        return created
      },
      { isolationLevel: 'read committed', idempotent: input.request !== undefined }
    )
    return { slip, verificationMsg: verification.message }
  } catch (error) {
    await discardImage(input.order.id, storageKey)
    throw error
  }
}

function limitsOf(source: SlipSource) {
  return source === 'merchant_api' ? slipsConfig.merchantApi : paymentsConfig.paymentPageSlips
}

/**
 * The order takes slips (open, young enough) and the source's per-order
 * limits allow one more: for the merchant API one accepted upload per 5
 * minutes and none before the merchant's slip_upload_wait_seconds have
 * passed since creation; for the payment page a cooldown and a cap. Only
 * accepted uploads of the same source count.
 */
async function assertUploadAllowed(
  client: QueryClientContract,
  order: PaymentOrder,
  merchant: Merchant,
  source: SlipSource,
  now: DateTime = DateTime.utc()
) {
  if (order.status !== 'open') {
    throw new SlipsNotAccepted(
      `payment order ${order.platformOrderId} is ${order.status}: slips are accepted for open orders only`
    )
  }
  const maxAgeDays =
    source === 'merchant_api'
      ? slipsConfig.merchantApi.maxOrderAgeDays
      : paymentsConfig.paymentPageSlips.maxOrderAgeDays
  if (order.orderAt < now.minus({ days: maxAgeDays })) {
    throw new SlipsNotAccepted(
      `payment order ${order.platformOrderId} is older than ${maxAgeDays} days: slips are no longer accepted`
    )
  }

  const slips = PaymentSlip.query({ client })
    .where('payment_order_id', order.id)
    .where('source', source)
  if (source === 'merchant_api') {
    const waitSeconds = merchant.slipUploadWaitSeconds
    const openFrom = order.orderAt.plus({ seconds: waitSeconds })
    if (now < openFrom) {
      throw new SlipUploadTooSoon(
        `slips for this order are accepted from ${waitSeconds} seconds after its creation; retry in ${secondsUntil(openFrom, now)} s`,
        secondsUntil(openFrom, now)
      )
    }
    const latest = await slips.clone().orderBy('created_at', 'desc').first()
    const next = latest?.createdAt.plus({ seconds: slipsConfig.merchantApi.reuploadSeconds })
    if (next && now < next) {
      throw new SlipUploadTooSoon(
        `a slip was uploaded for this order less than 5 minutes ago; retry in ${secondsUntil(next, now)} s`,
        secondsUntil(next, now)
      )
    }
    return
  }

  const page = paymentsConfig.paymentPageSlips
  const [latest, count] = await Promise.all([
    slips.clone().orderBy('created_at', 'desc').first(),
    slips.clone().count('* as total').first(),
  ])
  if (Number(count?.$extras.total ?? 0) >= page.maxPerOrder) {
    throw new SlipLimitReached(`at most ${page.maxPerOrder} slips are accepted for one order`)
  }
  const next = latest?.createdAt.plus({ seconds: page.cooldownSeconds })
  if (next && now < next) {
    throw new SlipUploadTooSoon(
      `a slip was uploaded for this order moments ago; retry in ${secondsUntil(next, now)} s`,
      secondsUntil(next, now)
    )
  }
}

function secondsUntil(at: DateTime, now: DateTime) {
  return Math.max(1, Math.ceil(at.diff(now, 'seconds').seconds))
}

/**
 * Removes the image of a refused upload, unless an accepted slip of the
 * order holds the same image (same key): a concurrent upload of the same
 * file that won, or an earlier one.
 */
async function discardImage(orderId: number, storageKey: string) {
  try {
    const kept = await PaymentSlip.query()
      .where('payment_order_id', orderId)
      .where('storage_key', storageKey)
      .first()
    if (!kept) await drive.use().delete(storageKey)
  } catch (error) {
    logger.warn({ err: error, storage_key: storageKey }, 'image of a refused slip not removed')
  }
}
