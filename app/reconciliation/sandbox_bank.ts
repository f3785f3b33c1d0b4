import { DateTime } from 'luxon'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import QRCode from 'qrcode'
import type PaymentOrder from '#models/payment_order'
import DepositAccount from '#models/deposit_account'
import { importStatement } from '#reconciliation/import_statement'
import { crc16ccittFalse } from '#deposits/promptpay_qr'
import { BANKS, isBankCode } from '#services/banks'
import { randomString, UPPER_ALPHANUMERIC } from '#services/random'

function tlv(tag: string, value: string) {
  return `${tag}${String(value.length).padStart(2, '0')}${value}`
}

/**
 * The "mini-QR" printed on Thai mobile-banking slips: tag 00 (API id 000001,
 * sending bank's 3-digit code, transaction reference), tag 51 TH, tag 91 CRC.
 * It carries no amount, receiver or time: a verifier looks those up.
 */
export function slipMiniQrPayload(sendingBankCode: string, transRef: string) {
  const body =
    tlv('00', tlv('00', '000001') + tlv('01', sendingBankCode) + tlv('02', transRef)) +
    tlv('51', 'TH')
  return `${body}9104${crc16ccittFalse(`${body}9104`)}`
}

/**
 * The sandbox bank receives a customer's transfer for a payment order: the
 * transfer appears as a line of the deposit account's statement and goes
 * through the same import and matching as a real statement. A slip image of
 * the transfer (its mini-QR) is written to `slipDirectory`.
 */
export async function sandboxPay(
  order: PaymentOrder,
  options: { amount?: number; slipDirectory: string; actor: string }
) {
  const account = await DepositAccount.findOrFail(order.depositAccountId)
  const amount = options.amount ?? order.transferAmount
  const transRef = `${DateTime.utc().toFormat('yyyyLLdd')}${randomString(12, UPPER_ALPHANUMERIC)}`
  const summary = await importStatement(
    account,
    'sandbox',
    `sandbox-${order.platformOrderId}-${transRef}`,
    [
      {
        lineNumber: 1,
        lineAt: new Date(),
        direction: 'credit',
        amount,
        reference: order.paymentReference,
        description:
          `SANDBOX TRANSFER ${transRef} FROM ${order.customerBank} X${order.customerAccountNo.slice(-4)} ${order.customerAccountName}`.slice(
            0,
            255
          ),
      },
    ],
    options.actor
  )
  const sendingBank = isBankCode(order.customerBank) ? BANKS[order.customerBank] : '000'
  const slipPath = join(options.slipDirectory, `${order.platformOrderId}-${transRef}.png`)
  await mkdir(options.slipDirectory, { recursive: true })
  await writeFile(
    slipPath,
    await QRCode.toBuffer(slipMiniQrPayload(sendingBank, transRef), {
      type: 'png',
      margin: 4,
      scale: 8,
    })
  )
  return { summary, amount, transRef, slipPath }
}
