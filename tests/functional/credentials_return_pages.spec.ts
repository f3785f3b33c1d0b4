import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import ApprovalRequest from '#approvals/models/approval_request'
import { AdminSession, signedInOverHttp } from '#tests/helpers/admin_session'
import { receiveLine, lineRow } from '#tests/helpers/lines'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  signedPost,
  type TestMerchant,
} from '#tests/helpers/merchants'

/*
 * The merchant page's rotation and the statement-line page's return over
 * real HTTPS, per role: who sees which form, what a forged POST gets, the
 * request a form opens, and the one-time view of the new credentials.
 */

const balance = (who: TestMerchant, values: { token?: string; secret?: string } = {}) => {
  const caller = { ...who, token: values.token ?? who.token }
  return signedPost('/balance', caller, authBody(caller), { secret: values.secret ?? who.secret })
}

/**
 * The page a form's redirect leads back to, with its flash (a refusal goes
 * "back", to the form's page: these requests send no Referer, so it is named).
 */
async function landing(
  session: AdminSession,
  response: { status: number; headers: Record<string, unknown> },
  page: string
) {
  if (response.status !== 302) throw new Error(`expected a redirect, got ${response.status}`)
  return session.get(page)
}

async function people() {
  const [alice, bob, olga, vera] = await Promise.all([
    signedInOverHttp('alice@example.com', 'admin'),
    signedInOverHttp('bob@example.com', 'admin'),
    signedInOverHttp('olga@example.com', 'operator'),
    signedInOverHttp('vera@example.com', 'viewer'),
  ])
  return { alice, bob, olga, vera }
}

test.group('credentials and returns in the back-office (HTTP)', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.timeout(90_000)

  test('rotate now: admins see the forms, others neither see nor can post them; a second admin approves; the requester alone sees the values, once', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const { alice, bob, olga, vera } = await people()
    const path = `/admin/merchants/${who.merchantId}`

    for (const { session } of [olga, vera]) {
      const page = await session.get(path)
      assert.equal(page.status, 200)
      assert.notInclude(page.text, 'id="rotate-form"')
      assert.notInclude(page.text, 'id="schedule-rotation-form"')
      const forged = await session.post(
        `${path}/rotate`,
        { rotate_token: 'on', rotate_secret: 'on' },
        AdminSession.csrfOf(page)
      )
      assert.equal(forged.status, 403)
    }
    const page = await alice.session.get(path)
    assert.include(page.text, 'id="rotate-form"')
    assert.include(page.text, 'id="schedule-rotation-form"')
    assert.notInclude(page.text, '/reveal"', 'no reveal of a live secret')

    const asked = await alice.session.post(
      `${path}/rotate`,
      { rotate_token: 'on', rotate_secret: 'on', rotate_comment: 'yearly' },
      AdminSession.csrfOf(page)
    )
    const after = await landing(alice.session, asked, path)
    const request = await ApprovalRequest.findByOrFail('kind', 'credential_rotation')
    assert.include(after.text, `approval request #${request.id} opened: waits for a second admin`)
    assert.equal((await balance(who)).status, 200, 'one admin changed nothing')
    const count = await db.from('merchant_credentials').where('merchant_id', who.merchant.id)
    assert.lengthOf(count, 1)

    // Bob approves from the approvals queue's form.
    const queue = await bob.session.get('/admin/review/approvals')
    const approved = await bob.session.post(
      `/admin/review/approvals/${request.id}/approve`,
      { comment: 'called the merchant', back: path },
      AdminSession.csrfOf(queue)
    )
    assert.equal(approved.status, 302)
    await request.refresh()
    assert.equal(request.status, 'approved')
    const handoverId = Number(request.result!.handover_id)

    // Only alice gets the button; bob is told who holds them, and his forged POST is refused.
    const bobs = await bob.session.get(path)
    assert.notInclude(bobs.text, `id="handover-view-${handoverId}"`)
    assert.include(bobs.text, 'id="handover-others"')
    const byBob = await bob.session.post(
      `${path}/handovers/${handoverId}`,
      {},
      AdminSession.csrfOf(bobs)
    )
    assert.equal(byBob.status, 302)
    assert.include((await landing(bob.session, byBob, path)).text, 'shown only to whoever asked')

    const alices = await alice.session.get(path)
    assert.include(alices.text, `id="handover-view-${handoverId}"`)
    const shown = await alice.session.post(
      `${path}/handovers/${handoverId}`,
      {},
      AdminSession.csrfOf(alices)
    )
    assert.equal(shown.status, 200)
    assert.equal(shown.headers['cache-control'], 'no-store')
    const token = /id="shown-token">([^<]+)</.exec(shown.text)![1]
    const secret = /id="shown-secret">([^<]+)</.exec(shown.text)![1]
    assert.include(shown.text, 'id="handover-instructions"')
    assert.equal((await balance(who, { token, secret })).status, 200)
    // Not in the session store either: the page answered the POST itself.
    const sessions = JSON.stringify(await db.from('sessions'))
    assert.notInclude(sessions, secret)

    const again = await alice.session.post(
      `${path}/handovers/${handoverId}`,
      {},
      AdminSession.csrfOf(alices)
    )
    assert.equal(again.status, 302)
    const refused = await landing(alice.session, again, path)
    assert.include(refused.text, 'were already shown')
    assert.notInclude(refused.text, secret)
    assert.notInclude((await alice.session.get(path)).text, `id="handover-view-${handoverId}"`)
  })

  test('return to the payer: operators see the form, a viewer neither sees nor can post it; the request waits for an admin on the line page', async ({
    assert,
  }) => {
    await createDepositMerchant()
    const account = await createDepositAccount()
    const line = await receiveLine(account.id, { amount: 1_500_00 })
    const { alice, olga, vera } = await people()
    const path = `/admin/review/lines/${line.id}`
    const form = {
      decision: 'return',
      bank: 'KTB',
      account_no: '9876543210',
      account_name: 'Somchai Jaidee',
      reason_code: 'no_matching_order',
      comment: 'nobody claims it',
    }

    const viewerPage = await vera.session.get(path)
    assert.equal(viewerPage.status, 200)
    assert.notInclude(viewerPage.text, 'id="return-form"')
    const forged = await vera.session.post(
      `${path}/decisions`,
      form,
      AdminSession.csrfOf(viewerPage)
    )
    assert.equal(forged.status, 403)

    const olgas = await olga.session.get(path)
    assert.include(olgas.text, 'id="return-form"')
    // A bad account number: refused beside its field, what was typed kept.
    const bad = await olga.session.post(
      `${path}/decisions`,
      { ...form, account_no: '12ab' },
      AdminSession.csrfOf(olgas)
    )
    const badPage = await landing(olga.session, bad, path)
    assert.include(badPage.text, 'account_no must be 10 to 15 digits')
    assert.include(badPage.text, 'value="12ab"')
    assert.lengthOf(await ApprovalRequest.all(), 0)

    const asked = await olga.session.post(`${path}/decisions`, form, AdminSession.csrfOf(olgas))
    const after = await landing(olga.session, asked, path)
    const request = await ApprovalRequest.findByOrFail('action', 'statement_line.return')
    assert.include(after.text, `approval request #${request.id} opened: waits for a second admin`)
    assert.isNull((await lineRow(line.id)).decision)
    assert.lengthOf(await db.from('ledger_transactions').where('kind', 'statement_line_return'), 0)
    // Olga (an operator, and the requester) may only withdraw; the admin may approve.
    assert.notInclude(after.text, `id="approve-request-${request.id}"`)
    assert.notInclude(after.text, 'id="return-form"', 'no second decision while one waits')
    const adminPage = await alice.session.get(path)
    assert.include(adminPage.text, `id="approve-request-${request.id}"`)
    assert.include(adminPage.text, 'KTB 9876543210 (Somchai Jaidee)')

    const approved = await alice.session.post(
      `/admin/review/approvals/${request.id}/approve`,
      { comment: 'payer confirmed by phone', back: path },
      AdminSession.csrfOf(adminPage)
    )
    assert.equal(approved.status, 302)
    const row = await lineRow(line.id)
    assert.equal(row.decision, 'returned')
    assert.equal(row.return_account_no, '9876543210')
    assert.lengthOf(await db.from('ledger_transactions').where('kind', 'statement_line_return'), 1)
  })
})
