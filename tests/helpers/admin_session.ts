import { DateTime } from 'luxon'
import Operator from '#operators/models/operator'
import { encryptTotpSecret, newTotpSecret, totpCode } from '#operators/totp'
import { rawRequest, type RawResponse } from '#tests/helpers/http'
import { createOperatorWithPassword, PASSWORD } from '#tests/helpers/admin'

/** A back-office session over plain HTTPS requests: its cookies, and its CSRF token. */
export class AdminSession {
  private cookies = new Map<string, string>()

  private cookieHeader() {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ')
  }

  private keep(response: RawResponse) {
    const set = response.headers['set-cookie']
    for (const line of [set ?? []].flat()) {
      const [pair] = line.split(';')
      const at = pair.indexOf('=')
      this.cookies.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim())
    }
    return response
  }

  async get(path: string) {
    return this.keep(
      await rawRequest(path, { method: 'GET', headers: { cookie: this.cookieHeader() } })
    )
  }

  async post(path: string, form: Record<string, string>, csrf: string) {
    return this.keep(
      await rawRequest(path, {
        method: 'POST',
        headers: {
          'cookie': this.cookieHeader(),
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ _csrf: csrf, ...form }).toString(),
      })
    )
  }

  /** The CSRF token of a page's first form. */
  static csrfOf(page: RawResponse) {
    const token = /name=["']_csrf["'] value=["']([^"']+)["']/.exec(page.text)?.[1]
    if (!token) throw new Error(`no CSRF token on the page (${page.status})`)
    return token
  }

  /** Signs in an operator whose password and TOTP secret are known: both steps. */
  static async signIn(email: string, secret: string) {
    const session = new AdminSession()
    const login = await session.get('/admin/login')
    const step1 = await session.post(
      '/admin/login',
      { email, password: PASSWORD },
      AdminSession.csrfOf(login)
    )
    if (step1.headers.location !== '/admin/login/code') throw new Error('password step refused')
    const codePage = await session.get('/admin/login/code')
    const step2 = await session.post(
      '/admin/login/code',
      { code: totpCode(secret) },
      AdminSession.csrfOf(codePage)
    )
    if (step2.headers.location !== '/admin') throw new Error('second factor refused')
    return session
  }
}

/**
 * An operator of `role` with a password and a second factor, signed in over
 * plain HTTPS requests (no browser): its session, id and TOTP secret.
 */
export async function signedInOverHttp(email: string, role: 'admin' | 'operator' | 'viewer') {
  await createOperatorWithPassword(email, role)
  const secret = newTotpSecret()
  const operator = await Operator.findByOrFail('email', email)
  operator.merge({ totpSecretEncrypted: encryptTotpSecret(secret), totpEnabledAt: DateTime.utc() })
  await operator.save()
  const session = await AdminSession.signIn(email, secret)
  return { session, operator, secret }
}
