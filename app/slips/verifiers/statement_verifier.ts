import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import type {
  ClaimedOrder,
  SlipFacts,
  SlipOrder,
  SlipReference,
  SlipVerifier,
} from '#slips/verifiers/slip_verifier'

interface LineRow {
  id: number | string
  import_id: number | string
  line_at: Date
  amount: number | string
  status: string
  order_type: ClaimedOrder['orderType'] | null
  order_id: number | string | null
}

/**
 * The gateway's own records: a credit on the order's deposit account whose
 * transaction reference (trans_ref: the statement's, or its reference when
 * the layout has none) is the slip's. The line is on
 * that account's statement, so the receiver is the account itself.
 * Statement times are minute-precise; the time rule allows for it.
 */
export class StatementVerifier implements SlipVerifier {
  readonly name = 'statement'

  async lookup(slip: SlipReference, { account }: SlipOrder): Promise<SlipFacts | null> {
    const line = (await db
      .from('statement_lines')
      .where('deposit_account_id', account.id)
      .where('trans_ref', slip.transRef)
      .where('direction', 'credit')
      .orderBy('id')
      .first()) as LineRow | undefined
    if (!line) return null
    return {
      amount: Number(line.amount),
      receiver: { account: account.accountNo, proxy: account.promptpayId ?? account.billerId },
      transferredAt: DateTime.fromJSDate(new Date(line.line_at)).toUTC(),
      reference1: null,
      source: this.name,
      evidence: {
        statement_line_id: Number(line.id),
        import_id: Number(line.import_id),
        line_status: line.status,
      },
      claimedBy:
        line.order_type && line.order_id !== null
          ? { orderType: line.order_type, orderId: Number(line.order_id) }
          : null,
    }
  }
}
