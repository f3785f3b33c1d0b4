/*
| HTTP kernel: the error handler and the middleware stacks.
*/
import router from '@adonisjs/core/services/router'
import server from '@adonisjs/core/services/server'

server.errorHandler(() => import('#exceptions/handler'))

/** Runs on every request, matched by a route or not. */
server.use([
  () => import('#middleware/request_logger_middleware'),
  () => import('#middleware/container_bindings_middleware'),
])

/** Runs on every request with a route. The merchant API reads its own body. */
router.use([])

export const middleware = router.named({
  merchantHttps: () => import('#middleware/merchant_https_middleware'),
  merchantBody: () => import('#middleware/merchant_body_middleware'),
  merchantAuth: () => import('#middleware/merchant_auth_middleware'),
})
