import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import db from '@adonisjs/lucid/services/db'
import type DepositAccount from '#payments/models/deposit_account'
import { importStatement } from '#reconciliation/actions/import_statement'
import { ActionError } from '#core/validation'
import { ace } from '#tests/helpers/ace'
import { createDepositAccount, resetDatabase } from '#tests/helpers/merchants'

const HEADER = 'date_time,direction,amount,reference,description'

/** A neutral-layout data row dated `minutes` from now (GMT+7, to the second). */
function row(minutes: number, amount = '100.00', direction = 'credit') {
  const at = DateTime.utc().plus({ minutes }).setZone('UTC+7').toFormat('yyyy-LL-dd HH:mm:ss')
  return `${at},${direction},${amount},,TRANSFER`
}

function importFile(account: DepositAccount, content: string, layout?: string) {
  return importStatement(
    { deposit_account_id: account.id, layout, file_name: 'statement.csv', content },
    { name: 'test' }
  )
}

/** The ActionError an action throws (fails the test if it resolves or throws something else). */
async function actionError(work: Promise<unknown>) {
  const error = await work.then(
    () => null,
    (thrown) => thrown
  )
  if (!(error instanceof ActionError)) throw new Error(`expected an ActionError, got ${error}`)
  return error
}

async function assertNothingWritten(assert: any) {
  assert.lengthOf(await db.from('statement_imports'), 0)
  assert.lengthOf(await db.from('statement_lines'), 0)
  assert.lengthOf(await db.from('ledger_transactions'), 0)
  assert.lengthOf(await db.from('audit_logs').where('action', 'statement.import'), 0)
}

test.group('statement import: future-dated lines and the file line numbers', (group) => {
  let directory: string
  group.each.setup(async () => {
    await resetDatabase()
    directory = await mkdtemp(join(tmpdir(), 'gw-statement-lines-'))
    return () => rm(directory, { recursive: true, force: true })
  })
  group.each.timeout(60_000)

  test('a line 10 minutes in the future refuses the whole import, naming its line; nothing is written', async ({
    assert,
  }) => {
    const account = await createDepositAccount()
    const file = [HEADER, row(-5), row(10), row(-1)].join('\n')
    const error = await actionError(importFile(account, file))
    assert.lengthOf(error.errors, 1)
    assert.equal(error.errors[0].field, 'content')
    assert.match(
      error.errors[0].message,
      /^Nothing imported: statement\.csv, neutral: line 3: .* is in the future/
    )
    await assertNothingWritten(assert)
  })

  test('a line 2 minutes in the future, within the clock skew, is imported', async ({ assert }) => {
    const account = await createDepositAccount()
    const summary = await importFile(account, [HEADER, row(-5), row(2, '50.00')].join('\n'))
    assert.equal(summary.lines, 2)
    assert.equal(summary.newLines, 2)
    assert.lengthOf(await db.from('statement_lines'), 2)
  })

  test('a malformed third line of the file is "line 3", in every layout; empty lines count', async ({
    assert,
  }) => {
    const account = await createDepositAccount()
    const neutral = [HEADER, row(-5), row(-4, 'ten')].join('\n')
    let error = await actionError(importFile(account, neutral))
    assert.equal(
      error.errors[0].message,
      'Nothing imported: statement.csv, neutral: line 3, column amount: "ten" is not an amount'
    )

    const badDate = [HEADER, row(-5), 'yesterday,credit,1.00,,X'].join('\r\n')
    error = await actionError(importFile(account, badDate))
    assert.equal(
      error.errors[0].message,
      'Nothing imported: statement.csv, neutral: line 3, column date_time: "yesterday" is not a date and time'
    )

    // An empty line and a description over two lines still count as lines of the file.
    const twoLines = row(-5).replace('TRANSFER', '"TRANSFER\nFROM SCB X7890"')
    const withGaps = [HEADER, '', twoLines, row(-4, '1.00', 'sideways')].join('\n')
    error = await actionError(importFile(account, withGaps))
    assert.equal(
      error.errors[0].message,
      'Nothing imported: statement.csv, neutral: line 5, column direction: direction must be credit or debit'
    )

    const local = DateTime.utc().setZone('UTC+7')
    // Each line's date and time from the same instant: minutes after Bangkok's
    // midnight, five minutes ago is yesterday.
    const kbankAt = (at: DateTime) => at.toFormat('dd-LL-yy,HH:mm')
    const kbank = [
      'Date,Time,Description,Withdrawal,Deposit,Balance,Channel,Details',
      `${kbankAt(local.minus({ minutes: 5 }))},Payment Received,,250.00,"1,250.00",K PLUS,`,
      `${kbankAt(local.minus({ minutes: 4 }))},Both,"1.00","2.00","1,250.00",K PLUS,`,
    ].join('\r\n')
    error = await actionError(importFile(account, kbank, 'kbank'))
    assert.equal(
      error.errors[0].message,
      'Nothing imported: statement.csv, kbank: line 3, columns Withdrawal and Deposit: exactly one of them must be set'
    )

    const kbankFuture = [
      'Date,Time,Description,Withdrawal,Deposit,Balance,Channel,Details',
      `${local.plus({ minutes: 30 }).toFormat('dd-LL-yy,HH:mm')},Payment Received,,250.00,"1,250.00",K PLUS,`,
    ].join('\r\n')
    error = await actionError(importFile(account, kbankFuture, 'kbank'))
    assert.match(
      error.errors[0].message,
      /^Nothing imported: statement\.csv, kbank: line 2: .* is in the future/
    )
    await assertNothingWritten(assert)
  })

  test('statements:import refuses a future line with the same message and exit code 1; a line within the skew imports', async ({
    assert,
  }) => {
    const account = await createDepositAccount()
    const futurePath = join(directory, 'future.csv')
    const content = [HEADER, row(-5), row(-3), row(10)].join('\n')
    await writeFile(futurePath, content)
    const expected = await actionError(importFile(account, content))
    assert.match(expected.errors[0].message, /^Nothing imported: statement\.csv, neutral: line 4: /)
    const cli = await ace('statements:import', futurePath, `--account=${account.id}`)
    assert.equal(cli.code, 1, cli.output)
    assert.include(cli.output, 'line 4: ')
    assert.include(cli.output, 'is in the future')
    await assertNothingWritten(assert)

    const malformedPath = join(directory, 'malformed.csv')
    await writeFile(malformedPath, [HEADER, row(-5), row(-4, '1.00', 'sideways')].join('\n'))
    const malformed = await ace('statements:import', malformedPath, `--account=${account.id}`)
    assert.equal(malformed.code, 1, malformed.output)
    assert.include(
      malformed.output,
      'Nothing imported: malformed.csv, neutral: line 3, column direction: direction must be credit or debit'
    )

    const nearPath = join(directory, 'near.csv')
    await writeFile(nearPath, [HEADER, row(-5), row(2)].join('\n'))
    const near = await ace('statements:import', nearPath, `--account=${account.id}`)
    assert.equal(near.code, 0, near.output)
    assert.lengthOf(await db.from('statement_lines'), 2)
  })
})
