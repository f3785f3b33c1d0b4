import env from '#start/env'
import { defineConfig, transports } from '@adonisjs/mail'
import { LogTransport } from '#notifications/log_mail_transport'
import type { InferMailers } from '@adonisjs/mail/types'

/**
 * Mail to operators: enrolment links to the operator's own address, and the
 * notices of sensitive requests and break-glass uses to every other admin.
 * Production sends over SMTP (MAIL_MAILER=smtp); the development default
 * writes each message to the server's log instead, never to a page.
 */
const mailConfig = defineConfig({
  default: env.get('MAIL_MAILER', env.get('NODE_ENV') === 'production' ? 'smtp' : 'log'),
  from: { address: env.get('MAIL_FROM', 'gateway@localhost'), name: 'THB Gateway' },
  mailers: {
    smtp: transports.smtp({
      host: env.get('SMTP_HOST', '127.0.0.1'),
      port: env.get('SMTP_PORT', 587),
      secure: env.get('SMTP_SECURE', false),
      ...(env.get('SMTP_USERNAME')
        ? {
            auth: {
              type: 'login' as const,
              user: env.get('SMTP_USERNAME')!,
              pass: env.get('SMTP_PASSWORD')?.release() ?? '',
            },
          }
        : {}),
      // A local relay in tests and development has a self-signed certificate.
      tls: { rejectUnauthorized: env.get('NODE_ENV') === 'production' },
    }),
    log: () => new LogTransport(),
  },
})

export default mailConfig

declare module '@adonisjs/mail/types' {
  export interface MailersList extends InferMailers<typeof mailConfig> {}
}
