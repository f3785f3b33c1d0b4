/**
 * Statement lines for the line-decision tests: stored and matched as an
 * import does, so each arrives in the state the matcher gives it.
 */
import { createHash, randomUUID } from 'node:crypto'
import db from '@adonisjs/lucid/services/db'
import DepositAccount from '#payments/models/deposit_account'
import { matchImport, storeStatement } from '#reconciliation/statements'
import { TEST_ACTOR } from '#tests/helpers/merchants'

export interface LineFixture {
  amount: number
  lineAt?: Date
  reference?: string | null
  /** The bank's transaction reference (a slip's transRef). */
  transRef?: string | null
  description?: string
}

/** One credit line on `accountId`, stored and matched; returns its row. */
export async function receiveLine(accountId: number, fixture: LineFixture) {
  const account = await DepositAccount.findOrFail(accountId)
  const lines = [
    {
      lineNumber: 1,
      lineAt: fixture.lineAt ?? new Date(),
      direction: 'credit' as const,
      amount: fixture.amount,
      reference: fixture.reference ?? null,
      transRef: fixture.transRef ?? null,
      description:
        fixture.description ?? `TRANSFER FROM KTB X7890 SOMCHAI JAIDEE ${randomUUID().slice(0, 8)}`,
    },
  ]
  const stored = await db.transaction((trx) =>
    storeStatement(trx, {
      account,
      layout: 'sandbox',
      fileName: `test-${randomUUID()}`,
      fileSha256: createHash('sha256').update(randomUUID()).digest('hex'),
      lines,
      actor: TEST_ACTOR,
    })
  )
  await matchImport(account.id, stored.importId)
  const row = await db.from('statement_lines').where('import_id', stored.importId).firstOrFail()
  return { ...row, id: Number(row.id), amount: Number(row.amount) }
}

export function lineRow(id: number) {
  return db.from('statement_lines').where('id', id).firstOrFail()
}
