import logger from '@adonisjs/core/services/logger'
import { MailResponse } from '@adonisjs/mail'
import type { MailTransportContract, NodeMailerMessage } from '@adonisjs/mail/types'

/**
 * The development mailer: each message is written to the server's log
 * (recipient, subject and text), so an enrolment link can be followed on a
 * machine with no mail relay. Never used in production (MAIL_MAILER=smtp).
 */
export class LogTransport implements MailTransportContract {
  async send(message: NodeMailerMessage) {
    const to = [message.to].flat().map((r) => (typeof r === 'string' ? r : r?.address))
    logger.info(
      { mail_to: to, subject: message.subject },
      `mail to ${to.join(', ')}: ${message.subject}\n${message.text ?? ''}`
    )
    const id = `log-${Date.now()}-${Math.random().toString(36).slice(2)}`
    return new MailResponse(id, { from: '', to: to.filter(Boolean) as string[] }, undefined)
  }
}
