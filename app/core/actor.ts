import { userInfo } from 'node:os'

/**
 * Who did something, as the audit log and the order timeline show it, with
 * where the request came from when it came over HTTP.
 */
export interface Actor {
  /** "cli:<os user>", "operator:<email>", "system" (the worker), "merchant:<merchant_id>". */
  name: string
  /** The operator's id when an operator acted in the back-office. */
  operatorId?: number | null
  ip?: string | null
  requestId?: string | null
}

/** The actor of a command typed by an operator on a server. */
export function cliActor(): Actor {
  let name = 'unknown'
  try {
    name = userInfo().username
  } catch {}
  return { name: `cli:${name}` }
}

/** The worker and the gateway's own automation. */
export const SYSTEM: Actor = { name: 'system' }

export function merchantActor(merchantId: string): Actor {
  return { name: `merchant:${merchantId}` }
}
