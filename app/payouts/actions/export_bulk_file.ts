import { DateTime } from 'luxon'
import { mkdir, rename, rm, writeFile } from 'node:fs/promises'
import { basename, join } from 'node:path'
import vine from '@vinejs/vine'
import db from '@adonisjs/lucid/services/db'
import PayoutOrder from '#payouts/models/payout_order'
import { BANKS, type BankCode } from '#core/banks'
import { formatAmount } from '#core/money'
import { randomString, UPPER_ALPHANUMERIC } from '#core/random'
import { transitionPayout } from '#payouts/payout_state'
import { recordAudit } from '#core/audit'
import { validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import { withDeadlockRetry } from '#core/db_retry'

export const exportBulkFileValidator = vine.compile(
  vine.object({
    /** Where the files are written (the server's file system). */
    directory: vine.string().trim().minLength(1),
    /** The back-office sends the one file written: there, a bank is named. */
    one_bank: vine.boolean().optional(),
    /** Only payouts to this destination bank. */
    bank: vine
      .enum(Object.keys(BANKS) as BankCode[])
      .optional()
      .requiredWhen('one_bank', '=', true),
  })
)

const MESSAGES = {
  'bank.required': 'bank is required: a file is per destination bank',
  'bank.enum': `bank must be one of: ${Object.keys(BANKS).join(', ')}`,
}

const HEADER = ['reference', 'bank_code', 'bank', 'account_no', 'account_name', 'amount']

/** RFC 4180 field: quoted when it holds a comma, quote or line break; formula-leading characters neutralised. */
function csvField(value: string) {
  const safe = /^[=+\-@]/.test(value) ? `'${value}` : value
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe
}

/**
 * Writes every bulk-file payout waiting in `queue` to one CSV per destination
 * bank and moves the exported orders to `pending` under one batch id, with
 * the audit row of the batch, in one transaction (an order is exported once).
 * The files are written as `.partial` and only get their final name once the
 * orders are committed as exported: a file that can be uploaded always
 * matches pending orders, and a failed export leaves no file that a later
 * export would duplicate. Nothing waiting: no file, nothing written.
 */
export async function exportBulkFile(input: Record<string, unknown>, actor: Actor) {
  const { directory, bank } = await validateInput(exportBulkFileValidator, input, MESSAGES)
  const batchId = `B${DateTime.utc().toFormat('yyyyLLddHHmmss')}${randomString(6, UPPER_ALPHANUMERIC)}`
  const partials: string[] = []
  let result: Awaited<ReturnType<typeof writeBatch>>
  try {
    // A retried batch writes its files again: the failed attempt's partial files go first.
    result = await withDeadlockRetry(async () => {
      try {
        return await writeBatch(directory, batchId, partials, actor, bank)
      } catch (error) {
        await Promise.all(partials.splice(0).map((path) => rm(path, { force: true })))
        throw error
      }
    })
  } catch (error) {
    await Promise.all(partials.map((path) => rm(path, { force: true })))
    throw error
  }
  for (const file of result.files) await rename(`${file.path}.partial`, file.path)
  return result
}

async function writeBatch(
  directory: string,
  batchId: string,
  partials: string[],
  actor: Actor,
  bank?: BankCode
) {
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
        order.batchId = batchId
        await transitionPayout(trx, order, {
          to: 'pending',
          actor,
          reason: `bulk file ${batchId}-${code}.csv`,
          connectorReference: order.platformOrderId,
        })
      }
    }
    if (files.length > 0) {
      await recordAudit(trx, actor, {
        action: 'payouts.export',
        target: { type: 'payout_batch', id: batchId },
        details: {
          bank: bank ?? null,
          orders: orders.length,
          files: files.map((file) => ({
            file: basename(file.path),
            bank: file.bank,
            orders: file.orders,
            total: file.total,
          })),
        },
      })
    }
    return { batchId, files }
  })
}
