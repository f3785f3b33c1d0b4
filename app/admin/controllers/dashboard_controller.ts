import type { HttpContext } from '@adonisjs/core/http'
import { dashboardData } from '#dashboard/dashboard_query'
import { presentDashboard } from '#dashboard/dashboard_view'

/** The back-office's first page: today and the last 7 days, in figures and charts. */
export default class DashboardController {
  async index({ view }: HttpContext) {
    return view.render('admin/dashboard', presentDashboard(await dashboardData()))
  }
}
