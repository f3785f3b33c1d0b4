/*
|--------------------------------------------------------------------------
| Back-office statement-line workbench (mounted under /admin by start/routes.ts)
|--------------------------------------------------------------------------
| Unmatched and late statement lines: attach to an order, return to the
| payer, credit the merchant. Viewers read; operators decide.
*/
import router from '@adonisjs/core/services/router'
import { middleware } from '#start/kernel'

const StatementLinesController = () => import('#admin/controllers/statement_lines_controller')

export function statementLineRoutes() {
  router
    .group(() => {
      router.get('/review/lines', [StatementLinesController, 'index'])
      router.get('/review/lines/:id', [StatementLinesController, 'show']).where('id', /^\d+$/)
    })
    .use(middleware.adminAuth({ role: 'viewer' }))
  router
    .group(() => {
      router.post('/review/lines/bulk', [StatementLinesController, 'bulk'])
      router
        .post('/review/lines/:id/decisions', [StatementLinesController, 'decide'])
        .where('id', /^\d+$/)
    })
    .use(middleware.adminAuth({ role: 'operator' }))
}
