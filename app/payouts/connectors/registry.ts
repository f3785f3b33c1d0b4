import type { PayoutConnector } from '#payouts/connectors/payout_connector'
import { SandboxBankConnector } from '#payouts/connectors/sandbox_bank'
import { BulkFileConnector } from '#payouts/connectors/bulk_file'

/** Payout connectors by the name stored in merchants.payout_route. */
export const PAYOUT_CONNECTORS: readonly PayoutConnector[] = [
  new SandboxBankConnector(),
  new BulkFileConnector(),
]

const byName = new Map(PAYOUT_CONNECTORS.map((connector) => [connector.name, connector]))

export function payoutConnector(name: string | null): PayoutConnector | undefined {
  return name ? byName.get(name) : undefined
}

export const PAYOUT_CONNECTOR_NAMES = [...byName.keys()]
