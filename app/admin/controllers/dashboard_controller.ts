import type { HttpContext } from '@adonisjs/core/http'
import db from '@adonisjs/lucid/services/db'

/** The back-office's first page: what needs attention, in counts. */
export default class DashboardController {
  async index({ view }: HttpContext) {
    const count = async (query: Promise<Array<{ total: number | string }>>) =>
      Number((await query)[0]?.total ?? 0)
    const figures = {
      platforms: await count(db.from('platforms').count('* as total')),
      merchants: await count(db.from('merchants').where('status', 'active').count('* as total')),
      depositAccounts: await count(
        db.from('deposit_accounts').where('active', true).count('* as total')
      ),
      openPayments: await count(
        db.from('payment_orders').where('status', 'open').count('* as total')
      ),
      openPayouts: await count(
        db.from('payout_orders').whereIn('status', ['new', 'queue', 'pending']).count('* as total')
      ),
      failedCallbacks: await count(
        db.from('callback_outbox').where('state', 'failed').count('* as total')
      ),
      unmatchedLines: await count(
        db.from('statement_lines').whereIn('status', ['unmatched', 'late']).count('* as total')
      ),
    }
    return view.render('admin/dashboard', { figures })
  }
}
