/**
 * Set-up for the operator-decision tests: operators as the back-office
 * passes them to actions, payments created through the merchant API, slips
 * attached through the upload action, and what a decision leaves behind
 * (postings, callback rows, audit rows).
 */

import { rm } from 'node:fs/promises'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import env from '#start/env'
import Operator from '#operators/models/operator'
import PaymentOrder from '#payments/models/payment_order'
import { uploadSlip } from '#slips/actions/upload_slip'
import type { OperatorRole } from '#operators/roles'
import type { Actor } from '#core/actor'
import { authBody, signedPost, type TestMerchant } from '#tests/helpers/merchants'
import { sandboxSlip } from '#tests/helpers/slips'

/** A back-office operator and the actor the panel would pass for them. */
export async function operatorActor(email: string, role: OperatorRole = 'operator') {
  const operator = await Operator.create({
    email,
    name: email.split('@')[0],
    role,
    password: null,
  })
  const actor: Actor = {
    name: operator.actorName,
    operatorId: operator.id,
    ip: '127.0.0.1',
    requestId: null,
  }
  return { operator, actor }
}

let sequence = 0
const uuids: string[] = []

/** A payment created through /payment/create (with a notify_url, so callback rows are written). */
export async function createPayment(who: TestMerchant, amount = '100.00') {
  sequence += 1
  const response = await signedPost(
    '/payment/create',
    who,
    authBody(who, {
      merchant_order_id: `DEC${sequence}`,
      amount,
      bank: 'KTB',
      account_name: 'Customer',
      account_no: '1234567890',
      notify_url: 'https://merchant.example.test/cb',
    })
  )
  if (response.status !== 200) throw new Error(response.text)
  const order = await PaymentOrder.findByOrFail(
    'platform_order_id',
    response.json.data.platform_order_id
  )
  uuids.push(order.uuid)
  return order
}

/** The customer's slip for `order`, attached as the payment page does: the order is flagged for review. */
export async function attachSlip(
  order: PaymentOrder,
  source: 'payment_page' | 'merchant_api' = 'payment_page'
) {
  const image = await sandboxSlip({ amount: order.transferAmount })
  const { slip } = await uploadSlip({ order, image, source, actor: { name: 'customer' } })
  return slip
}

/** Removes the slip images the tests stored. */
export async function removeSlipImages() {
  const root = env.get('DRIVE_FS_ROOT') ?? app.makePath('storage')
  for (const uuid of uuids.splice(0)) {
    await rm(`${root}/slips/${uuid}`, { recursive: true, force: true })
  }
}

/** The ledger postings of `kind` for the order. */
export function postingsOf(order: PaymentOrder, kind = 'payment_paid') {
  return db
    .from('ledger_transactions')
    .where({ kind, reference_type: 'payment', reference_id: order.platformOrderId })
}

export function callbackRowsOf(order: PaymentOrder) {
  return db.from('callback_outbox').where({ order_type: 'payment', order_id: order.id })
}

export async function auditRows(action: string) {
  const rows = await db.from('audit_logs').where('action', action).orderBy('id')
  const json = (value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value)
  return rows.map((row) => ({
    ...row,
    before_values: json(row.before_values),
    after_values: json(row.after_values),
    details: json(row.details),
  }))
}

export async function balanceOf(who: TestMerchant) {
  return (await signedPost('/balance', who, authBody(who))).json.data
}
