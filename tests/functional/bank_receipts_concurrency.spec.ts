import { test } from '@japa/runner'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import db from '@adonisjs/lucid/services/db'
import type PaymentOrder from '#payments/models/payment_order'
import { reviewSlip } from '#slips/actions/review_slip'
import { uploadSlip } from '#slips/actions/upload_slip'
import { attachStatementLine } from '#reconciliation/actions/attach_statement_line'
import { verifyReconciliation } from '#reconciliation/verify/index'
import { verifyLedger } from '#ledger/verify'
import { lockBankAccount, readMerchantBalance } from '#ledger/ledger'
import { formatGatewayDateTime } from '#core/clock'
import { formatAmount } from '#core/money'
import { ActionError } from '#core/validation'
import {
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  type TestMerchant,
} from '#tests/helpers/merchants'
import { createPayment, operatorActor, removeSlipImages } from '#tests/helpers/decisions'
import { sandboxSlip, sandboxTransRef } from '#tests/helpers/slips'
import { receiveLine } from '#tests/helpers/lines'
import { ace, aceProcess, type AceResult } from '#tests/helpers/ace'

/**
 * Decisions on one bank receipt from several processes at once: exactly one
 * takes the money, whatever the interleaving; the others are refused.
 */

const APPROVE = { decision: 'approve', reason_code: 'slip_verified', comment: 'slip checked' }

/** Waits until `count` other connections wait for a lock on a query matching `pattern`. */
async function waitForWaiters(pattern: string, count: number, what: string) {
  const deadline = Date.now() + 60_000
  for (;;) {
    const [rows] = await db.rawQuery(
      `SELECT COUNT(*) AS total FROM information_schema.PROCESSLIST
        WHERE INFO LIKE ? AND ID <> CONNECTION_ID()`,
      [pattern]
    )
    if (Number(rows[0].total) >= count) return
    if (Date.now() > deadline) throw new Error(`${what}: fewer than ${count} waited`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

async function slipFor(order: PaymentOrder, transRef: string) {
  const { slip } = await uploadSlip({
    order,
    image: await sandboxSlip({ transRef, amount: order.transferAmount }),
    source: 'payment_page',
    actor: { name: 'customer' },
  })
  return slip
}

async function held(who: TestMerchant) {
  const balance = await readMerchantBalance(who.merchant.id)
  return balance.balance + balance.unsettleBalance
}

async function assertReconciled(assert: any) {
  assert.deepEqual((await verifyLedger()).drifts, [])
  assert.deepEqual((await verifyReconciliation()).problems, [])
}

/** Settles to 'ok' or the refusal's message (an ActionError, or a command's exit 1). */
async function outcome(work: Promise<unknown>): Promise<string> {
  try {
    const result = await work
    const command = result as AceResult
    if (command && typeof command.code === 'number') {
      return command.code === 0 ? 'ok' : `refused: ${command.output}`
    }
    return 'ok'
  } catch (error) {
    if (error instanceof ActionError) return `refused: ${error.message}`
    throw error
  }
}

test.group('bank receipts: concurrent decisions', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.teardown(removeSlipImages)

  test('four decisions on one line at once, from two processes: one takes the money', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 100 })
    await createDepositAccount()
    const alice = (await operatorActor('alice@example.com')).actor
    const bob = (await operatorActor('bob@example.com')).actor
    const order = await createPayment(who, '500.00')
    const transRef = sandboxTransRef()
    const slip = await slipFor(order, transRef)
    // Frozen while open: the matcher leaves its line to the operators.
    await db
      .from('payment_orders')
      .where('id', order.id)
      .update({ status: 'freeze', status_before_freeze: 'open' })
    const line = await receiveLine(order.depositAccountId, {
      amount: order.transferAmount,
      transRef,
    })
    assert.equal(line.status, 'unmatched')

    // Everyone queues on the line's lock, then goes at once.
    const barrier = await db.transaction()
    let decisions: Array<Promise<string>> = []
    try {
      await barrier.from('statement_lines').where('id', line.id).forUpdate().first()
      decisions = [
        outcome(reviewSlip({ slip_id: slip.id, ...APPROVE }, alice)),
        outcome(
          attachStatementLine(
            {
              statement_line_id: line.id,
              platform_order_id: order.platformOrderId,
              reason_code: 'customer_confirmed',
              comment: 'the customer sent the slip',
            },
            bob
          )
        ),
        // The command-line decisions in their own processes, as the test's name says.
        outcome(
          aceProcess(
            'lines:credit',
            String(line.id),
            who.merchantId,
            '--reason=merchant_claimed',
            '--comment=the merchant claims it'
          )
        ),
        outcome(
          aceProcess(
            'lines:return',
            String(line.id),
            '--bank=KTB',
            '--account-no=1234567890',
            '--account-name=Somchai Jaidee',
            '--reason=no_matching_order',
            '--comment=nobody claims it'
          )
        ),
      ]
      await waitForWaiters('%statement_lines%for update%', 4, 'decisions on the line')
    } finally {
      await barrier.commit()
    }
    const results = await Promise.all(decisions)
    const won = results.filter((result) => result === 'ok')
    assert.lengthOf(won, 1, results.join('\n'))
    for (const result of results.filter((r) => r !== 'ok')) {
      assert.match(
        result,
        /already claimed|already (attached|credited|returned|decided)|is matched/
      )
    }

    const claims = await db.from('receipt_claims')
    assert.lengthOf(claims, 1)
    assert.equal(Number(claims[0].statement_line_id), line.id)
    // Credited once (or returned, and credited nothing).
    const credit = await held(who)
    assert.include([0, 49_500], credit)
    await assertReconciled(assert)
  })

  test('a slip approval racing the import of its line: one credit, the line claimed, whichever goes first', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 100 })
    const account = await createDepositAccount()
    const alice = (await operatorActor('alice@example.com')).actor
    const dir = await mkdtemp(join(tmpdir(), 'race-'))
    try {
      for (const [round, first] of (
        ['approval', 'import', 'approval', 'import'] as const
      ).entries()) {
        const order = await createPayment(who, '250.00')
        const transRef = sandboxTransRef()
        const slip = await slipFor(order, transRef)
        const file = join(dir, `${transRef}.csv`)
        // Four transfers from four payers: rounds can fall in the same second
        // with the same transfer amount, and must still be four bank lines.
        await writeFile(
          file,
          'date_time,direction,amount,reference,description,trans_ref\n' +
            `${formatGatewayDateTime(new Date())},credit,${formatAmount(order.transferAmount)},,TRANSFER FROM SCB X123${round},${transRef}\n`
        )
        // Both wait on the account's bank lock; the one queued first goes first.
        const hold = await db.transaction()
        let approving: Promise<string> | undefined
        let importing: Promise<string> | undefined
        try {
          await lockBankAccount(hold, account.id)
          const approve = () => outcome(reviewSlip({ slip_id: slip.id, ...APPROVE }, alice))
          const importLine = () =>
            outcome(ace('statements:import', file, `--account=${account.id}`))
          if (first === 'approval') {
            approving = approve()
            await waitForWaiters('%ledger_accounts%', 1, 'the approval')
            importing = importLine()
            await waitForWaiters('%ledger_accounts%', 2, 'the import')
          } else {
            importing = importLine()
            await waitForWaiters('%ledger_accounts%', 1, 'the import')
            approving = approve()
            await waitForWaiters('%ledger_accounts%', 2, 'the approval')
          }
        } finally {
          await hold.commit()
        }
        assert.equal(await approving, 'ok', `${first} first`)
        assert.equal(await importing, 'ok', `${first} first`)

        const line = await db.from('statement_lines').where('trans_ref', transRef).firstOrFail()
        assert.equal(line.status, 'matched', `${first} first`)
        assert.equal(Number(line.order_id), order.id)
        const claims = await db.from('receipt_claims').where('payment_order_id', order.id)
        assert.lengthOf(claims, 1)
        assert.equal(Number(claims[0].statement_line_id), Number(line.id), `${first} first`)
      }
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
    // Four payments of 250.00 less 1 %, each once.
    assert.equal(await held(who), 4 * 24_750)
    await assertReconciled(assert)
  })
})
