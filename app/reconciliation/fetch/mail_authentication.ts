/**
 * Whether the mail server that received a statement mail vouches for its
 * sender (RFC 8601 Authentication-Results).
 *
 * A From address is only what the mail says. Anyone who can put a mail in
 * the statements mailbox (a colleague forwarding one, a mailbox rule, a
 * forged sender) could write the bank's address. The receiving server checks
 * the DKIM signature against the bank's DNS and writes its verdict in an
 * `Authentication-Results` header under its own name (the authserv-id). We
 * trust that header only under a name we were told to trust
 * (`STATEMENT_MAIL_AUTHSERV_ID`), and only the topmost one under that name:
 * the receiving server adds its header on top, and a sender can write
 * headers of any name below it.
 *
 * A mail is vouched for when that header says `dkim=pass` for the From
 * address's domain or a parent of it (the header's `header.d`, relaxed
 * alignment as DMARC has it), or `dmarc=pass` for exactly the From domain.
 * Anything else (no header, another server's header, a failed or missing
 * DKIM result, a signature of another domain) is not: the file is then
 * treated as a person's file (held for a second operator above the
 * four-eyes threshold), not as the bank's.
 */

export interface MailVouch {
  /** The verdict that vouched, e.g. `dkim=pass header.d=kasikornbank.com`; null when none did. */
  vouchedBy: string | null
  /** Why not, in words, when nothing vouched. */
  why: string | null
}

interface ResultInfo {
  method: string
  result: string
  properties: Map<string, string>
}

/** The text without RFC 5322 comments (nested parentheses), quoted strings kept. */
function withoutComments(text: string) {
  let out = ''
  let depth = 0
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const char = text[i]
    if (quoted) {
      out += char
      if (char === '\\' && i + 1 < text.length) out += text[++i]
      else if (char === '"') quoted = false
    } else if (depth > 0) {
      if (char === '\\') i++
      else if (char === '(') depth++
      else if (char === ')') depth--
    } else if (char === '(') {
      depth = 1
      out += ' '
    } else {
      if (char === '"') quoted = true
      out += char
    }
  }
  return out
}

/** `;`-separated parts, not split inside quotes. */
function parts(text: string) {
  const found: string[] = []
  let current = ''
  let quoted = false
  for (const char of text) {
    if (char === '"') quoted = !quoted
    if (char === ';' && !quoted) {
      found.push(current)
      current = ''
    } else {
      current += char
    }
  }
  found.push(current)
  return found.map((part) => part.trim())
}

function unquote(value: string) {
  return value.startsWith('"') && value.endsWith('"') && value.length >= 2
    ? value.slice(1, -1).replace(/\\(.)/g, '$1')
    : value
}

/** One header's value as its authserv-id and its results. */
export function parseAuthenticationResults(value: string) {
  const [head = '', ...rest] = parts(withoutComments(value.replace(/\r?\n[ \t]+/g, ' ')))
  // authserv-id [ version ]
  const authservId = (head.split(/\s+/)[0] ?? '').toLowerCase()
  const results: ResultInfo[] = []
  for (const part of rest) {
    const tokens = part.match(/[^\s=]+\s*=\s*(?:"(?:[^"\\]|\\.)*"|[^\s]+)|\S+/g) ?? []
    const first = tokens.shift()
    const pair = first?.match(/^([^\s=/]+)(?:\/\d+)?\s*=\s*(\S+)$/)
    if (!pair) continue
    const properties = new Map<string, string>()
    for (const token of tokens) {
      const property = token.match(/^([^\s=]+)\s*=\s*(.+)$/)
      if (property) properties.set(property[1].toLowerCase(), unquote(property[2]).toLowerCase())
    }
    results.push({ method: pair[1].toLowerCase(), result: pair[2].toLowerCase(), properties })
  }
  return { authservId, results }
}

/** The domain of `header.i` (`@domain` or `user@domain`), or `header.d`. */
function signingDomain(properties: Map<string, string>) {
  const domain = properties.get('header.d')
  if (domain) return domain
  const identity = properties.get('header.i')
  return identity?.includes('@') ? identity.slice(identity.lastIndexOf('@') + 1) : null
}

/**
 * Reads the mail's `Authentication-Results` headers (as they stand in the
 * mail, topmost first) against the trusted authserv-ids and the From address.
 */
export function vouchForSender(
  headerValues: string[],
  fromAddress: string,
  trustedAuthservIds: string[]
): MailVouch {
  const trusted = new Set(trustedAuthservIds.map((id) => id.trim().toLowerCase()).filter(Boolean))
  if (trusted.size === 0) {
    return { vouchedBy: null, why: 'no mail server is trusted (STATEMENT_MAIL_AUTHSERV_ID)' }
  }
  const fromDomain = fromAddress.slice(fromAddress.lastIndexOf('@') + 1).toLowerCase()
  const header = headerValues
    .map(parseAuthenticationResults)
    .find((parsed) => trusted.has(parsed.authservId))
  if (!header) {
    return { vouchedBy: null, why: `no Authentication-Results from ${[...trusted].join(', ')}` }
  }
  for (const result of header.results) {
    if (result.result !== 'pass') continue
    if (result.method === 'dkim') {
      const domain = signingDomain(result.properties)
      if (domain && (fromDomain === domain || fromDomain.endsWith(`.${domain}`))) {
        return { vouchedBy: `dkim=pass header.d=${domain}`, why: null }
      }
    }
    if (result.method === 'dmarc' && result.properties.get('header.from') === fromDomain) {
      return { vouchedBy: `dmarc=pass header.from=${fromDomain}`, why: null }
    }
  }
  const said = header.results.map((result) => `${result.method}=${result.result}`).join(', ')
  return {
    vouchedBy: null,
    why: `${header.authservId} does not vouch for ${fromDomain}${said ? ` (${said})` : ''}`,
  }
}
