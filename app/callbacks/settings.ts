import { readFileSync } from 'node:fs'
import callbacksConfig from '#config/callbacks'

export const CALLBACK_USER_AGENT = 'THB-Gateway-Callback/1.0'
/** Bytes of the receiver's answer kept in callback_attempts.response_excerpt. */
export const RESPONSE_EXCERPT_BYTES = 1024

export interface CallbackSettings {
  /** Per-attempt limit: DNS, connect, TLS, status line and excerpt together. */
  timeoutMs: number
  /** Deliver to loopback / private / link-local targets (development, tests). */
  allowPrivateTargets: boolean
  /** PEM certificate(s) trusted in addition to the default roots. */
  extraCa: string | undefined
}

let current: CallbackSettings | undefined

function fromEnv(): CallbackSettings {
  const { caPath } = callbacksConfig
  return {
    timeoutMs: callbacksConfig.timeoutMs,
    allowPrivateTargets: callbacksConfig.allowPrivateTargets,
    // Read once: a missing file is a configuration error worth failing loudly on.
    extraCa: caPath ? readFileSync(caPath, 'utf8') : undefined,
  }
}

/** Delivery settings, read from the environment on first use. */
export function callbackSettings(): CallbackSettings {
  current ??= fromEnv()
  return current
}

/**
 * Overrides settings of this process at run time (the test suite trusts its
 * receiver's certificate and toggles the private-target guard this way).
 * Returns a function that restores the previous values.
 */
export function configureCallbacks(overrides: Partial<CallbackSettings>): () => void {
  const previous = { ...callbackSettings() }
  current = { ...previous, ...overrides }
  return () => {
    current = previous
  }
}
