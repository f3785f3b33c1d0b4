/*
| HTTP kernel: the error handler and the middleware stacks.
*/
import router from '@adonisjs/core/services/router'
import server from '@adonisjs/core/services/server'

server.errorHandler(() => import('#exceptions/handler'))

/** Runs on every request, matched by a route or not. */
server.use([
  () => import('#metrics/http_metrics_middleware'),
  () => import('#middleware/request_logger_middleware'),
  () => import('#middleware/container_bindings_middleware'),
])

/** Runs on every request with a route. The merchant API reads its own body. */
router.use([])

/**
 * Named middleware. The merchant API's stack reads and verifies the raw body
 * itself; the back-office's stack (body parser, session, shield with CSRF,
 * auth, bouncer) is registered on the /admin group only, so that merchant
 * calls never meet cookies or CSRF checks.
 */
export const middleware = router.named({
  merchantApi: () => import('#merchant_api/middleware/merchant_api_middleware'),
  bodyparser: () => import('@adonisjs/core/bodyparser_middleware'),
  session: () => import('@adonisjs/session/session_middleware'),
  shield: () => import('@adonisjs/shield/shield_middleware'),
  initializeAuth: () => import('@adonisjs/auth/initialize_auth_middleware'),
  initializeBouncer: () => import('#admin/middleware/initialize_bouncer_middleware'),
  adminAuth: () => import('#admin/middleware/admin_auth_middleware'),
  adminGuest: () => import('#admin/middleware/admin_guest_middleware'),
  adminNoStore: () => import('#admin/middleware/admin_no_store_middleware'),
})

/**
 * The back-office's common stack, in order. First, `Cache-Control: no-store`
 * on every /admin response (pages, exports, redirects, errors).
 */
export const adminStack = () => [
  middleware.adminNoStore(),
  middleware.bodyparser(),
  middleware.session(),
  middleware.shield(),
  middleware.initializeAuth(),
  middleware.initializeBouncer(),
]
