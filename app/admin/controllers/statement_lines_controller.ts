import { reviewQueueCounts } from '#admin/queries/queue_counts'
import type { HttpContext } from '@adonisjs/core/http'
import type Operator from '#operators/models/operator'
import {
  attachStatementLine,
  ATTACH_LINE_REASON_CODES,
} from '#reconciliation/actions/attach_statement_line'
import {
  creditMerchantFromLine,
  CREDIT_LINE_REASON_CODES,
} from '#reconciliation/actions/credit_merchant_from_line'
import {
  returnStatementLine,
  RETURN_LINE_REASON_CODES,
} from '#reconciliation/actions/return_statement_line'
import { confirmDebitLine } from '#reconciliation/actions/confirm_debit_line'
import {
  explainDebitLine,
  EXPLAIN_DEBIT_REASON_CODES,
} from '#reconciliation/actions/explain_debit_line'
import {
  linePage,
  lineStatusAndNote,
  linesQueue,
  linesQueueFilters,
} from '#admin/queries/lines_queue'
import { attachedMessage, creditedMessage, returnedMessage } from '#admin/views/line_decisions'
import { depositAccountChoices } from '#admin/queries/statements'
import { flashBulkResults, runBulk, selectedIds } from '#admin/bulk'
import { submitAction } from '#admin/operator_action'
import { AlreadyDone } from '#core/already_done'
import { pendingRequestsFor } from '#admin/pending_requests'
import { APPROVAL_APPROVE_REASON_CODES } from '#approvals/actions/approve_request'
import { APPROVAL_REJECT_REASON_CODES } from '#approvals/actions/reject_request'
import { ActionError } from '#core/validation'
import { formatThb } from '#core/money'
import { BANKS } from '#core/banks'
import type { Actor } from '#core/actor'

const PER_PAGE = 25

const options = (codes: readonly string[]) => codes.map((code) => ({ value: code, label: code }))

const DECISIONS = ['attach', 'credit', 'return'] as const
type Decision = (typeof DECISIONS)[number]

/** One decision on one line, from the form's fields; returns the message to show. */
async function decide(
  decision: Decision,
  lineId: string,
  fields: Record<string, unknown>,
  actor: Actor
): Promise<string> {
  const reason = { reason_code: fields.reason_code, comment: fields.comment }
  if (decision === 'attach') {
    const input = {
      statement_line_id: lineId,
      platform_order_id: fields.platform_order_id,
      // Attaching the line of a payment credited before it for another amount.
      amount_policy: fields.amount_policy || undefined,
      ...reason,
    }
    return attachedMessage(lineId, await attachStatementLine(input, actor))
  }
  if (decision === 'credit') {
    const input = { statement_line_id: lineId, merchant_id: fields.merchant_id, ...reason }
    return creditedMessage(lineId, await creditMerchantFromLine(input, actor))
  }
  const input = {
    statement_line_id: lineId,
    bank: fields.bank,
    account_no: fields.account_no,
    account_name: fields.account_name,
    ...reason,
  }
  return returnedMessage(lineId, await returnStatementLine(input, actor), fields)
}

const isDecision = (value: string): value is Decision =>
  (DECISIONS as readonly string[]).includes(value)

/** The fields of the line page's decision forms. */
const DECISION_FIELDS = [
  'platform_order_id',
  'amount_policy',
  'merchant_id',
  'bank',
  'account_no',
  'account_name',
  'reason_code',
  'comment',
]

/**
 * The decision of the form that was sent; a problem with a field this form
 * has no control for goes on top of the form.
 */
async function decideOnForm(
  decision: string,
  lineId: string,
  fields: Record<string, unknown>,
  actor: Actor
) {
  if (!isDecision(decision)) {
    throw ActionError.general(`decision must be one of: ${DECISIONS.join(', ')}`)
  }
  try {
    return await decide(decision, lineId, fields, actor)
  } catch (error) {
    // Not an ActionError, or already done (a notice, on no field): as it is.
    if (!(error instanceof ActionError) || error instanceof AlreadyDone) throw error
    throw new ActionError(
      error.errors.map((item) =>
        item.field &&
        (Object.hasOwn(fields, item.field) ||
          // An unticked box sends nothing; the attach form shows it when asked for.
          (decision === 'attach' && item.field === 'amount_policy'))
          ? item
          : { field: null, message: item.message }
      )
    )
  }
}

/**
 * The ticked lines, one result each: attach each late line to the order its
 * note names (`attach_named`), or credit each to one merchant (`credit`).
 */
async function decideLines(
  ids: string[],
  decision: string,
  fields: Record<string, unknown>,
  actor: Actor
) {
  if (ids.length === 0) throw ActionError.general('Tick at least one line.')
  if (decision !== 'attach_named' && decision !== 'credit') {
    throw ActionError.general('Choose what to do with the ticked lines.')
  }
  return runBulk(ids, async (id) => {
    if (decision === 'credit') return decide('credit', id, fields, actor)
    const line = await lineStatusAndNote(Number(id) || 0)
    if (!line) throw ActionError.general(`no statement line #${id}`)
    if (line.status !== 'late' || !line.note) {
      throw ActionError.general(
        `line #${id} is ${line.status}: it names no expired order; decide it on its page`
      )
    }
    return decide('attach', id, { ...fields, platform_order_id: line.note }, actor)
  })
}

/** The fields of the debit forms: a refusal on any other goes on top of the page. */
const CONFIRM_DEBIT_FIELDS = ['platform_order_id', 'returned_line_id', 'comment'] as const
const EXPLAIN_DEBIT_FIELDS = ['reason_code', 'comment'] as const

/**
 * The statement-line queue: credits the matcher left to an operator
 * (unmatched, late) and debits no transfer confirms, who holds them and for
 * how long; a credit line's page with the orders it may pay and the three
 * decisions (attach, credit the merchant, return to the payer), each with a
 * reason code and a comment; a debit line's page with the transfer it
 * confirms, or the transfers it may be and its two decisions (it is this
 * transfer, explain it). Viewers read; operators decide, one line or many
 * (a result per line).
 */
export default class StatementLinesController {
  async index(ctx: HttpContext) {
    const operator = ctx.auth.user as Operator
    const filters = linesQueueFilters(ctx.request.qs(), operator.id)
    const pageNumber = Math.max(1, Number(ctx.request.input('page', 1)) || 1)
    const list = await linesQueue(filters, pageNumber, PER_PAGE)
    const shown: Record<string, string> = {}
    if (filters.status) shown.status = filters.status
    if (filters.account) shown.account = String(filters.account)
    if (filters.mineOf) shown.mine = '1'
    return ctx.view.render('admin/review/lines', {
      rows: list.rows,
      page: list.page,
      filters: {
        status: filters.status ?? '',
        account: filters.account ? String(filters.account) : '',
      },
      mine: Boolean(filters.mineOf),
      query: (to: number) => new URLSearchParams({ ...shown, page: String(to) }).toString(),
      counts: await reviewQueueCounts(),
      accounts: await depositAccountChoices(),
      attachCodes: options(ATTACH_LINE_REASON_CODES),
      creditCodes: options(CREDIT_LINE_REASON_CODES),
    })
  }

  async show({ params, view, session, auth }: HttpContext) {
    const found = await linePage(Number(params.id) || 0)
    if (!found) throw ActionError.notFound('id', `No statement line ${params.id}`)
    const operator = auth.user as Operator
    // The live requests on the line, with what this operator may do (the server's own rules).
    return view.render('admin/review/line', {
      ...found,
      refusal: session.flashMessages.get('actionRefusal') ?? null,
      pendingRequests: await pendingRequestsFor(operator, 'statement_line', String(found.line.id)),
      back: `/admin/review/lines/${found.line.id}`,
      approveCodes: options(APPROVAL_APPROVE_REASON_CODES),
      rejectCodes: options(APPROVAL_REJECT_REASON_CODES),
      attachCodes: options(ATTACH_LINE_REASON_CODES),
      creditCodes: options(CREDIT_LINE_REASON_CODES),
      returnCodes: options(RETURN_LINE_REASON_CODES),
      explainCodes: options(EXPLAIN_DEBIT_REASON_CODES),
      banks: Object.keys(BANKS).map((code) => ({ value: code, label: code })),
    })
  }

  /** One decision on the line of the URL; `decision` says which form was sent. */
  async decide(ctx: HttpContext) {
    const lineId = String(Number(ctx.params.id) || 0)
    const decision = String(ctx.request.input('decision', ''))
    const fields = ctx.request.only(DECISION_FIELDS)
    return submitAction(
      ctx,
      (actor) => decideOnForm(decision, lineId, fields, actor),
      (message) => {
        ctx.session.flash('success', message)
        return ctx.response.redirect(`/admin/review/lines/${lineId}`)
      },
      // Shown at the top of the form that was sent (fields it lacks included).
      { action: isDecision(decision) ? decision : undefined }
    )
  }

  /**
   * "It is this transfer": the debit of the URL is the payout named by its
   * platform_order_id (a pending one is completed by it) or the return of
   * the credit line named by returned_line_id (confirmDebitLine).
   */
  async confirmDebit(ctx: HttpContext) {
    const lineId = String(Number(ctx.params.id) || 0)
    const fields = ctx.request.only(['platform_order_id', 'returned_line_id', 'comment'])
    // An empty box is no answer: the action wants exactly one of the two.
    const given = (value: unknown) =>
      typeof value === 'string' && value.trim() === '' ? undefined : (value ?? undefined)
    return submitAction(
      ctx,
      (actor) =>
        confirmDebitLine(
          {
            statement_line_id: lineId,
            platform_order_id: given(fields.platform_order_id),
            returned_line_id: given(fields.returned_line_id),
            comment: fields.comment,
          },
          actor
        ),
      (result) => {
        ctx.session.flash(
          'success',
          `line #${result.lineId} confirms ${result.what}: ${formatThb(result.amount)} THB left the bank for it`
        )
        return ctx.response.redirect(`/admin/review/lines/${lineId}`)
      },
      { formFields: CONFIRM_DEBIT_FIELDS }
    )
  }

  /** "Explain it": the debit of the URL is a bank charge or correction (explainDebitLine). */
  async explainDebit(ctx: HttpContext) {
    const lineId = String(Number(ctx.params.id) || 0)
    const fields = ctx.request.only(['reason_code', 'comment'])
    return submitAction(
      ctx,
      (actor) => explainDebitLine({ statement_line_id: lineId, ...fields }, actor),
      (result) => {
        ctx.session.flash(
          'success',
          `line #${result.lineId} explained: ${formatThb(result.amount)} THB booked as the gateway's bank charges; no merchant balance moves`
        )
        return ctx.response.redirect(`/admin/review/lines/${lineId}`)
      },
      { formFields: EXPLAIN_DEBIT_FIELDS }
    )
  }

  /**
   * Many lines at once, one result each: attach each late line to the order
   * its note names, or credit each to one merchant. Each line is its own
   * transaction in the action; a refused line does not stop the others.
   */
  async bulk(ctx: HttpContext) {
    const ids = selectedIds(ctx)
    const decision = String(ctx.request.input('decision', ''))
    const fields = ctx.request.only(['merchant_id', 'reason_code', 'comment'])
    return submitAction(
      ctx,
      (actor) => decideLines(ids, decision, fields, actor),
      (results) => {
        const title = decision === 'credit' ? 'Credit to merchant' : 'Attach to the named order'
        flashBulkResults(ctx, title, results)
        return ctx.response.redirect().back()
      }
    )
  }
}
