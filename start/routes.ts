/*
| Routes. The merchant API lives at the root paths of the spec; each of its
| endpoints is POST only. Any other method on them (extension methods too,
| which the router cannot list) is answered 405 by the exception handler.
*/
import router from '@adonisjs/core/services/router'
import app from '@adonisjs/core/services/app'
import type { HttpContext } from '@adonisjs/core/http'
import { adminStack, middleware } from '#start/kernel'
import '#merchant_api/context'
import type { ReplayProtection } from '#merchant_api/middleware/merchant_auth_middleware'
import { reviewRoutes } from '#start/routes/admin_review'
import { statementLineRoutes } from '#start/routes/admin_lines'

const HealthController = () => import('#merchant_api/controllers/health_controller')
const BalanceController = () => import('#merchant_api/controllers/balance_controller')
const PaymentsController = () => import('#merchant_api/controllers/payments_controller')
const PayoutsController = () => import('#merchant_api/controllers/payouts_controller')
const SlipsController = () => import('#merchant_api/controllers/slips_controller')

const PaymentPageController = () => import('#payment_page/payment_page_controller')

router.get('/health', [HealthController, 'handle'])

// Hosted payment page (customers' browsers); HTML, not the merchant envelope.
router.get('/pay/:uuid', [PaymentPageController, 'show'])
router.get('/pay/:uuid/status', [PaymentPageController, 'status'])
// The customer's slip: a multipart form whose body the controller reads itself,
// with this route's own size limit (config/bodyparser.ts processManually).
router.post('/pay/:uuid/slip', [PaymentPageController, 'uploadSlip']).use(middleware.bodyparser())
router.get('/sandbox/provider/:reference', ({ params, view }) =>
  view.render('sandbox/provider', { reference: String(params.reference).slice(0, 64) })
)

/** A controller of the merchant API, imported on first use, and its methods that handle a request. */
type LazyController<C> = () => Promise<{ default: new (...args: any[]) => C }>
type HandlerOf<C> = {
  [K in keyof C]: C[K] extends (ctx: HttpContext) => unknown ? K : never
}[keyof C]

/**
 * `replay`: what the same bytes sent again get (see ReplayProtection):
 * state-changing endpoints run a request once and answer it the same way
 * every time; reads are not guarded.
 *
 * The controllers of the merchant API hold no request's state (nor do their
 * actions): the container makes each one once per process, on its first
 * request, and the route calls that instance. Given as `[Controller,
 * 'method']`, a controller would be made again, with its dependencies, by
 * the container on every request (docs/performance.md).
 */
function merchantEndpoint<C>(
  path: string,
  [controller, method]: [LazyController<C>, HandlerOf<C>],
  replay: ReplayProtection,
  name: string
) {
  let instance: Promise<C> | undefined
  router
    .post(path, async (ctx: HttpContext) => {
      instance ??= controller().then(({ default: Controller }) => app.container.make(Controller))
      const target = await instance
      return (target[method] as (ctx: HttpContext) => unknown).call(target, ctx)
    })
    .use(middleware.merchantApi({ replay }))
    // A closure gets no name of its own: the one its controller's method gave it.
    .as(name)
}

merchantEndpoint('/balance', [BalanceController, 'handle'], 'off', 'balance')
merchantEndpoint('/payment/create', [PaymentsController, 'create'], 'once', 'payments.create')
merchantEndpoint(
  '/payment/create-transfer',
  [PaymentsController, 'createTransfer'],
  'once',
  'payments.create_transfer'
)
merchantEndpoint(
  '/payment/create-flex',
  [PaymentsController, 'createFlex'],
  'once',
  'payments.create_flex'
)
merchantEndpoint('/payment/query', [PaymentsController, 'query'], 'off', 'payments.query')
merchantEndpoint(
  '/withdraw/create',
  [PayoutsController, 'createWithdraw'],
  'once',
  'payouts.create_withdraw'
)
merchantEndpoint(
  '/withdraw/query',
  [PayoutsController, 'queryWithdraw'],
  'off',
  'payouts.query_withdraw'
)
merchantEndpoint(
  '/thb-settlement/create',
  [PayoutsController, 'createSettlement'],
  'once',
  'payouts.create_settlement'
)
merchantEndpoint(
  '/thb-settlement/query',
  [PayoutsController, 'querySettlement'],
  'off',
  'payouts.query_settlement'
)
merchantEndpoint('/slip/upload', [SlipsController, 'upload'], 'once-read-first', 'slips.upload')

/*
| Back-office. Its own middleware stack (forms, session, CSRF, auth, roles);
| every page past the login needs a signed-in operator with both factors,
| and the role each group names is checked on the server.
*/
const AssetsController = () => import('#admin/controllers/assets_controller')
const SessionController = () => import('#admin/controllers/session_controller')
const DashboardController = () => import('#admin/controllers/dashboard_controller')
const AccountController = () => import('#admin/controllers/account_controller')
const AuditController = () => import('#admin/controllers/audit_controller')
const PlatformsController = () => import('#admin/controllers/platforms_controller')
const MerchantsController = () => import('#admin/controllers/merchants_controller')
const DepositAccountsController = () => import('#admin/controllers/deposit_accounts_controller')
const OperatorsController = () => import('#admin/controllers/operators_controller')
const NotificationsController = () => import('#admin/controllers/notifications_controller')

router.get('/admin/assets/admin.css', [AssetsController, 'stylesheet'])
router.get('/admin/assets/js/:file', [AssetsController, 'script'])

router
  .group(() => {
    router
      .group(() => {
        router.get('/login', [SessionController, 'showLogin'])
        router.post('/login', [SessionController, 'login'])
        router.get('/login/code', [SessionController, 'showSecondFactor'])
        router.post('/login/code', [SessionController, 'secondFactor'])
        router.get('/enrol', [SessionController, 'showEnrolment'])
        router.post('/enrol', [SessionController, 'enrol'])
      })
      .use(middleware.adminGuest())

    // A one-time enrolment link works whoever is signed in on this browser.
    router.get('/welcome/:token', [SessionController, 'showWelcome'])
    router.post('/welcome/:token', [SessionController, 'welcome'])

    router
      .group(() => {
        router.get('/', [DashboardController, 'index'])
        router.get('/recovery-codes', [SessionController, 'showRecoveryCodes'])
        router.get('/account', [AccountController, 'show'])
        router.post('/logout', [SessionController, 'logout'])
        router.post('/logout-everywhere', [SessionController, 'logoutEverywhere'])
        router.get('/audit', [AuditController, 'index'])
        router.get('/audit.csv', [AuditController, 'export'])
        router.get('/platforms', [PlatformsController, 'index'])
      })
      .use(middleware.adminAuth({ role: 'viewer' }))

    // Configuration: admins only.
    router
      .group(() => {
        router.get('/notifications', [NotificationsController, 'index'])
        router.post('/notifications/acknowledge', [NotificationsController, 'acknowledge'])
        router.get('/operators', [OperatorsController, 'index'])
        router.post('/operators', [OperatorsController, 'store'])
        router.post('/operators/:id', [OperatorsController, 'update']).where('id', /^\d+$/)
        router.post('/operators/:id/unlock', [OperatorsController, 'unlock']).where('id', /^\d+$/)
        router.get('/platforms/new', [PlatformsController, 'create'])
        router.post('/platforms', [PlatformsController, 'store'])
        router.post('/platforms/:code', [PlatformsController, 'update'])
        router.post('/platforms/:code/deposits', [PlatformsController, 'deposits'])
        router.post('/platforms/:code/four-eyes', [PlatformsController, 'fourEyes'])

        router.get('/merchants/new', [MerchantsController, 'create'])
        router.post('/merchants', [MerchantsController, 'store'])
        router.get('/merchants/:merchantId/credentials', [MerchantsController, 'credentials'])
        router.post('/merchants/:merchantId', [MerchantsController, 'update'])
        router.post('/merchants/:merchantId/status', [MerchantsController, 'status'])
        router.post('/merchants/:merchantId/ip-whitelist', [MerchantsController, 'ipWhitelist'])
        router.post('/merchants/:merchantId/settlement-accounts', [
          MerchantsController,
          'settlementAccounts',
        ])
        router.post('/merchants/:merchantId/rotate', [MerchantsController, 'rotate'])
        router.post('/merchants/:merchantId/rotations', [MerchantsController, 'scheduleRotation'])
        router.post('/merchants/:merchantId/rotations/:rotationId/cancel', [
          MerchantsController,
          'cancelRotation',
        ])
        router
          .post('/merchants/:merchantId/handovers/:handoverId', [
            MerchantsController,
            'viewHandover',
          ])
          .where('handoverId', /^\d+$/)

        router.get('/deposit-accounts/new', [DepositAccountsController, 'create'])
        router.post('/deposit-accounts', [DepositAccountsController, 'store'])
        router.post('/deposit-accounts/maintenance', [
          DepositAccountsController,
          'scheduleMaintenance',
        ])
        router.post('/deposit-accounts/maintenance/:windowId/cancel', [
          DepositAccountsController,
          'cancelMaintenance',
        ])
        router.post('/deposit-accounts/:id', [DepositAccountsController, 'update'])
        router.post('/deposit-accounts/:id/active', [DepositAccountsController, 'active'])
      })
      .use(middleware.adminAuth({ role: 'admin' }))

    router
      .group(() => {
        router.get('/platforms/:code', [PlatformsController, 'show'])
        router.get('/merchants', [MerchantsController, 'index'])
        router.get('/merchants/:merchantId', [MerchantsController, 'show'])
        router.get('/deposit-accounts', [DepositAccountsController, 'index'])
        router.get('/deposit-accounts/:id', [DepositAccountsController, 'show'])
      })
      .use(middleware.adminAuth({ role: 'viewer' }))

    /*
    | Payouts and bank statements: payouts waiting on a bank, bulk payout
    | files, the bank's answer recorded by hand, dispatch retried, merchants
    | with a negative balance; statement uploads, imports and match rates.
    | Viewers read; operators act (literal paths before the :param ones).
    */
    const AdminPayoutsController = () => import('#admin/controllers/payouts_controller')
    const StatementsController = () => import('#admin/controllers/statements_controller')
    const StatementLayoutsController = () =>
      import('#admin/controllers/statement_layouts_controller')
    router
      .group(() => {
        router.get('/payouts', [AdminPayoutsController, 'index'])
        router
          .get('/payouts/:platformOrderId', [AdminPayoutsController, 'show'])
          .where('platformOrderId', /^[A-Za-z0-9]{24}$/)
        router.get('/statements', [StatementsController, 'index'])
        router.get('/statements/imports/:id', [StatementsController, 'show']).where('id', /^\d+$/)
        router.get('/statement-layouts', [StatementLayoutsController, 'index'])
        router
          .get('/statement-layouts/:id', [StatementLayoutsController, 'show'])
          .where('id', /^\d+$/)
      })
      .use(middleware.adminAuth({ role: 'viewer' }))
    // Statement layouts: admins define them (each version approved by a second admin).
    router
      .group(() => {
        router.get('/statement-layouts/new', [StatementLayoutsController, 'create'])
        router
          .post('/statement-layouts/new', [StatementLayoutsController, 'submit'])
          .as('statement_layouts.submit_new')
        router
          .post('/statement-layouts/:id', [StatementLayoutsController, 'submit'])
          .where('id', /^\d+$/)
          .as('statement_layouts.submit_version')
      })
      .use(middleware.adminAuth({ role: 'admin' }))
    router
      .group(() => {
        router.post('/payouts/export', [AdminPayoutsController, 'export'])
        router.get('/payouts/files/:file', [AdminPayoutsController, 'file'])
        router.post('/payouts/:platformOrderId/outcome', [AdminPayoutsController, 'outcome'])
        router.post('/payouts/:platformOrderId/retry', [AdminPayoutsController, 'retry'])
        router.post('/statements', [StatementsController, 'store'])
      })
      .use(middleware.adminAuth({ role: 'operator' }))

    /*
    | Statement sources: where each deposit account's statements are fetched
    | from (SFTP, IMAP). Viewers read (sources, fetched files); operators ask
    | for a fetch now; admins add and change sources (where statements come
    | from waits for a second admin) and switch them off.
    */
    const StatementSourcesController = () =>
      import('#admin/controllers/statement_sources_controller')
    router
      .group(() => {
        router.get('/statement-sources/new', [StatementSourcesController, 'create'])
        router.post('/statement-sources', [StatementSourcesController, 'store'])
        router
          .post('/statement-sources/:id', [StatementSourcesController, 'update'])
          .where('id', /^\d+$/)
        router
          .post('/statement-sources/:id/enabled', [StatementSourcesController, 'enabled'])
          .where('id', /^\d+$/)
      })
      .use(middleware.adminAuth({ role: 'admin' }))
    router
      .group(() => {
        router
          .post('/statement-sources/:id/fetch', [StatementSourcesController, 'fetchNow'])
          .where('id', /^\d+$/)
      })
      .use(middleware.adminAuth({ role: 'operator' }))
    router
      .group(() => {
        router.get('/statement-sources', [StatementSourcesController, 'index'])
        router.get('/statement-sources/files', [StatementSourcesController, 'files'])
        router
          .get('/statement-sources/files/:id/download', [StatementSourcesController, 'download'])
          .where('id', /^\d+$/)
        router
          .get('/statement-sources/:id', [StatementSourcesController, 'show'])
          .where('id', /^\d+$/)
      })
      .use(middleware.adminAuth({ role: 'viewer' }))

    /*
    | Reconciliation: one deposit account's bank days against the ledger, its
    | open items and exceptions, the last whole-database check; and the review
    | queue of payments credited before their bank line. Viewers read;
    | operators run the check again and account for a debit line no transfer
    | claims (the statement-line page's money-out decisions).
    */
    const ReconciliationController = () => import('#admin/controllers/reconciliation_controller')
    const ReceivablesController = () => import('#admin/controllers/receivables_controller')
    router
      .group(() => {
        router.get('/reconciliation', [ReconciliationController, 'index'])
        router.get('/review/receivables', [ReceivablesController, 'index'])
      })
      .use(middleware.adminAuth({ role: 'viewer' }))
    const StatementLinesController = () => import('#admin/controllers/statement_lines_controller')
    router
      .group(() => {
        router.post('/reconciliation/check', [ReconciliationController, 'check'])
        // A debit line nothing accounts for: it is this transfer, or explained.
        router
          .post('/review/lines/:id/confirm-debit', [StatementLinesController, 'confirmDebit'])
          .where('id', /^\d+$/)
        router
          .post('/review/lines/:id/explain-debit', [StatementLinesController, 'explainDebit'])
          .where('id', /^\d+$/)
      })
      .use(middleware.adminAuth({ role: 'operator' }))

    /*
    | Orders: search of payments, withdrawals and settlements (filters, sort,
    | pages, saved views shared with the team, CSV export of every match),
    | the order page and its slip images (never a public URL). Viewers read;
    | operators resend an order's callbacks and take back the credit of a
    | payment whose bank line never came (literal paths before :param ones).
    */
    const OrdersController = () => import('#admin/controllers/orders_controller')
    router
      .group(() => {
        router.get('/orders', [OrdersController, 'index'])
        router.get('/orders.csv', [OrdersController, 'export'])
        router.post('/orders/views', [OrdersController, 'saveView'])
        router
          .post('/orders/views/:id/delete', [OrdersController, 'deleteView'])
          .where('id', /^\d+$/)
        router
          .get('/orders/:platformOrderId', [OrdersController, 'show'])
          .where('platformOrderId', /^[A-Za-z0-9]{24}$/)
        router.get('/slips/:id/image', [OrdersController, 'slipImage']).where('id', /^\d+$/)
      })
      .use(middleware.adminAuth({ role: 'viewer' }))
    router
      .group(() => {
        router
          .post('/orders/:platformOrderId/resend-callback', [OrdersController, 'resendCallback'])
          .where('platformOrderId', /^[A-Za-z0-9]{24}$/)
        router
          .post('/orders/:platformOrderId/reverse-receivable', [
            OrdersController,
            'reverseReceivable',
          ])
          .where('platformOrderId', /^[A-Za-z0-9]{24}$/)
      })
      .use(middleware.adminAuth({ role: 'operator' }))

    // Review queues and the statement-line workbench, each in its own file.
    reviewRoutes()
    statementLineRoutes()

    /*
    | Merchant API blocks after failed authentications (addresses and
    | merchant_ids, in Redis). Viewers read; operators lift a block.
    */
    const ApiBlocksController = () => import('#admin/controllers/api_blocks_controller')
    router
      .group(() => {
        router.get('/api-blocks', [ApiBlocksController, 'index'])
      })
      .use(middleware.adminAuth({ role: 'viewer' }))
    router
      .group(() => {
        router.post('/api-blocks/clear', [ApiBlocksController, 'clear'])
      })
      .use(middleware.adminAuth({ role: 'operator' }))
  })
  .prefix('/admin')
  .use(adminStack())
