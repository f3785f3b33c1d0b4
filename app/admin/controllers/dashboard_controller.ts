import type { HttpContext } from '@adonisjs/core/http'
import Platform from '#merchants/models/platform'
import Merchant from '#merchants/models/merchant'
import { dashboardData } from '#admin/queries/dashboard'
import { presentDashboard } from '#admin/views/dashboard'
import type Operator from '#operators/models/operator'
import { unacknowledgedNotices } from '#notifications/notifications'
import { presentNotice } from '#admin/notices_view'

/** A select's value when it names one of `ids`; anything else means "all". */
function chosenId(value: unknown, ids: number[]): number | null {
  const id = typeof value === 'string' && /^[1-9]\d{0,9}$/.test(value) ? Number(value) : null
  return id !== null && ids.includes(id) ? id : null
}

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
    const platforms = await Platform.query().orderBy('name').orderBy('id')
    const platformId = chosenId(
      request.input('platform'),
      platforms.map((platform) => platform.id)
    )
    // The merchant select lists the chosen platform's merchants only; a merchant
    // of another platform (a stale URL) is dropped rather than showing nothing.
    const merchantsQuery = Merchant.query().orderBy('name').orderBy('id')
    if (platformId !== null) merchantsQuery.where('platform_id', platformId)
    const merchants = await merchantsQuery
    const merchantId = chosenId(
      request.input('merchant'),
      merchants.map((merchant) => merchant.id)
    )
    const data = await dashboardData(undefined, { platformId, merchantId })
    return view.render('admin/dashboard', {
      notices,
      ...presentDashboard(data, {
        platforms: platforms.map((platform) => ({ id: platform.id, name: platform.name })),
        merchants: merchants.map((merchant) => ({
          id: merchant.id,
          name: merchant.name,
          platformId: merchant.platformId,
        })),
        platformId,
        merchantId,
      }),
    })
  }
}
