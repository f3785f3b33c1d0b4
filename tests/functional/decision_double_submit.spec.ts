import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import Operator from '#operators/models/operator'
import PaymentOrder from '#payments/models/payment_order'
import { encryptTotpSecret, newTotpSecret } from '#operators/totp'
import { freezePayment } from '#payments/actions/freeze_payment'
import { unfreezePayment } from '#payments/actions/unfreeze_payment'
import { markPaymentPaid } from '#payments/actions/mark_payment_paid'
import { reviewSlip } from '#slips/actions/review_slip'
import { AlreadyDone } from '#core/already_done'
import { formatGatewayDateTime } from '#core/clock'
import { ActionError } from '#core/validation'
import { AdminSession } from '#tests/helpers/admin_session'
import { createOperatorWithPassword } from '#tests/helpers/admin'
import { byField, refusal } from '#tests/helpers/actions'
import {
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
} from '#tests/helpers/merchants'
import {
  attachSlip,
  auditRows,
  createPayment,
  operatorActor,
  removeSlipImages,
} from '#tests/helpers/decisions'
import { orderTimeline } from '#core/order_events'

/*
 * A second submit of the same decision (a double click, a colleague first)
 * is told what the first one did, by whom and when, as a notice beside the
 * action: never "nothing was saved" when something was.
 */

const FREEZE = { reason_code: 'suspected_fraud', comment: 'customer disputes the transfer' }
const UNFREEZE = { reason_code: 'review_cleared', comment: 'bank confirmed the transfer' }
const PAID = { reason_code: 'seen_on_statement', comment: 'credit seen in the KBank portal' }

/** "HH:MM" of an instant in Bangkok time. */
const hhmm = (at: DateTime) => formatGatewayDateTime(at)!.slice(11, 16)

/**
 * An operator with a password and a second factor, signed in over HTTP in
 * two sessions (two tabs).
 */
async function signedInTwice(email: string) {
  await createOperatorWithPassword(email, 'operator')
  const secret = newTotpSecret()
  const operator = await Operator.findByOrFail('email', email)
  operator.merge({ totpSecretEncrypted: encryptTotpSecret(secret), totpEnabledAt: DateTime.utc() })
  await operator.save()
  const first = await AdminSession.signIn(email, secret)
  // The code just used may not be used again; the test forgets it instead of waiting 30 s.
  await Operator.query().where('id', operator.id).update({ totp_last_step: null })
  const second = await AdminSession.signIn(email, secret)
  return { first, second }
}

/** The text of an element by id on a page, tags dropped. */
function textOf(html: string, id: string) {
  const match = new RegExp(`id="${id}"[^>]*>([\\s\\S]*?)</div>`).exec(html)
  return match
    ? match[1]
        .replace(/<[^>]+>/g, '')
        .replace(/&#39;|&#x27;/g, "'")
        .trim()
    : null
}

test.group('decisions: a second submit tells the truth (HTTP)', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
  })

  test('two freezes at once over HTTP: one freezes; the other says it was frozen by that operator at HH:MM, beside Freeze, as a notice', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount()
    const order = await createPayment(who)
    // One operator, two tabs (two sessions, so each answer keeps its own flash): a double click.
    const { first, second } = await signedInTwice('ops@example.com')
    const orderPath = `/admin/orders/${order.platformOrderId}`
    const tokens = [
      AdminSession.csrfOf(await first.get(orderPath)),
      AdminSession.csrfOf(await second.get(orderPath)),
    ]
    const answers = await Promise.all([
      first.post(`${orderPath}/freeze`, FREEZE, tokens[0]),
      second.post(`${orderPath}/freeze`, FREEZE, tokens[1]),
    ])
    for (const answer of answers) assert.equal(answer.status, 302)

    await order.refresh()
    assert.equal(order.status, 'freeze')
    assert.lengthOf(await auditRows('payment.freeze'), 1, 'exactly one freeze')
    const froze = (await orderTimeline('payment', order.id)).filter(
      (event) => event.toStatus === 'freeze'
    )
    assert.lengthOf(froze, 1)

    // One tab says it froze; the other says, beside Freeze, that it was frozen by you at HH:MM.
    const pages = [(await first.get(orderPath)).text, (await second.get(orderPath)).text]
    const refused = pages.filter((html) => textOf(html, 'freeze-refusal') !== null)
    const applied = pages.filter((html) => textOf(html, 'freeze-refusal') === null)
    assert.lengthOf(refused, 1, 'one submit is refused, beside the Freeze action')
    assert.lengthOf(applied, 1)
    assert.include(applied[0], `${order.platformOrderId}: frozen (now freeze).`)
    assert.equal(
      textOf(refused[0], 'freeze-refusal'),
      `${order.platformOrderId} was frozen by you at ${hhmm(froze[0].createdAt)} (GMT+7) (it was open); nothing more to do`
    )
    assert.match(refused[0], /class="flash notice action-refusal"[^>]*id="freeze-refusal"/)
    for (const html of pages) {
      assert.notInclude(html, 'Nothing was saved')
      assert.notInclude(html, 'class="flash error"')
    }
  })

  test('a colleague second: named by email; unfreeze and mark paid the same; a different outcome is an error', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount()
    const order = await createPayment(who)
    const { actor: ops } = await operatorActor('ops@example.com')
    const { actor: kim } = await operatorActor('kim@example.com')
    const id = order.platformOrderId

    await freezePayment({ platform_order_id: id, ...FREEZE }, ops)
    const frozenAgain = await refusal(freezePayment({ platform_order_id: id, ...FREEZE }, kim))
    assert.instanceOf(frozenAgain, AlreadyDone)
    assert.match(
      byField(frozenAgain).general,
      new RegExp(`^${id} was frozen by ops@example\\.com at \\d{2}:\\d{2} \\(GMT\\+7\\)`)
    )

    await unfreezePayment({ platform_order_id: id, ...UNFREEZE }, kim)
    const unfrozenAgain = await refusal(
      unfreezePayment({ platform_order_id: id, ...UNFREEZE }, ops)
    )
    assert.instanceOf(unfrozenAgain, AlreadyDone)
    assert.include(byField(unfrozenAgain).general, `${id} was unfrozen by kim@example.com at `)

    // Frozen, then marked paid from the freeze: an unfreeze submitted after is not what happened.
    await freezePayment({ platform_order_id: id, ...FREEZE }, ops)
    await markPaymentPaid({ platform_order_id: id, ...PAID }, kim)
    const notUnfrozen = await refusal(unfreezePayment({ platform_order_id: id, ...UNFREEZE }, ops))
    assert.notInstanceOf(notUnfrozen, AlreadyDone)
    assert.instanceOf(notUnfrozen, ActionError)
    assert.match(
      byField(notUnfrozen).general,
      /is no longer frozen: it was marked paid by kim@example\.com at \d{2}:\d{2} \(GMT\+7\); it is unsettled_paid and nothing was saved$/
    )

    const paidAgain = await refusal(markPaymentPaid({ platform_order_id: id, ...PAID }, ops))
    assert.instanceOf(paidAgain, AlreadyDone)
    assert.match(
      byField(paidAgain).general,
      new RegExp(
        `^${id} was marked paid by kim@example\\.com at \\d{2}:\\d{2} \\(GMT\\+7\\) \\(it is unsettled_paid\\); nothing more to do$`
      )
    )
    const fresh = await PaymentOrder.findOrFail(order.id)
    assert.equal(fresh.status, 'unsettled_paid')
  })

  test('a slip rejected twice at once: one rejection; the other names who rejected it; approving it after is an error', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount()
    const order = await createPayment(who)
    const slip = await attachSlip(order)
    const { actor: ops } = await operatorActor('ops@example.com')
    const { actor: kim } = await operatorActor('kim@example.com')
    const reject = {
      slip_id: slip.id,
      decision: 'reject',
      reason_code: 'forged_or_edited',
      comment: 'the font is wrong',
    }
    const outcomes = await Promise.allSettled([reviewSlip(reject, ops), reviewSlip(reject, ops)])
    const refused = outcomes.filter((outcome) => outcome.status === 'rejected')
    assert.lengthOf(refused, 1)
    const second = (refused[0] as PromiseRejectedResult).reason
    assert.instanceOf(second, AlreadyDone)
    assert.match(
      byField(second).general,
      new RegExp(
        `^slip ${slip.id} was rejected by you at \\d{2}:\\d{2} \\(GMT\\+7\\); nothing more to do$`
      )
    )
    const approve = await refusal(
      reviewSlip(
        { slip_id: slip.id, decision: 'approve', reason_code: 'slip_verified', comment: 'ok' },
        kim
      )
    )
    assert.notInstanceOf(approve, AlreadyDone)
    assert.match(
      byField(approve).general,
      new RegExp(
        `^slip ${slip.id} was rejected by ops@example\\.com at .*: a slip is decided once; nothing was saved$`
      )
    )
    await removeSlipImages()
  })
})
