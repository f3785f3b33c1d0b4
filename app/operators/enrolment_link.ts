import { createHash } from 'node:crypto'
import { DateTime } from 'luxon'
import adminConfig from '#config/admin'
import { randomString } from '#core/random'
import type Operator from '#operators/models/operator'

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
