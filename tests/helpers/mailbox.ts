import { SMTPServer } from 'smtp-server'
import type { AddressInfo } from 'node:net'

/**
 * A local SMTP server in the test process: the gateway sends over real SMTP
 * (MAIL_MAILER=smtp) and tests read what arrived. Started by bin/test.ts
 * before the application boots, so every process the tests start (which
 * inherit the environment) delivers here too.
 */
export interface ReceivedMail {
  from: string
  to: string[]
  raw: string
  subject: string
  text: string
}

const received: ReceivedMail[] = []
const waiters = new Set<() => void>()

function parse(raw: string, from: string, to: string[]): ReceivedMail {
  const [head, ...body] = raw.split(/\r?\n\r?\n/)
  const unfolded = head.replace(/\r?\n[ \t]+/g, ' ')
  const subject = /^subject:\s*(.*)$/im.exec(unfolded)?.[1] ?? ''
  let text = body.join('\n\n')
  if (/content-transfer-encoding:\s*quoted-printable/i.test(unfolded)) {
    text = Buffer.from(
      text
        .replace(/=\r?\n/g, '')
        .replace(/=([0-9A-F]{2})/gi, (_, hex) => String.fromCharCode(Number.parseInt(hex, 16))),
      'latin1'
    ).toString('utf8')
  } else if (/content-transfer-encoding:\s*base64/i.test(unfolded)) {
    text = Buffer.from(text.replace(/\s+/g, ''), 'base64').toString('utf8')
  }
  return { from, to, raw, subject: decodeWords(subject), text }
}

/** RFC 2047 encoded words in a header ("=?UTF-8?Q?...?="). */
function decodeWords(value: string) {
  return value.replace(/=\?utf-8\?([QB])\?([^?]*)\?=/gi, (_, kind: string, data: string) =>
    kind.toUpperCase() === 'B'
      ? Buffer.from(data, 'base64').toString('utf8')
      : Buffer.from(
          data
            .replace(/_/g, ' ')
            .replace(/=([0-9A-F]{2})/gi, (__, hex) =>
              String.fromCharCode(Number.parseInt(hex, 16))
            ),
          'latin1'
        ).toString('utf8')
  )
}

export async function startMailbox() {
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => {
        received.push(
          parse(
            Buffer.concat(chunks).toString('utf8'),
            session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            session.envelope.rcptTo.map((r) => r.address.toLowerCase())
          )
        )
        for (const wake of waiters) wake()
        callback()
      })
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.server.address() as AddressInfo).port
  // Closed with the process: held open, it would keep the run alive.
  server.server.unref()
  return port
}

/** Mail received for `address` so far, oldest first. */
export function mailsTo(address: string) {
  return received.filter((m) => m.to.includes(address.toLowerCase()))
}

/**
 * The first mail to `address` matching `test` that arrived, waiting for it
 * (mail is sent after a commit, asynchronously); null after `timeoutMs`.
 */
export async function waitForMail(
  address: string,
  test: (mail: ReceivedMail) => boolean = () => true,
  timeoutMs = 10_000
) {
  const find = () => mailsTo(address).find(test) ?? null
  const deadline = Date.now() + timeoutMs
  let found = find()
  while (!found && Date.now() < deadline) {
    await new Promise<void>((resolve) => {
      const wake = () => {
        waiters.delete(wake)
        clearTimeout(timer)
        resolve()
      }
      const timer = setTimeout(wake, Math.max(1, deadline - Date.now()))
      waiters.add(wake)
    })
    found = find()
  }
  return found
}
