import slipsConfig from '#config/slips'
import type { SlipVerifier } from '#slips/verifiers/slip_verifier'
import { StatementVerifier } from '#slips/verifiers/statement_verifier'
import { SandboxSlipVerifier } from '#slips/verifiers/sandbox_verifier'

const KNOWN: Record<string, () => SlipVerifier> = {
  statement: () => new StatementVerifier(),
  sandbox: () => new SandboxSlipVerifier(),
}

let configured: SlipVerifier[] | undefined

/** The sources config/slips.ts names, in the order they are asked. */
export function slipVerifiers(): SlipVerifier[] {
  configured ??= slipsConfig.verifiers.map((name) => {
    const make = KNOWN[name]
    if (!make) {
      throw new Error(
        `SLIP_VERIFIERS: unknown slip verifier "${name}" (known: ${Object.keys(KNOWN).join(', ')})`
      )
    }
    return make()
  })
  return configured
}
