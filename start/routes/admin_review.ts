/*
|--------------------------------------------------------------------------
| Back-office review queues (mounted under /admin by start/routes.ts)
|--------------------------------------------------------------------------
| Frozen orders, flagged slips, approval requests and failed callbacks, and
| the assignment of queue items ("my items"). Viewers read; operators
| decide; who may approve a request is checked by the approval action itself.
*/
import router from '@adonisjs/core/services/router'
import { middleware } from '#start/kernel'

const ReviewController = () => import('#admin/controllers/review_controller')
const FailedCallbacksController = () => import('#admin/controllers/failed_callbacks_controller')

const ORDER_ID = /^[A-Za-z0-9]{24}$/

export function reviewRoutes() {
  router
    .group(() => {
      router.on('/review').redirectToPath('/admin/review/frozen')
      router.get('/review/frozen', [ReviewController, 'frozen'])
      router.get('/review/slips', [ReviewController, 'slips'])
      router.get('/review/slips/:id', [ReviewController, 'slip']).where('id', /^\d+$/)
      router.get('/review/approvals', [ReviewController, 'approvals'])
      router.get('/review/callbacks', [FailedCallbacksController, 'index'])
    })
    .use(middleware.adminAuth({ role: 'viewer' }))
  router
    .group(() => {
      router.post('/queues/assign', [ReviewController, 'assign'])
      router.post('/review/callbacks/resend', [FailedCallbacksController, 'resend'])
      // Literal paths before the :id ones.
      router.post('/review/slips/reject', [ReviewController, 'rejectSlips'])
      router.post('/review/slips/:id/decide', [ReviewController, 'decideSlip']).where('id', /^\d+$/)
      router
        .post('/review/approvals/:id/approve', [ReviewController, 'approveRequest'])
        .where('id', /^\d+$/)
      router
        .post('/review/approvals/:id/reject', [ReviewController, 'rejectRequest'])
        .where('id', /^\d+$/)
      router
        .post('/orders/:platformOrderId/freeze', [ReviewController, 'freeze'])
        .where('platformOrderId', ORDER_ID)
      router
        .post('/orders/:platformOrderId/unfreeze', [ReviewController, 'unfreeze'])
        .where('platformOrderId', ORDER_ID)
      router
        .post('/orders/:platformOrderId/mark-paid', [ReviewController, 'markPaid'])
        .where('platformOrderId', ORDER_ID)
    })
    .use(middleware.adminAuth({ role: 'operator' }))
}
