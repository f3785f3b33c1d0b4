import type { DepositProvider } from '#payments/providers/deposit_provider'
import { SandboxDepositProvider } from '#payments/providers/sandbox_provider'

/** External deposit providers by the name stored on deposit_accounts.provider. */
const providers = new Map<string, DepositProvider>([['sandbox', new SandboxDepositProvider()]])

export function depositProvider(name: string | null): DepositProvider | undefined {
  return name ? providers.get(name) : undefined
}
