import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { approveRequest } from '#approvals/actions/approve_request'
import { rejectRequest } from '#approvals/actions/reject_request'
import { returnStatementLine } from '#reconciliation/actions/return_statement_line'
import { creditMerchantFromLine } from '#reconciliation/actions/credit_merchant_from_line'
import { verifyLedger } from '#ledger/verify'
import { byField, refusal } from '#tests/helpers/actions'
import { operatorActor } from '#tests/helpers/decisions'
import { lineRow, receiveLine } from '#tests/helpers/lines'
import { ace } from '#tests/helpers/ace'
import {
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
} from '#tests/helpers/merchants'

const RETURN = {
  bank: 'KTB',
  account_no: '9876543210',
  account_name: 'Somchai Jaidee',
  reason_code: 'no_matching_order',
  comment: 'nobody claims it',
}

/** What a return moves or records: its posting, its claim, the transfer to send. */
async function returnTraces(lineId: number) {
  const [postings, claims, toSend] = await Promise.all([
    db.from('ledger_transactions').where('kind', 'statement_line_return'),
    db.from('receipt_claims').where('statement_line_id', lineId),
    db.from('payout_confirmations').where('path', 'return'),
  ])
  return { postings: postings.length, claims: claims.length, toSend: toSend.length }
}

async function setUp() {
  const who = await createDepositMerchant()
  const account = await createDepositAccount()
  const olga = await operatorActor('olga@example.com', 'operator')
  const oscar = await operatorActor('oscar@example.com', 'operator')
  const ada = await operatorActor('ada@example.com', 'admin')
  return { who, account, olga, oscar, ada }
}

test.group('returning a statement line: four eyes', (group) => {
  group.each.setup(() => resetDatabase())

  test('an operator asking pays nothing; the line stays undecided and no other decision takes it; an admin carries it out as stored', async ({
    assert,
  }) => {
    const { who, account, olga, oscar, ada } = await setUp()
    const line = await receiveLine(account.id, { amount: 1_000_00 })

    const asked = await returnStatementLine({ statement_line_id: line.id, ...RETURN }, olga.actor)
    assert.equal(asked.outcome, 'approval_requested')
    const request = asked.request!
    assert.equal(request.action, 'statement_line.return')
    assert.equal(request.kind, 'line_decision')
    assert.equal(request.targetType, 'statement_line')
    assert.deepEqual(request.changeBefore, {
      statement_line: `#${line.id}`,
      amount: '1,000.00 THB',
      return_to: '—',
    })
    assert.deepEqual(request.changeAfter, {
      statement_line: `#${line.id}`,
      amount: '1,000.00 THB',
      return_to: 'KTB 9876543210 (Somchai Jaidee)',
    })
    // Nothing moved, nothing claimed, nothing to send; the line is undecided.
    assert.deepEqual(await returnTraces(line.id), { postings: 0, claims: 0, toSend: 0 })
    assert.isNull((await lineRow(line.id)).decision)
    assert.lengthOf(await db.from('notifications').where('approval_request_id', request.id), 1)

    // No other decision takes the line meanwhile.
    const credit = await refusal(
      creditMerchantFromLine(
        {
          statement_line_id: line.id,
          merchant_id: who.merchant.merchantId,
          reason_code: 'merchant_claimed',
          comment: 'mine',
        },
        oscar.actor
      )
    )
    assert.include(byField(credit).general, `approval request #${request.id}`)
    const shell = await ace(
      'lines:return',
      String(line.id),
      '--bank=SCB',
      '--account-no=1111111111',
      '--account-name=Someone Else',
      '--reason=no_matching_order',
      '--comment=elsewhere'
    )
    assert.equal(shell.code, 1, shell.output)
    assert.include(shell.output, `approval request #${request.id}`)

    // The requester cannot approve; an operator cannot either (an admin decides).
    const own = await refusal(approveRequest({ approval_request_id: request.id }, olga.actor))
    assert.include(byField(own).general, 'needs the admin role')
    const byOperator = await refusal(
      approveRequest({ approval_request_id: request.id }, oscar.actor)
    )
    assert.include(byField(byOperator).general, 'needs the admin role')
    assert.deepEqual(await returnTraces(line.id), { postings: 0, claims: 0, toSend: 0 })

    await approveRequest({ approval_request_id: request.id, comment: 'payer confirmed' }, ada.actor)
    assert.deepEqual(await returnTraces(line.id), { postings: 1, claims: 1, toSend: 1 })
    const row = await lineRow(line.id)
    assert.equal(row.decision, 'returned')
    assert.equal(row.decided_by, ada.operator.id)
    assert.equal(row.return_bank, 'KTB')
    assert.equal(row.return_account_no, '9876543210')
    assert.equal(row.return_account_name, 'Somchai Jaidee')
    const [claim] = await db.from('receipt_claims').where('statement_line_id', line.id)
    assert.equal(claim.path, 'return')
    assert.equal(Number(claim.approval_request_id), request.id)
    const [audit] = await db.from('audit_logs').where('action', 'statement_line.return')
    assert.equal(audit.actor, ada.actor.name)
    assert.deepEqual((await verifyLedger()).drifts, [])
  })

  test('an admin who asks cannot approve their own return; a withdrawn request leaves the line free', async ({
    assert,
  }) => {
    const { account, ada } = await setUp()
    const line = await receiveLine(account.id, { amount: 250_00 })
    const asked = await returnStatementLine({ statement_line_id: line.id, ...RETURN }, ada.actor)
    const own = await refusal(approveRequest({ approval_request_id: asked.request!.id }, ada.actor))
    assert.include(byField(own).general, 'another operator must approve it')
    await rejectRequest(
      {
        approval_request_id: asked.request!.id,
        reason_code: 'withdrawn',
        comment: 'wrong account',
      },
      ada.actor
    )
    assert.deepEqual(await returnTraces(line.id), { postings: 0, claims: 0, toSend: 0 })
    const again = await returnStatementLine({ statement_line_id: line.id, ...RETURN }, ada.actor)
    assert.equal(again.outcome, 'approval_requested')
  })

  test('lines:return from the shell applies at once, as a break-glass use every admin is told of', async ({
    assert,
  }) => {
    const { account } = await setUp()
    const line = await receiveLine(account.id, { amount: 40_00 })
    const returned = await ace(
      'lines:return',
      String(line.id),
      '--bank=KTB',
      '--account-no=9876543210',
      '--account-name=Somchai Jaidee',
      '--reason=no_matching_order',
      '--comment=nobody claims it'
    )
    assert.equal(returned.code, 0, returned.output)
    assert.include(returned.output, 'Break-glass')
    assert.deepEqual(await returnTraces(line.id), { postings: 1, claims: 1, toSend: 1 })
    const [glass] = await db.from('audit_logs').where('action', 'break_glass.use')
    assert.equal(glass.subject_id, String(line.id))
    const [notice] = await db.from('notifications').where('kind', 'break_glass')
    assert.equal(notice.action, 'statement_line.return')
    assert.include(
      notice.summary,
      `returned statement line #${line.id} (40.00 THB) to KTB 9876543210`
    )
  })
})
