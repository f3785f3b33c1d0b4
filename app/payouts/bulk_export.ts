import { DateTime } from 'luxon'
import { mkdir, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import db from '@adonisjs/lucid/services/db'
import PayoutOrder from '#models/payout_order'
import { BANKS, type BankCode } from '#services/banks'
import { formatAmount } from '#services/money'
import { randomString, UPPER_ALPHANUMERIC } from '#services/random'
import { assertPayoutTransition } from '#payouts/payout_state'

const HEADER = ['reference', 'bank_code', 'bank', 'account_no', 'account_name', 'amount']

/** RFC 4180 field: quoted when it holds a comma, quote or line break; formula-leading characters neutralised. */
function csvField(value: string) {
  const safe = /^[=+\-@]/.test(value) ? `'${value}` : value
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe
}

/**
 * Writes every bulk-file payout waiting in `queue` to one CSV per destination
 * bank and moves the exported orders to `pending` under one batch id, in one
 * transaction (an order is exported once). The files are written as
 * `.partial` and only get their final name once the orders are committed as
 * exported: a file that can be uploaded always matches pending orders, and a
 * failed export leaves no file that a later export would duplicate.
 */
export async function exportBulkPayouts(directory: string, bank?: BankCode) {
  const batchId = `B${DateTime.utc().toFormat('yyyyLLddHHmmss')}${randomString(6, UPPER_ALPHANUMERIC)}`
  const partials: string[] = []
  let result: Awaited<ReturnType<typeof writeBatch>>
  try {
    result = await writeBatch(directory, batchId, partials, bank)
  } catch (error) {
    await Promise.all(partials.map((path) => rm(path, { force: true })))
    throw error
  }
  for (const file of result.files) await rename(`${file.path}.partial`, file.path)
  return result
}

async function writeBatch(directory: string, batchId: string, partials: string[], bank?: BankCode) {
  return db.transaction(async (trx) => {
    const query = PayoutOrder.query({ client: trx })
      .where('connector', 'bulk_file')
      .where('status', 'queue')
      .orderBy('id')
      .forUpdate()
    if (bank) query.where('bank', bank)
    const orders = await query
    const byBank = new Map<string, PayoutOrder[]>()
    for (const order of orders) byBank.set(order.bank, [...(byBank.get(order.bank) ?? []), order])

    await mkdir(directory, { recursive: true })
    const files: Array<{ bank: string; path: string; orders: number; total: string }> = []
    for (const [code, list] of byBank) {
      const lines = [HEADER.join(',')]
      for (const order of list) {
        lines.push(
          [
            order.platformOrderId,
            BANKS[order.bank as BankCode],
            order.bank,
            order.accountNo,
            order.accountName,
            formatAmount(order.amount),
          ]
            .map(csvField)
            .join(',')
        )
      }
      const path = join(directory, `${batchId}-${code}.csv`)
      partials.push(`${path}.partial`)
      await writeFile(`${path}.partial`, lines.join('\r\n') + '\r\n')
      files.push({
        bank: code,
        path,
        orders: list.length,
        total: formatAmount(list.reduce((sum, order) => sum + order.amount, 0)),
      })
      for (const order of list) {
        assertPayoutTransition(order.status, 'pending')
        order.status = 'pending'
        order.batchId = batchId
        order.connectorReference = order.platformOrderId
        await order.useTransaction(trx).save()
      }
    }
    return { batchId, files }
  })
}
