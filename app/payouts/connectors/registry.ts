import type { PayoutConnector } from '#payouts/connectors/payout_connector'
import { SandboxBankConnector } from '#payouts/connectors/sandbox_bank'
import { BulkFileConnector } from '#payouts/connectors/bulk_file'

/** Payout connectors by the name stored in merchants.payout_route. */
const connectors = new Map<string, PayoutConnector>([
  ['sandbox', new SandboxBankConnector()],
  ['bulk_file', new BulkFileConnector()],
])

export function payoutConnector(name: string | null): PayoutConnector | undefined {
  return name ? connectors.get(name) : undefined
}

export const PAYOUT_CONNECTOR_NAMES = [...connectors.keys()]
