import '@adonisjs/core/types/http'

type ParamValue = string | number | bigint | boolean

export type ScannedRoutes = {
  ALL: {
    'health': { paramsTuple?: []; params?: {} }
    'payment_page.show': { paramsTuple: [ParamValue]; params: {'uuid': ParamValue} }
    'payment_page.status': { paramsTuple: [ParamValue]; params: {'uuid': ParamValue} }
    'payment_page.upload_slip': { paramsTuple: [ParamValue]; params: {'uuid': ParamValue} }
    'balance': { paramsTuple?: []; params?: {} }
    'payments.create': { paramsTuple?: []; params?: {} }
    'payments.create_transfer': { paramsTuple?: []; params?: {} }
    'payments.create_flex': { paramsTuple?: []; params?: {} }
    'payments.query': { paramsTuple?: []; params?: {} }
    'payouts.create_withdraw': { paramsTuple?: []; params?: {} }
    'payouts.query_withdraw': { paramsTuple?: []; params?: {} }
    'payouts.create_settlement': { paramsTuple?: []; params?: {} }
    'payouts.query_settlement': { paramsTuple?: []; params?: {} }
    'slips.upload': { paramsTuple?: []; params?: {} }
    'assets.stylesheet': { paramsTuple?: []; params?: {} }
    'assets.script': { paramsTuple: [ParamValue]; params: {'file': ParamValue} }
    'session.show_login': { paramsTuple?: []; params?: {} }
    'session.login': { paramsTuple?: []; params?: {} }
    'session.show_second_factor': { paramsTuple?: []; params?: {} }
    'session.second_factor': { paramsTuple?: []; params?: {} }
    'session.show_enrolment': { paramsTuple?: []; params?: {} }
    'session.enrol': { paramsTuple?: []; params?: {} }
    'session.show_welcome': { paramsTuple: [ParamValue]; params: {'token': ParamValue} }
    'session.welcome': { paramsTuple: [ParamValue]; params: {'token': ParamValue} }
    'dashboard.index': { paramsTuple?: []; params?: {} }
    'session.show_recovery_codes': { paramsTuple?: []; params?: {} }
    'account.show': { paramsTuple?: []; params?: {} }
    'session.logout': { paramsTuple?: []; params?: {} }
    'session.logout_everywhere': { paramsTuple?: []; params?: {} }
    'audit.index': { paramsTuple?: []; params?: {} }
    'audit.export': { paramsTuple?: []; params?: {} }
    'platforms.index': { paramsTuple?: []; params?: {} }
    'notifications.index': { paramsTuple?: []; params?: {} }
    'notifications.acknowledge': { paramsTuple?: []; params?: {} }
    'operators.index': { paramsTuple?: []; params?: {} }
    'operators.store': { paramsTuple?: []; params?: {} }
    'operators.update': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'operators.unlock': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'platforms.create': { paramsTuple?: []; params?: {} }
    'platforms.store': { paramsTuple?: []; params?: {} }
    'platforms.update': { paramsTuple: [ParamValue]; params: {'code': ParamValue} }
    'platforms.deposits': { paramsTuple: [ParamValue]; params: {'code': ParamValue} }
    'platforms.four_eyes': { paramsTuple: [ParamValue]; params: {'code': ParamValue} }
    'merchants.create': { paramsTuple?: []; params?: {} }
    'merchants.store': { paramsTuple?: []; params?: {} }
    'merchants.credentials': { paramsTuple: [ParamValue]; params: {'merchantId': ParamValue} }
    'merchants.update': { paramsTuple: [ParamValue]; params: {'merchantId': ParamValue} }
    'merchants.status': { paramsTuple: [ParamValue]; params: {'merchantId': ParamValue} }
    'merchants.ip_whitelist': { paramsTuple: [ParamValue]; params: {'merchantId': ParamValue} }
    'merchants.settlement_accounts': { paramsTuple: [ParamValue]; params: {'merchantId': ParamValue} }
    'merchants.rotate': { paramsTuple: [ParamValue]; params: {'merchantId': ParamValue} }
    'merchants.schedule_rotation': { paramsTuple: [ParamValue]; params: {'merchantId': ParamValue} }
    'merchants.cancel_rotation': { paramsTuple: [ParamValue,ParamValue]; params: {'merchantId': ParamValue,'rotationId': ParamValue} }
    'merchants.view_handover': { paramsTuple: [ParamValue,ParamValue]; params: {'merchantId': ParamValue,'handoverId': ParamValue} }
    'deposit_accounts.create': { paramsTuple?: []; params?: {} }
    'deposit_accounts.store': { paramsTuple?: []; params?: {} }
    'deposit_accounts.schedule_maintenance': { paramsTuple?: []; params?: {} }
    'deposit_accounts.cancel_maintenance': { paramsTuple: [ParamValue]; params: {'windowId': ParamValue} }
    'deposit_accounts.update': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'deposit_accounts.active': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'platforms.show': { paramsTuple: [ParamValue]; params: {'code': ParamValue} }
    'merchants.index': { paramsTuple?: []; params?: {} }
    'merchants.show': { paramsTuple: [ParamValue]; params: {'merchantId': ParamValue} }
    'deposit_accounts.index': { paramsTuple?: []; params?: {} }
    'deposit_accounts.show': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'admin_payouts.index': { paramsTuple?: []; params?: {} }
    'admin_payouts.show': { paramsTuple: [ParamValue]; params: {'platformOrderId': ParamValue} }
    'statements.index': { paramsTuple?: []; params?: {} }
    'statements.show': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'statement_layouts.index': { paramsTuple?: []; params?: {} }
    'statement_layouts.show': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'statement_layouts.create': { paramsTuple?: []; params?: {} }
    'statement_layouts.submit_new': { paramsTuple?: []; params?: {} }
    'statement_layouts.submit_version': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'admin_payouts.export': { paramsTuple?: []; params?: {} }
    'admin_payouts.file': { paramsTuple: [ParamValue]; params: {'file': ParamValue} }
    'admin_payouts.outcome': { paramsTuple: [ParamValue]; params: {'platformOrderId': ParamValue} }
    'admin_payouts.retry': { paramsTuple: [ParamValue]; params: {'platformOrderId': ParamValue} }
    'statements.store': { paramsTuple?: []; params?: {} }
    'statement_sources.create': { paramsTuple?: []; params?: {} }
    'statement_sources.store': { paramsTuple?: []; params?: {} }
    'statement_sources.update': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'statement_sources.enabled': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'statement_sources.fetch_now': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'statement_sources.index': { paramsTuple?: []; params?: {} }
    'statement_sources.files': { paramsTuple?: []; params?: {} }
    'statement_sources.download': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'statement_sources.show': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'reconciliation.index': { paramsTuple?: []; params?: {} }
    'receivables.index': { paramsTuple?: []; params?: {} }
    'reconciliation.check': { paramsTuple?: []; params?: {} }
    'statement_lines.confirm_debit': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'statement_lines.explain_debit': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'orders.index': { paramsTuple?: []; params?: {} }
    'orders.export': { paramsTuple?: []; params?: {} }
    'orders.save_view': { paramsTuple?: []; params?: {} }
    'orders.delete_view': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'orders.show': { paramsTuple: [ParamValue]; params: {'platformOrderId': ParamValue} }
    'orders.slip_image': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'orders.resend_callback': { paramsTuple: [ParamValue]; params: {'platformOrderId': ParamValue} }
    'orders.reverse_receivable': { paramsTuple: [ParamValue]; params: {'platformOrderId': ParamValue} }
    'review.frozen': { paramsTuple?: []; params?: {} }
    'review.slips': { paramsTuple?: []; params?: {} }
    'review.slip': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'review.approvals': { paramsTuple?: []; params?: {} }
    'failed_callbacks.index': { paramsTuple?: []; params?: {} }
    'review.assign': { paramsTuple?: []; params?: {} }
    'failed_callbacks.resend': { paramsTuple?: []; params?: {} }
    'review.reject_slips': { paramsTuple?: []; params?: {} }
    'review.decide_slip': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'review.approve_request': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'review.reject_request': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'review.freeze': { paramsTuple: [ParamValue]; params: {'platformOrderId': ParamValue} }
    'review.unfreeze': { paramsTuple: [ParamValue]; params: {'platformOrderId': ParamValue} }
    'review.mark_paid': { paramsTuple: [ParamValue]; params: {'platformOrderId': ParamValue} }
    'statement_lines.index': { paramsTuple?: []; params?: {} }
    'statement_lines.show': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'statement_lines.bulk': { paramsTuple?: []; params?: {} }
    'statement_lines.decide': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'api_blocks.index': { paramsTuple?: []; params?: {} }
    'api_blocks.clear': { paramsTuple?: []; params?: {} }
  }
  GET: {
    'health': { paramsTuple?: []; params?: {} }
    'payment_page.show': { paramsTuple: [ParamValue]; params: {'uuid': ParamValue} }
    'payment_page.status': { paramsTuple: [ParamValue]; params: {'uuid': ParamValue} }
    'assets.stylesheet': { paramsTuple?: []; params?: {} }
    'assets.script': { paramsTuple: [ParamValue]; params: {'file': ParamValue} }
    'session.show_login': { paramsTuple?: []; params?: {} }
    'session.show_second_factor': { paramsTuple?: []; params?: {} }
    'session.show_enrolment': { paramsTuple?: []; params?: {} }
    'session.show_welcome': { paramsTuple: [ParamValue]; params: {'token': ParamValue} }
    'dashboard.index': { paramsTuple?: []; params?: {} }
    'session.show_recovery_codes': { paramsTuple?: []; params?: {} }
    'account.show': { paramsTuple?: []; params?: {} }
    'audit.index': { paramsTuple?: []; params?: {} }
    'audit.export': { paramsTuple?: []; params?: {} }
    'platforms.index': { paramsTuple?: []; params?: {} }
    'notifications.index': { paramsTuple?: []; params?: {} }
    'operators.index': { paramsTuple?: []; params?: {} }
    'platforms.create': { paramsTuple?: []; params?: {} }
    'merchants.create': { paramsTuple?: []; params?: {} }
    'merchants.credentials': { paramsTuple: [ParamValue]; params: {'merchantId': ParamValue} }
    'deposit_accounts.create': { paramsTuple?: []; params?: {} }
    'platforms.show': { paramsTuple: [ParamValue]; params: {'code': ParamValue} }
    'merchants.index': { paramsTuple?: []; params?: {} }
    'merchants.show': { paramsTuple: [ParamValue]; params: {'merchantId': ParamValue} }
    'deposit_accounts.index': { paramsTuple?: []; params?: {} }
    'deposit_accounts.show': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'admin_payouts.index': { paramsTuple?: []; params?: {} }
    'admin_payouts.show': { paramsTuple: [ParamValue]; params: {'platformOrderId': ParamValue} }
    'statements.index': { paramsTuple?: []; params?: {} }
    'statements.show': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'statement_layouts.index': { paramsTuple?: []; params?: {} }
    'statement_layouts.show': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'statement_layouts.create': { paramsTuple?: []; params?: {} }
    'admin_payouts.file': { paramsTuple: [ParamValue]; params: {'file': ParamValue} }
    'statement_sources.create': { paramsTuple?: []; params?: {} }
    'statement_sources.index': { paramsTuple?: []; params?: {} }
    'statement_sources.files': { paramsTuple?: []; params?: {} }
    'statement_sources.download': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'statement_sources.show': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'reconciliation.index': { paramsTuple?: []; params?: {} }
    'receivables.index': { paramsTuple?: []; params?: {} }
    'orders.index': { paramsTuple?: []; params?: {} }
    'orders.export': { paramsTuple?: []; params?: {} }
    'orders.show': { paramsTuple: [ParamValue]; params: {'platformOrderId': ParamValue} }
    'orders.slip_image': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'review.frozen': { paramsTuple?: []; params?: {} }
    'review.slips': { paramsTuple?: []; params?: {} }
    'review.slip': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'review.approvals': { paramsTuple?: []; params?: {} }
    'failed_callbacks.index': { paramsTuple?: []; params?: {} }
    'statement_lines.index': { paramsTuple?: []; params?: {} }
    'statement_lines.show': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'api_blocks.index': { paramsTuple?: []; params?: {} }
  }
  HEAD: {
    'health': { paramsTuple?: []; params?: {} }
    'payment_page.show': { paramsTuple: [ParamValue]; params: {'uuid': ParamValue} }
    'payment_page.status': { paramsTuple: [ParamValue]; params: {'uuid': ParamValue} }
    'assets.stylesheet': { paramsTuple?: []; params?: {} }
    'assets.script': { paramsTuple: [ParamValue]; params: {'file': ParamValue} }
    'session.show_login': { paramsTuple?: []; params?: {} }
    'session.show_second_factor': { paramsTuple?: []; params?: {} }
    'session.show_enrolment': { paramsTuple?: []; params?: {} }
    'session.show_welcome': { paramsTuple: [ParamValue]; params: {'token': ParamValue} }
    'dashboard.index': { paramsTuple?: []; params?: {} }
    'session.show_recovery_codes': { paramsTuple?: []; params?: {} }
    'account.show': { paramsTuple?: []; params?: {} }
    'audit.index': { paramsTuple?: []; params?: {} }
    'audit.export': { paramsTuple?: []; params?: {} }
    'platforms.index': { paramsTuple?: []; params?: {} }
    'notifications.index': { paramsTuple?: []; params?: {} }
    'operators.index': { paramsTuple?: []; params?: {} }
    'platforms.create': { paramsTuple?: []; params?: {} }
    'merchants.create': { paramsTuple?: []; params?: {} }
    'merchants.credentials': { paramsTuple: [ParamValue]; params: {'merchantId': ParamValue} }
    'deposit_accounts.create': { paramsTuple?: []; params?: {} }
    'platforms.show': { paramsTuple: [ParamValue]; params: {'code': ParamValue} }
    'merchants.index': { paramsTuple?: []; params?: {} }
    'merchants.show': { paramsTuple: [ParamValue]; params: {'merchantId': ParamValue} }
    'deposit_accounts.index': { paramsTuple?: []; params?: {} }
    'deposit_accounts.show': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'admin_payouts.index': { paramsTuple?: []; params?: {} }
    'admin_payouts.show': { paramsTuple: [ParamValue]; params: {'platformOrderId': ParamValue} }
    'statements.index': { paramsTuple?: []; params?: {} }
    'statements.show': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'statement_layouts.index': { paramsTuple?: []; params?: {} }
    'statement_layouts.show': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'statement_layouts.create': { paramsTuple?: []; params?: {} }
    'admin_payouts.file': { paramsTuple: [ParamValue]; params: {'file': ParamValue} }
    'statement_sources.create': { paramsTuple?: []; params?: {} }
    'statement_sources.index': { paramsTuple?: []; params?: {} }
    'statement_sources.files': { paramsTuple?: []; params?: {} }
    'statement_sources.download': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'statement_sources.show': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'reconciliation.index': { paramsTuple?: []; params?: {} }
    'receivables.index': { paramsTuple?: []; params?: {} }
    'orders.index': { paramsTuple?: []; params?: {} }
    'orders.export': { paramsTuple?: []; params?: {} }
    'orders.show': { paramsTuple: [ParamValue]; params: {'platformOrderId': ParamValue} }
    'orders.slip_image': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'review.frozen': { paramsTuple?: []; params?: {} }
    'review.slips': { paramsTuple?: []; params?: {} }
    'review.slip': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'review.approvals': { paramsTuple?: []; params?: {} }
    'failed_callbacks.index': { paramsTuple?: []; params?: {} }
    'statement_lines.index': { paramsTuple?: []; params?: {} }
    'statement_lines.show': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'api_blocks.index': { paramsTuple?: []; params?: {} }
  }
  POST: {
    'payment_page.upload_slip': { paramsTuple: [ParamValue]; params: {'uuid': ParamValue} }
    'balance': { paramsTuple?: []; params?: {} }
    'payments.create': { paramsTuple?: []; params?: {} }
    'payments.create_transfer': { paramsTuple?: []; params?: {} }
    'payments.create_flex': { paramsTuple?: []; params?: {} }
    'payments.query': { paramsTuple?: []; params?: {} }
    'payouts.create_withdraw': { paramsTuple?: []; params?: {} }
    'payouts.query_withdraw': { paramsTuple?: []; params?: {} }
    'payouts.create_settlement': { paramsTuple?: []; params?: {} }
    'payouts.query_settlement': { paramsTuple?: []; params?: {} }
    'slips.upload': { paramsTuple?: []; params?: {} }
    'session.login': { paramsTuple?: []; params?: {} }
    'session.second_factor': { paramsTuple?: []; params?: {} }
    'session.enrol': { paramsTuple?: []; params?: {} }
    'session.welcome': { paramsTuple: [ParamValue]; params: {'token': ParamValue} }
    'session.logout': { paramsTuple?: []; params?: {} }
    'session.logout_everywhere': { paramsTuple?: []; params?: {} }
    'notifications.acknowledge': { paramsTuple?: []; params?: {} }
    'operators.store': { paramsTuple?: []; params?: {} }
    'operators.update': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'operators.unlock': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'platforms.store': { paramsTuple?: []; params?: {} }
    'platforms.update': { paramsTuple: [ParamValue]; params: {'code': ParamValue} }
    'platforms.deposits': { paramsTuple: [ParamValue]; params: {'code': ParamValue} }
    'platforms.four_eyes': { paramsTuple: [ParamValue]; params: {'code': ParamValue} }
    'merchants.store': { paramsTuple?: []; params?: {} }
    'merchants.update': { paramsTuple: [ParamValue]; params: {'merchantId': ParamValue} }
    'merchants.status': { paramsTuple: [ParamValue]; params: {'merchantId': ParamValue} }
    'merchants.ip_whitelist': { paramsTuple: [ParamValue]; params: {'merchantId': ParamValue} }
    'merchants.settlement_accounts': { paramsTuple: [ParamValue]; params: {'merchantId': ParamValue} }
    'merchants.rotate': { paramsTuple: [ParamValue]; params: {'merchantId': ParamValue} }
    'merchants.schedule_rotation': { paramsTuple: [ParamValue]; params: {'merchantId': ParamValue} }
    'merchants.cancel_rotation': { paramsTuple: [ParamValue,ParamValue]; params: {'merchantId': ParamValue,'rotationId': ParamValue} }
    'merchants.view_handover': { paramsTuple: [ParamValue,ParamValue]; params: {'merchantId': ParamValue,'handoverId': ParamValue} }
    'deposit_accounts.store': { paramsTuple?: []; params?: {} }
    'deposit_accounts.schedule_maintenance': { paramsTuple?: []; params?: {} }
    'deposit_accounts.cancel_maintenance': { paramsTuple: [ParamValue]; params: {'windowId': ParamValue} }
    'deposit_accounts.update': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'deposit_accounts.active': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'statement_layouts.submit_new': { paramsTuple?: []; params?: {} }
    'statement_layouts.submit_version': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'admin_payouts.export': { paramsTuple?: []; params?: {} }
    'admin_payouts.outcome': { paramsTuple: [ParamValue]; params: {'platformOrderId': ParamValue} }
    'admin_payouts.retry': { paramsTuple: [ParamValue]; params: {'platformOrderId': ParamValue} }
    'statements.store': { paramsTuple?: []; params?: {} }
    'statement_sources.store': { paramsTuple?: []; params?: {} }
    'statement_sources.update': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'statement_sources.enabled': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'statement_sources.fetch_now': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'reconciliation.check': { paramsTuple?: []; params?: {} }
    'statement_lines.confirm_debit': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'statement_lines.explain_debit': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'orders.save_view': { paramsTuple?: []; params?: {} }
    'orders.delete_view': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'orders.resend_callback': { paramsTuple: [ParamValue]; params: {'platformOrderId': ParamValue} }
    'orders.reverse_receivable': { paramsTuple: [ParamValue]; params: {'platformOrderId': ParamValue} }
    'review.assign': { paramsTuple?: []; params?: {} }
    'failed_callbacks.resend': { paramsTuple?: []; params?: {} }
    'review.reject_slips': { paramsTuple?: []; params?: {} }
    'review.decide_slip': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'review.approve_request': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'review.reject_request': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'review.freeze': { paramsTuple: [ParamValue]; params: {'platformOrderId': ParamValue} }
    'review.unfreeze': { paramsTuple: [ParamValue]; params: {'platformOrderId': ParamValue} }
    'review.mark_paid': { paramsTuple: [ParamValue]; params: {'platformOrderId': ParamValue} }
    'statement_lines.bulk': { paramsTuple?: []; params?: {} }
    'statement_lines.decide': { paramsTuple: [ParamValue]; params: {'id': ParamValue} }
    'api_blocks.clear': { paramsTuple?: []; params?: {} }
  }
}
declare module '@adonisjs/core/types/http' {
  export interface RoutesList extends ScannedRoutes {}
}