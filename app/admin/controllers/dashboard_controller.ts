import type { HttpContext } from '@adonisjs/core/http'
import { dashboardData } from '#admin/queries/dashboard'
import { dashboardChoices } from '#admin/queries/dashboard_scope'
import { presentDashboard } from '#admin/views/dashboard'
import type Operator from '#operators/models/operator'
import { unacknowledgedNotices } from '#notifications/notifications'
import { presentNotice } from '#admin/notices_view'

/**
 * The back-office's first page: today and the last 7 days, in figures and
 * charts, for every merchant or for one platform (?platform=) or merchant
 * (?merchant=). The filter is in the URL so a filtered view can be shared
 * and reloaded; it only reads, so every role may use it.
 */
export default class DashboardController {
  async index({ request, view, auth }: HttpContext) {
    const operator = auth.user as Operator
    // Admins first see what another admin asked or did to where money goes.
    const notices =
      operator.role === 'admin'
        ? (await unacknowledgedNotices(operator.id, 10)).map(presentNotice)
        : []
    const choices = await dashboardChoices(request.input('platform'), request.input('merchant'))
    const { platformId, merchantId } = choices
    const data = await dashboardData(undefined, { platformId, merchantId })
    return view.render('admin/dashboard', { notices, ...presentDashboard(data, choices) })
  }
}
