/*
|--------------------------------------------------------------------------
| Approvable actions
|--------------------------------------------------------------------------
|
| Each action that can wait for a second operator registers itself with the
| approvals core when its module loads (app/approvals/approvable_actions.ts
| imports none of them). This preload loads them in every process, web,
| worker, Ace commands and tests, before any request is opened or decided.
| A new approvable action is added here too.
|
*/

import '#payments/actions/mark_payment_paid'
import '#merchants/actions/configure_platform'
import '#reconciliation/actions/attach_statement_line'
import '#reconciliation/actions/credit_merchant_from_line'
import '#reconciliation/actions/confirm_statement_import'
import '#payouts/actions/release_rejected_payout'
