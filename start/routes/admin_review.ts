/*
|--------------------------------------------------------------------------
| Back-office review queues (mounted under /admin by start/routes.ts)
|--------------------------------------------------------------------------
| Frozen orders, flagged slips and approval requests, and the assignment of
| queue items ("my items"). Viewers read; operators decide; who may approve
| a request is checked by the approval action itself.
*/
import router from '@adonisjs/core/services/router'
import { middleware } from '#start/kernel'

const ReviewController = () => import('#admin/controllers/review_controller')

export function reviewRoutes() {
  router.group(() => {}).use(middleware.adminAuth({ role: 'viewer' }))
  router
    .group(() => {
      router.post('/queues/assign', [ReviewController, 'assign'])
    })
    .use(middleware.adminAuth({ role: 'operator' }))
}
