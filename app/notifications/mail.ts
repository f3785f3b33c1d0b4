import mail from '@adonisjs/mail/services/main'

export interface OperatorMail {
  to: string
  subject: string
  text: string
}

/**
 * Sends one plain-text mail to an operator with the configured mailer
 * (SMTP in production, the server's log in development). Callers send
 * after their transaction commits: a mail is never the only record of
 * anything, the database is.
 */
export async function sendOperatorMail(message: OperatorMail) {
  await mail.send((m) => {
    m.to(message.to).subject(message.subject).text(message.text)
  })
}
