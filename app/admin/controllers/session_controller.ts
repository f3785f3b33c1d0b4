import type { HttpContext } from '@adonisjs/core/http'
import QRCode from 'qrcode'
import Operator from '#operators/models/operator'
import {
  checkPassword,
  endAllSessions,
  enrolTotp,
  recordFailedSignIn,
  recordSignIn,
  recordSignOut,
  type RequestOrigin,
} from '#operators/sign_in'
import { newTotpSecret, totpUri } from '#operators/totp'
import {
  clearAccountFailures,
  countFailedSignIn,
  isKnownAccount,
  signInBlock,
  type SignInBlock,
} from '#operators/sign_in_limits'
import {
  INVALID_LINK,
  operatorOfEnrolmentLink,
  setOperatorPassword,
} from '#operators/actions/set_operator_password'
import { ActionError } from '#core/validation'
import { checkSignInCode } from '#operators/actions/check_sign_in_code'
import { SIGNED_IN_AT } from '#admin/middleware/admin_auth_middleware'

const PENDING = 'admin_pending_operator'
/** The second step must follow the first within this time. */
const PENDING_TTL_MS = 5 * 60_000

/** The message of a refused attempt: only the account, or only unknown emails from the address. */
function blockMessage(block: NonNullable<SignInBlock>) {
  const minutes = Math.max(1, Math.ceil(block.seconds / 60))
  return block.reason === 'account'
    ? `Too many failed sign-ins for this account: it is locked. Try again in ${minutes} minutes, or ask an admin to unlock it.`
    : `Too many failed sign-ins from this address. Try again in ${minutes} minutes.`
}

function origin(ctx: HttpContext): RequestOrigin & { ip: string } {
  return { ip: ctx.request.ip(), requestId: ctx.request.id() ?? null }
}

/** What the code field says when the second step refuses the code. */
const CODE_REFUSALS = {
  reused: 'This code was already used: wait for the next one in your app.',
  wrong: 'Wrong or expired code.',
}

/**
 * A refused password choice, flashed for the welcome page: each field's
 * error beside it, or the refusal on top (an invalid link). Null: refused.
 */
function flashRefusal(ctx: HttpContext, error: unknown): null {
  if (!(error instanceof ActionError)) throw error
  const fields = error.errors.filter((item) => item.field !== null)
  if (fields.length === 0) {
    ctx.session.flash('error', error.message)
  } else {
    ctx.session.flash(
      'inputErrorsBag',
      Object.fromEntries(fields.map((item) => [item.field, [item.message]]))
    )
  }
  return null
}

/**
 * Sign-in in two steps, both required for every role: email and password,
 * then a TOTP code (or a recovery code). An operator without a second factor
 * enrols one before the session starts. Failures lock the account alone
 * (#operators/sign_in_limits); an address is limited only in its guesses at
 * unknown emails. Failures are audited; so are sign-ins and logouts.
 */
export default class SessionController {
  async showLogin({ view }: HttpContext) {
    return view.render('admin/login')
  }

  async login(ctx: HttpContext) {
    const { request, session, response } = ctx
    const email = String(request.input('email', '')).trim().toLowerCase()
    const password = String(request.input('password', ''))
    const known = await isKnownAccount(email)

    const block = await signInBlock(email, request.ip(), known)
    if (block) {
      await recordFailedSignIn(email, 'rate_limited', origin(ctx))
      session.flashOnly(['email'])
      session.flash('error', blockMessage(block))
      return response.redirect('/admin/login')
    }

    const operator = email && password ? await checkPassword(email, password) : null
    if (!operator) {
      if (email) await countFailedSignIn(email, request.ip(), known)
      await recordFailedSignIn(email, 'password', origin(ctx))
      session.flashOnly(['email'])
      session.flash('error', 'The email or the password is wrong.')
      return response.redirect('/admin/login')
    }

    session.put(PENDING, { id: operator.id, at: Date.now() })
    return response.redirect(operator.totpEnabledAt ? '/admin/login/code' : '/admin/enrol')
  }

  /** The one-time enrolment link: the operator chooses their password. */
  async showWelcome(ctx: HttpContext) {
    const token = ctx.params.token as string
    const operator = await operatorOfEnrolmentLink(token)
    if (!operator) {
      ctx.response.status(404)
      return ctx.view.render('admin/welcome', { invalid: INVALID_LINK })
    }
    return ctx.view.render('admin/welcome', { email: operator.email, token })
  }

  async welcome(ctx: HttpContext) {
    const { request, session, response } = ctx
    const token = ctx.params.token as string
    const operator = await setOperatorPassword(
      {
        token,
        password: request.input('password', ''),
        password_confirmation: request.input('password_confirmation', ''),
      },
      origin(ctx)
    ).catch((error) => flashRefusal(ctx, error))
    if (!operator) return response.redirect(`/admin/welcome/${encodeURIComponent(token)}`)
    // Whoever was signed in on this browser is not the operator of the link.
    if (await ctx.auth.check()) await ctx.auth.use('web').logout()
    session.clear()
    session.put(PENDING, { id: operator.id, at: Date.now() })
    session.flash('success', 'Your password is set.')
    return response.redirect(operator.totpEnabledAt ? '/admin/login/code' : '/admin/enrol')
  }

  async showSecondFactor(ctx: HttpContext) {
    const operator = await this.#pendingOperator(ctx)
    if (!operator?.totpEnabledAt) return ctx.response.redirect('/admin/login')
    return ctx.view.render('admin/second_factor', { email: operator.email })
  }

  async secondFactor(ctx: HttpContext) {
    const { request, session, response } = ctx
    const operator = await this.#pendingOperator(ctx)
    if (!operator?.totpEnabledAt) return response.redirect('/admin/login')
    const check = await checkSignInCode(operator, String(request.input('code', '')), origin(ctx))
    if (check.outcome === 'blocked') {
      session.forget(PENDING)
      session.flash('error', blockMessage(check.block))
      return response.redirect('/admin/login')
    }
    if (check.outcome !== 'proved') {
      session.flash('inputErrorsBag', { code: [CODE_REFUSALS[check.outcome]] })
      return response.redirect('/admin/login/code')
    }
    await this.#signIn(ctx, operator, check.method)
    return response.redirect('/admin')
  }

  async showEnrolment(ctx: HttpContext) {
    const operator = await this.#pendingOperator(ctx)
    if (!operator || operator.totpEnabledAt) return ctx.response.redirect('/admin/login')
    // One key per enrolment attempt, kept in the session until confirmed.
    const secret: string = ctx.session.get('admin_enrol_secret') ?? newTotpSecret()
    ctx.session.put('admin_enrol_secret', secret)
    const qr = await QRCode.toDataURL(totpUri(secret, operator.email), { margin: 2, scale: 5 })
    return ctx.view.render('admin/enrol', { qr, secret })
  }

  async enrol(ctx: HttpContext) {
    const { request, session, response } = ctx
    const operator = await this.#pendingOperator(ctx)
    const secret = session.get('admin_enrol_secret')
    if (!operator || operator.totpEnabledAt || !secret) return response.redirect('/admin/login')

    const codes = await enrolTotp(
      operator.id,
      secret,
      String(request.input('code', '')),
      origin(ctx)
    )
    if (!codes) {
      session.flash('inputErrorsBag', {
        code: ['The code does not match; check the app and try again.'],
      })
      return response.redirect('/admin/enrol')
    }
    session.forget('admin_enrol_secret')
    await operator.refresh()
    await this.#signIn(ctx, operator, 'enrolment')
    session.flash('recovery_codes', codes)
    return response.redirect('/admin/recovery-codes')
  }

  async showRecoveryCodes({ view, session, response, auth }: HttpContext) {
    const codes = session.flashMessages.get('recovery_codes')
    if (!codes) return response.redirect('/admin')
    // Shown once: neither the browser nor a proxy keeps the page. The copy and
    // the .txt are made in the page from what it shows, so nothing serves the
    // codes again once it is left.
    response.header('Cache-Control', 'no-store')
    const operator = auth.user as Operator | undefined
    const email = operator?.email ?? ''
    const issued = new Date().toISOString().slice(0, 10)
    return view.render('admin/recovery_codes', {
      codes,
      email,
      issued,
      filename: `recovery-codes-${email ? `${email.replace(/[^A-Za-z0-9._-]+/g, '_')}-` : ''}${issued}.txt`,
    })
  }

  async logout(ctx: HttpContext) {
    const operator = ctx.auth.user as Operator | undefined
    if (operator) await recordSignOut(operator, false, origin(ctx))
    await ctx.auth.use('web').logout()
    ctx.session.clear()
    ctx.session.flash('success', 'You are signed out.')
    return ctx.response.redirect('/admin/login')
  }

  async logoutEverywhere(ctx: HttpContext) {
    const operator = ctx.auth.user as Operator
    await recordSignOut(operator, true, origin(ctx))
    await endAllSessions(operator.id)
    await ctx.auth.use('web').logout()
    ctx.session.clear()
    ctx.session.flash('success', 'All your sessions are signed out, on every device.')
    return ctx.response.redirect('/admin/login')
  }

  async #signIn(
    ctx: HttpContext,
    operator: Operator,
    method: 'totp' | 'recovery_code' | 'enrolment'
  ) {
    await ctx.auth.use('web').login(operator)
    ctx.session.forget(PENDING)
    ctx.session.put(SIGNED_IN_AT, Date.now())
    // Tagged with the operator: "log out everywhere" finds every session of theirs.
    await ctx.session.tag(String(operator.id))
    await clearAccountFailures(operator.email)
    await recordSignIn(operator, method, origin(ctx))
  }

  async #pendingOperator(ctx: HttpContext) {
    const pending = ctx.session.get(PENDING) as { id: number; at: number } | undefined
    if (!pending || Date.now() - pending.at > PENDING_TTL_MS) return null
    const operator = await Operator.find(pending.id)
    return operator && !operator.disabledAt ? operator : null
  }
}
