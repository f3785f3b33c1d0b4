import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import type {
  ClaimedOrder,
  SlipFacts,
  SlipReference,
  SlipVerifier,
} from '#slips/verifiers/slip_verifier'

interface TransferRow {
  id: number | string
  line_at: Date
  amount: number | string
  reference: string | null
  order_type: ClaimedOrder['orderType'] | null
  order_id: number | string | null
  account_no: string
  promptpay_id: string | null
  biller_id: string | null
}

/** `%`, `_` and `\` in a reference must not act as LIKE wildcards. */
function likePrefix(text: string) {
  return `${text.replace(/[\\%_]/g, (character) => `\\${character}`)} %`
}

/**
 * The slip-verification provider's sandbox: it knows the transfers the
 * sandbox bank made (`sandbox:pay`), wherever they went, and answers like a
 * provider does: amount, receiver (masked account and PromptPay/biller id),
 * time to the second, ref1. A real provider (a bank's slip-verification API
 * or a slip-checking service) takes its place behind the same interface.
 * Development and tests only.
 */
export class SandboxSlipVerifier implements SlipVerifier {
  readonly name = 'sandbox'

  async lookup(slip: SlipReference): Promise<SlipFacts | null> {
    // sandbox:pay writes its transfer as a statement line described
    // "SANDBOX TRANSFER <transRef> FROM …" in an import of layout "sandbox".
    const transfer = (await db
      .from('statement_lines')
      .join('statement_imports', 'statement_imports.id', 'statement_lines.import_id')
      .join('deposit_accounts', 'deposit_accounts.id', 'statement_lines.deposit_account_id')
      .where('statement_imports.layout', 'sandbox')
      .where('statement_lines.direction', 'credit')
      .whereRaw("statement_lines.description LIKE ? ESCAPE '\\\\'", [
        `SANDBOX TRANSFER ${likePrefix(slip.transRef)}`,
      ])
      .orderBy('statement_lines.id')
      .select(
        'statement_lines.id',
        'statement_lines.line_at',
        'statement_lines.amount',
        'statement_lines.reference',
        'statement_lines.order_type',
        'statement_lines.order_id',
        'deposit_accounts.account_no',
        'deposit_accounts.promptpay_id',
        'deposit_accounts.biller_id'
      )
      .first()) as TransferRow | undefined
    if (!transfer) return null
    return {
      amount: Number(transfer.amount),
      receiver: {
        account: maskAccount(transfer.account_no),
        proxy: transfer.promptpay_id ?? transfer.biller_id,
      },
      transferredAt: DateTime.fromJSDate(new Date(transfer.line_at)).toUTC(),
      reference1:
        transfer.reference && transfer.reference !== slip.transRef ? transfer.reference : null,
      source: this.name,
      evidence: { sandbox_transfer: Number(transfer.id) },
      claimedBy:
        transfer.order_type && transfer.order_id !== null
          ? { orderType: transfer.order_type, orderId: Number(transfer.order_id) }
          : null,
    }
  }
}

/** Providers show the receiving account masked but for its last digits. */
function maskAccount(accountNo: string) {
  return 'x'.repeat(Math.max(0, accountNo.length - 4)) + accountNo.slice(-4)
}
