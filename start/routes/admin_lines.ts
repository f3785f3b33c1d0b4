/*
|--------------------------------------------------------------------------
| Back-office statement-line workbench (mounted under /admin by start/routes.ts)
|--------------------------------------------------------------------------
| Unmatched and late statement lines: attach to an order, return to the
| payer, credit the merchant. Viewers read; operators decide.
*/
import router from '@adonisjs/core/services/router'
import { middleware } from '#start/kernel'

export function statementLineRoutes() {
  router.group(() => {}).use(middleware.adminAuth({ role: 'viewer' }))
  router.group(() => {}).use(middleware.adminAuth({ role: 'operator' }))
}
