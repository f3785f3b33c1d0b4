import { DateTime } from 'luxon'
import { createHash } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import vine from '@vinejs/vine'
import app from '@adonisjs/core/services/app'
import PaymentOrder from '#payments/models/payment_order'
import DepositAccount from '#payments/models/deposit_account'
import type { ParsedStatementLine } from '#reconciliation/statement_line'
import { matchImport, storeStatement } from '#reconciliation/statements'
import { scheduleSlipRecheck } from '#slips/actions/recheck_slips'
import { BANKS, isBankCode } from '#core/banks'
import { randomString, UPPER_ALPHANUMERIC } from '#core/random'
import { recordAudit } from '#core/audit'
import { ActionError, thbAmount, validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import { buildSlipMiniQr } from '#slips/mini_qr'
import { maskAccountNo, renderSlipImage } from '#slips/sandbox_slip_image'
import { inTransaction } from '#core/transaction'

export const sandboxPayValidator = vine.compile(
  vine.object({
    platform_order_id: vine.string().trim().maxLength(64),
    /** What the customer transfers; default: the order's transfer_amount. */
    amount: vine.any().use(thbAmount({})).optional(),
  })
)

/**
 * The sandbox bank receives a customer's transfer for a payment order: the
 * transfer appears as a line of the deposit account's statement and goes
 * through the same storing and matching as a real statement; the import and
 * its audit row commit together, then the line is matched. A slip image of
 * the transfer, as the customer's banking app would show it (with its
 * mini-QR), is written to tmp/slips as PNG. Development only.
 */
export async function sandboxPay(input: Record<string, unknown>, actor: Actor) {
  if (app.inProduction) throw ActionError.general('The sandbox bank does not run in production')
  const data = await validateInput(sandboxPayValidator, input)
  const order = await PaymentOrder.findBy('platform_order_id', data.platform_order_id)
  if (!order) {
    throw ActionError.notFound('platform_order_id', `No payment order ${data.platform_order_id}`)
  }
  const account = await DepositAccount.findOrFail(order.depositAccountId)
  const amount = data.amount ?? order.transferAmount
  const transferredAt = DateTime.utc()
  const transRef = `${transferredAt.toFormat('yyyyLLdd')}${randomString(12, UPPER_ALPHANUMERIC)}`
  const lines: ParsedStatementLine[] = [
    {
      lineNumber: 1,
      lineAt: transferredAt.toJSDate(),
      direction: 'credit',
      amount,
      reference: order.paymentReference,
      transRef,
      description:
        `SANDBOX TRANSFER ${transRef} FROM ${order.customerBank} X${order.customerAccountNo.slice(-4)} ${order.customerAccountName}`.slice(
          0,
          255
        ),
    },
  ]
  const stored = await inTransaction(async (trx) => {
    const result = await storeStatement(trx, {
      account,
      layout: 'sandbox',
      fileName: `sandbox-${order.platformOrderId}-${transRef}`,
      fileSha256: createHash('sha256').update(JSON.stringify(lines)).digest('hex'),
      lines,
      actor,
    })
    await recordAudit(trx, actor, {
      action: 'sandbox.pay',
      target: { type: 'payment', id: order.platformOrderId },
      details: { amount, trans_ref: transRef, import_id: result.importId },
    })
    return result
  })
  const results = await matchImport(account.id, stored.importId)
  // A slip uploaded before the transfer arrived is verified now, not at the next sweep.
  await scheduleSlipRecheck(account.id)

  const slipDirectory = app.tmpPath('slips')
  const sendingBank = isBankCode(order.customerBank) ? BANKS[order.customerBank] : '000'
  const slipPath = join(slipDirectory, `${order.platformOrderId}-${transRef}.png`)
  await mkdir(slipDirectory, { recursive: true })
  await writeFile(
    slipPath,
    await renderSlipImage({
      bankCode: order.customerBank,
      amount,
      senderName: order.customerAccountName,
      senderAccountMasked: maskAccountNo(order.customerAccountNo),
      receiverName: account.accountName,
      receiverAccountMasked: maskAccountNo(account.accountNo),
      transferredAt,
      transRef,
      miniQr: buildSlipMiniQr(sendingBank, transRef),
      format: 'png',
    })
  )
  await order.refresh()
  return {
    summary: { importId: stored.importId, lines: 1, newLines: stored.newLines, results },
    amount,
    transRef,
    slipPath,
    orderStatus: order.status,
  }
}
