import limiter from '@adonisjs/limiter/services/main'
import adminConfig from '#config/admin'
import Operator from '#operators/models/operator'

/**
 * The limits on failed sign-ins, in two counters:
 *
 * - per account (`account:<email>`): every failure on that email, real
 *   operator or not, counts; after `loginFailures` in the window that
 *   account alone is refused until the window passes or an admin unlocks it;
 * - per address (`unknown:<ip>`): only failures on emails that are no
 *   operator count; after `loginUnknownFailuresPerAddress` the address can
 *   no longer try unknown emails. Sign-ins of real accounts from that address
 *   go on: one person's mistakes never lock out a shift sharing an address.
 */
const accountFailures = () =>
  limiter.use({
    requests: adminConfig.loginFailures,
    duration: adminConfig.loginFailureWindow,
    blockDuration: adminConfig.loginFailureWindow,
  })

const unknownFailures = () =>
  limiter.use({
    requests: adminConfig.loginUnknownFailuresPerAddress,
    duration: adminConfig.loginFailureWindow,
    blockDuration: adminConfig.loginFailureWindow,
  })

const accountKey = (email: string) => `account:${email.trim().toLowerCase()}`
const addressKey = (ip: string) => `unknown:${ip}`

/** Seconds until the limiter allows another attempt on the key (0: not blocked). */
async function waitOf(use: typeof accountFailures, key: string) {
  const limit = use()
  return (await limit.remaining(key)) > 0 ? 0 : Math.max(1, await limit.availableIn(key))
}

/** Whether the email belongs to an operator (enabled or not). */
export async function isKnownAccount(email: string) {
  if (!email) return false
  return (await Operator.findBy('email', email.trim().toLowerCase())) !== null
}

export type SignInBlock = { reason: 'account' | 'address'; seconds: number } | null

/**
 * Whether a sign-in on `email` from `ip` is refused before any check: the
 * account is locked, or the email is unknown and the address has guessed
 * too much.
 */
export async function signInBlock(email: string, ip: string, known: boolean): Promise<SignInBlock> {
  const account = await waitOf(accountFailures, accountKey(email))
  if (account > 0) return { reason: 'account', seconds: account }
  if (!known) {
    const address = await waitOf(unknownFailures, addressKey(ip))
    if (address > 0) return { reason: 'address', seconds: address }
  }
  return null
}

/** Counts a failed sign-in: on the account, and on the address when the email is unknown. */
export async function countFailedSignIn(email: string, ip: string, known: boolean) {
  await accountFailures().increment(accountKey(email))
  if (!known) await unknownFailures().increment(addressKey(ip))
}

/** A completed sign-in clears the account's failures. */
export async function clearAccountFailures(email: string) {
  await accountFailures().delete(accountKey(email))
}

/** Seconds the account stays locked (0: not locked). */
export async function accountLockedFor(email: string) {
  return waitOf(accountFailures, accountKey(email))
}

/** Failed attempts counted on the account in the current window. */
export async function accountFailureCount(email: string) {
  const response = await accountFailures().get(accountKey(email))
  return response?.consumed ?? 0
}
