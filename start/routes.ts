/*
| Routes. The merchant API lives at the root paths of the spec; each of its
| endpoints is POST only and answers other methods with 405 in the envelope.
*/
import router from '@adonisjs/core/services/router'
import { middleware } from '#start/kernel'
import { GatewayError } from '#exceptions/gateway_error'
import '#merchant_api/context'

const HealthController = () => import('#controllers/health_controller')
const BalanceController = () => import('#controllers/balance_controller')
const PaymentsController = () => import('#controllers/payments_controller')
const PayoutsController = () => import('#controllers/payouts_controller')

const PaymentPageController = () => import('#controllers/payment_page_controller')

router.get('/health', [HealthController, 'handle'])

// Hosted payment page (customers' browsers); HTML, not the merchant envelope.
router.get('/pay/:uuid', [PaymentPageController, 'show'])
router.get('/pay/:uuid/status', [PaymentPageController, 'status'])
router.get('/sandbox/provider/:reference', ({ params, view }) =>
  view.render('sandbox/provider', { reference: String(params.reference).slice(0, 64) })
)

const OTHER_METHODS = ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']

function merchantEndpoint(path: string, handler: Parameters<typeof router.post>[1]) {
  router
    .post(path, handler)
    .use([middleware.merchantHttps(), middleware.merchantBody(), middleware.merchantAuth()])

  router
    .route(path, OTHER_METHODS, ({ request, response }) => {
      response.header('Allow', 'POST')
      throw new GatewayError(
        405,
        'method-not-allowed',
        `${request.method()} is not allowed on ${path}; use POST`
      )
    })
    .use([middleware.merchantHttps()])
}

merchantEndpoint('/balance', [BalanceController, 'handle'])
merchantEndpoint('/payment/create', [PaymentsController, 'create'])
merchantEndpoint('/payment/create-transfer', [PaymentsController, 'createTransfer'])
merchantEndpoint('/payment/create-flex', [PaymentsController, 'createFlex'])
merchantEndpoint('/payment/query', [PaymentsController, 'query'])
merchantEndpoint('/withdraw/create', [PayoutsController, 'createWithdraw'])
merchantEndpoint('/withdraw/query', [PayoutsController, 'queryWithdraw'])
merchantEndpoint('/thb-settlement/create', [PayoutsController, 'createSettlement'])
merchantEndpoint('/thb-settlement/query', [PayoutsController, 'querySettlement'])
