import type { HttpContext } from '@adonisjs/core/http'
import type Operator from '#operators/models/operator'
import { operatorActor } from '#admin/operator_action'
import { presentNotice } from '#admin/notices_view'
import { acknowledgeNotifications, recentNotifications } from '#notifications/notifications'

/**
 * Every admin's notices: sensitive approval requests and break-glass uses,
 * newest first, each with whether this admin acknowledged it. Acknowledging
 * takes a notice off this admin's dashboard only.
 */
export default class NotificationsController {
  async index({ request, view, auth }: HttpContext) {
    const operator = auth.user as Operator
    const page = Math.max(1, Number(request.input('page', 1)) || 1)
    const { page: paginated, rows } = await recentNotifications(operator.id, page)
    return view.render('admin/notifications', {
      rows: rows.map(presentNotice),
      page: paginated,
      query: (to: number) => `page=${to}`,
    })
  }

  async acknowledge(ctx: HttpContext) {
    const { request, session, response } = ctx
    const all = request.input('all') === '1'
    const ids = [request.input('ids') ?? []]
      .flat()
      .map((id: unknown) => Number(id))
      .filter((id) => Number.isInteger(id) && id > 0)
    const acknowledged = await acknowledgeNotifications(operatorActor(ctx), all ? 'all' : ids)
    session.flash(
      'success',
      acknowledged === 0
        ? 'Nothing new to acknowledge.'
        : `${acknowledged} notice${acknowledged === 1 ? '' : 's'} acknowledged: off your dashboard (other admins still see theirs).`
    )
    const back = request.input('back')
    return response.redirect(back === 'dashboard' ? '/admin' : '/admin/notifications')
  }
}
