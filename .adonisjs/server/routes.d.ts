import '@adonisjs/core/types/http'

type ParamValue = string | number | bigint | boolean

export type ScannedRoutes = {
  ALL: {
    'health': { paramsTuple?: []; params?: {} }
    'payment_page.show': { paramsTuple: [ParamValue]; params: {'uuid': ParamValue} }
    'payment_page.status': { paramsTuple: [ParamValue]; params: {'uuid': ParamValue} }
    'balance': { paramsTuple?: []; params?: {} }
    'payments.create': { paramsTuple?: []; params?: {} }
    'payments.create_transfer': { paramsTuple?: []; params?: {} }
    'payments.create_flex': { paramsTuple?: []; params?: {} }
    'payments.query': { paramsTuple?: []; params?: {} }
    'payouts.create_withdraw': { paramsTuple?: []; params?: {} }
    'payouts.query_withdraw': { paramsTuple?: []; params?: {} }
    'payouts.create_settlement': { paramsTuple?: []; params?: {} }
    'payouts.query_settlement': { paramsTuple?: []; params?: {} }
  }
  GET: {
    'health': { paramsTuple?: []; params?: {} }
    'payment_page.show': { paramsTuple: [ParamValue]; params: {'uuid': ParamValue} }
    'payment_page.status': { paramsTuple: [ParamValue]; params: {'uuid': ParamValue} }
  }
  HEAD: {
    'health': { paramsTuple?: []; params?: {} }
    'payment_page.show': { paramsTuple: [ParamValue]; params: {'uuid': ParamValue} }
    'payment_page.status': { paramsTuple: [ParamValue]; params: {'uuid': ParamValue} }
  }
  POST: {
    'balance': { paramsTuple?: []; params?: {} }
    'payments.create': { paramsTuple?: []; params?: {} }
    'payments.create_transfer': { paramsTuple?: []; params?: {} }
    'payments.create_flex': { paramsTuple?: []; params?: {} }
    'payments.query': { paramsTuple?: []; params?: {} }
    'payouts.create_withdraw': { paramsTuple?: []; params?: {} }
    'payouts.query_withdraw': { paramsTuple?: []; params?: {} }
    'payouts.create_settlement': { paramsTuple?: []; params?: {} }
    'payouts.query_settlement': { paramsTuple?: []; params?: {} }
  }
  PUT: {
  }
  PATCH: {
  }
  DELETE: {
  }
  OPTIONS: {
  }
}
declare module '@adonisjs/core/types/http' {
  export interface RoutesList extends ScannedRoutes {}
}