import type { HttpContext } from '@adonisjs/core/http'
import {
  reconciliationCheckNotice,
  reconciliationPage,
  reconciliationQuery,
} from '#admin/views/reconciliation_page'
import { checkReconciliationNow } from '#reconciliation/actions/check_reconciliation_now'
import { operatorActor } from '#admin/operator_action'

/**
 * Reconciliation: one deposit account's bank days (the statement against
 * the ledger's bank account, the credits claimed and unclaimed, receivables
 * opened and cleared), its open items and exceptions, and the last
 * whole-database check, which operators run again from here.
 */
export default class ReconciliationController {
  async index({ request, view }: HttpContext) {
    const page = await reconciliationPage(request.qs())
    return view.render('admin/reconciliation/index', page)
  }

  /**
   * Runs the whole-database check now (recorded in reconciliation_runs and
   * audited, with the operator as actor) and says how it went.
   */
  async check(ctx: HttpContext) {
    const { result, kinds } = await checkReconciliationNow(operatorActor(ctx))
    const notice = reconciliationCheckNotice(result, kinds)
    ctx.session.flash(notice.tone, notice.message)
    const query = await reconciliationQuery(ctx.request.only(['account', 'from', 'to']))
    return ctx.response.redirect(`/admin/reconciliation?${query}`)
  }
}
