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
import '#merchants/actions/rotate_credentials'
import '#merchants/actions/schedule_credential_rotation'
import '#reconciliation/actions/return_statement_line'
import '#payments/actions/create_deposit_account'
import '#payments/actions/update_deposit_account'
import '#operators/actions/create_operator'
import '#operators/actions/update_operator'
import '#merchants/actions/configure_merchant'
import '#merchants/actions/edit_settlement_accounts'
import '#merchants/actions/edit_ip_whitelist'
import '#payouts/actions/record_payout_outcome'
import '#reconciliation/actions/save_statement_layout'
import '#reconciliation/fetch/save_statement_source'
