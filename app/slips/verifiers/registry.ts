import { readFileSync } from 'node:fs'
import logger from '@adonisjs/core/services/logger'
import slipsConfig, { type SlipProvidersConfig } from '#config/slips'
import {
  SlipDelayed,
  SlipRefused,
  SlipSourceFailed,
  type SlipFacts,
  type SlipOrder,
  type SlipReference,
  type SlipRefusalReason,
  type SlipVerifier,
} from '#slips/verifiers/slip_verifier'
import { StatementVerifier } from '#slips/verifiers/statement_verifier'
import { SandboxSlipVerifier } from '#slips/verifiers/sandbox_verifier'
import { SlipOkVerifier } from '#slips/verifiers/slipok_verifier'
import { EasySlipVerifier } from '#slips/verifiers/easyslip_verifier'

type Builder = (providers: SlipProvidersConfig, ca: () => string | undefined) => SlipVerifier

/** A provider setting that must be there once the provider is named. */
function required<T>(value: T | undefined, name: string, verifier: string): T {
  if (value === undefined || value === '') {
    throw new Error(`SLIP_VERIFIERS names ${verifier}, but ${name} is not set`)
  }
  return value
}

const KNOWN: Record<string, Builder> = {
  statement: () => new StatementVerifier(),
  sandbox: () => new SandboxSlipVerifier(),
  slipok: (providers, ca) =>
    new SlipOkVerifier({
      url: providers.slipok.url,
      branchId: required(providers.slipok.branchId, 'SLIPOK_BRANCH_ID', 'slipok'),
      apiKey: required(providers.slipok.apiKey, 'SLIPOK_API_KEY', 'slipok'),
      timeoutMs: providers.timeoutMs,
      ca: ca(),
    }),
  easyslip: (providers, ca) =>
    new EasySlipVerifier({
      url: providers.easyslip.url,
      apiKey: required(providers.easyslip.apiKey, 'EASYSLIP_API_KEY', 'easyslip'),
      timeoutMs: providers.timeoutMs,
      ca: ca(),
    }),
}

/** The names SLIP_VERIFIERS accepts. */
export const SLIP_VERIFIER_NAMES = Object.keys(KNOWN)

/**
 * The sources `names` lists, in that order, with the providers' settings.
 * The CA file is read once, and only when a provider is named; a file that
 * cannot be read is a configuration error worth failing loudly on.
 */
export function buildSlipVerifiers(
  names: string[],
  providers: SlipProvidersConfig = slipsConfig.providers
): SlipVerifier[] {
  let ca: string | undefined
  const readCa = () => {
    if (ca === undefined && providers.caFile) ca = readFileSync(providers.caFile, 'utf8')
    return ca
  }
  return names.map((name) => {
    const make = KNOWN[name]
    if (!make) {
      throw new Error(
        `SLIP_VERIFIERS: unknown slip verifier "${name}" (known: ${SLIP_VERIFIER_NAMES.join(', ')})`
      )
    }
    return make(providers, readCa)
  })
}

let configured: SlipVerifier[] | undefined

/** The sources config/slips.ts names, in the order they are asked. */
export function slipVerifiers(): SlipVerifier[] {
  configured ??= buildSlipVerifiers(slipsConfig.verifiers)
  return configured
}

/**
 * Replaces this process's sources (the test suite points them at its local
 * provider server this way). Returns a function that restores the previous ones.
 */
export function configureSlipVerifiers(verifiers: SlipVerifier[]): () => void {
  const previous = configured
  configured = verifiers
  return () => {
    configured = previous
  }
}

/** What each source answered for one slip, in the order they were asked. */
export interface SourceAnswer {
  name: string
  /**
   * found: it gave the facts; unknown: it does not know the transaction;
   * delayed: it knows of it but has no facts yet; refused: it refutes the
   * slip without facts; failed: it could not answer.
   */
  answer: 'found' | 'unknown' | 'delayed' | 'refused' | 'failed'
  /** Why it failed or refused (a SourceFailure or a SlipRefusalReason). */
  reason?: string
  error?: string
}

/** A source's refutation without facts, as the rules take it. */
export interface SourceRefusal {
  source: string
  reason: SlipRefusalReason
}

export interface SourcesOutcome {
  facts: SlipFacts | null
  /** Set only when no source gave facts and one refuted the slip. */
  refusal: SourceRefusal | null
  answers: SourceAnswer[]
}

/**
 * Asks the sources in order until one gives the transaction's facts.
 *
 * - facts: the first source's facts are the answer (a provider's "repeated"
 *   refusal seen earlier marks them repeated);
 * - not known, delayed (the bank has not published it yet), or failed
 *   (timeout, outage, 5xx, key refused, package expired, quota used up, an
 *   answer that cannot be read): the next source is asked;
 * - refused without facts (repeated slip, wrong amount, wrong receiver): kept,
 *   and the next source is still asked, since facts judged by the gateway's
 *   rules decide over a provider's word; with none, the first refusal does.
 *
 * When no source gave facts and none refused, the slip stays pending and is
 * checked again later. A failing source can therefore never make a slip
 * pass: passing needs facts, and facts come only from a source's answer
 * about this very transaction.
 */
export async function askSlipVerifiers(
  reference: SlipReference,
  target: SlipOrder,
  verifiers: SlipVerifier[] = slipVerifiers()
): Promise<SourcesOutcome> {
  const answers: SourceAnswer[] = []
  let refusal: SourceRefusal | null = null
  for (const verifier of verifiers) {
    try {
      const facts = await verifier.lookup(reference, target)
      answers.push({ name: verifier.name, answer: facts ? 'found' : 'unknown' })
      if (facts) {
        const repeated = facts.repeated || refusal?.reason === 'repeated'
        return { facts: repeated ? { ...facts, repeated } : facts, refusal: null, answers }
      }
    } catch (error) {
      if (error instanceof SlipRefused) {
        answers.push(answerOf(verifier, 'refused', error.reason, error))
        refusal ??= { source: verifier.name, reason: error.reason }
        continue
      }
      if (error instanceof SlipDelayed) {
        answers.push(answerOf(verifier, 'delayed', undefined, error))
        continue
      }
      const reason = error instanceof SlipSourceFailed ? error.reason : undefined
      logger.warn(
        {
          err: error,
          verifier: verifier.name,
          reason,
          platform_order_id: target.order.platformOrderId,
        },
        'slip verifier failed; the next one is asked, else the slip stays pending'
      )
      answers.push(answerOf(verifier, 'failed', reason, error))
    }
  }
  return { facts: null, refusal, answers }
}

function answerOf(
  verifier: SlipVerifier,
  answer: SourceAnswer['answer'],
  reason: string | undefined,
  error: unknown
): SourceAnswer {
  return {
    name: verifier.name,
    answer,
    ...(reason ? { reason } : {}),
    error: String((error as Error)?.message ?? error).slice(0, 500),
  }
}
