import { createHash } from 'node:crypto'
import { DateTime } from 'luxon'
import adminConfig from '#config/admin'
import { randomString } from '#core/random'
import type Operator from '#operators/models/operator'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import logger from '@adonisjs/core/services/logger'
import { formatGatewayDateTime } from '#core/clock'
import { sendOperatorMail } from '#notifications/mail'

/**
 * One-time enrolment links: a new operator (or one whose password was reset)
 * sets their own password through a link an admin hands over, instead of a
 * password printed in a terminal. The link carries a random token; only its
 * SHA-256 is stored, so a copy of the database opens nothing. It works once
 * and expires after ADMIN_ENROLMENT_LINK_HOURS.
 */

export function hashEnrolmentToken(token: string) {
  return createHash('sha256').update(token, 'utf8').digest('hex')
}

/** Gives the operator a new link (the previous one stops working); returns its URL. */
export function issueEnrolmentLink(operator: Operator) {
  const token = randomString(43) // ~256 bits
  operator.enrolmentTokenHash = hashEnrolmentToken(token)
  operator.enrolmentExpiresAt = DateTime.utc().plus({ hours: adminConfig.enrolmentLinkHours })
  return {
    url: `${adminConfig.publicUrl}/admin/welcome/${token}`,
    expiresAt: operator.enrolmentExpiresAt,
  }
}

/** A token is 43 letters and digits; anything else is refused before a query. */
export function isEnrolmentTokenShape(token: string) {
  return /^[A-Za-z0-9]{43}$/.test(token)
}

/**
 * Mails the link to the operator's own address once the caller's
 * transaction commits (never before: the account or the new link must
 * exist when it arrives). The back-office never shows a link: neither the
 * admin who asked nor the one who approved sees it. A failed send is
 * logged; an admin asks for a new link. Returns the address.
 */
export function mailEnrolmentLinkAfterCommit(
  trx: TransactionClientContract,
  operator: Operator,
  link: { url: string; expiresAt: DateTime },
  why: 'new_account' | 'new_link'
) {
  const until = `${formatGatewayDateTime(link.expiresAt)} (GMT+7)`
  const opening =
    why === 'new_account'
      ? `A back-office account (role ${operator.role}) was opened for you on the THB payment gateway.`
      : 'A new enrolment link was issued for your back-office account on the THB payment gateway: your previous password no longer works.'
  const text = [
    `Hello ${operator.name},`,
    '',
    opening,
    '',
    `Open this link to choose your password, then enrol an authenticator app (TOTP). It works once, until ${until}:`,
    '',
    link.url,
    '',
    'If you did not expect this mail, do not open the link and tell an admin of the gateway.',
  ].join('\n')
  const to = operator.email
  trx.after('commit', () =>
    sendOperatorMail({ to, subject: 'Your back-office enrolment link', text }).catch((error) =>
      logger.error({ err: error, to }, 'the enrolment link could not be mailed')
    )
  )
  return to
}
