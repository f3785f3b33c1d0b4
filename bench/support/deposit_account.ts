/**
 * The benchmarks' transfer deposit account (bench/run.ts, bench:slots): one
 * account that adjusts amounts by up to 9.99 THB, so the creates' slots and
 * the slot statements measured alone work on the same range.
 */
export const BENCH_DEPOSIT_ACCOUNT = {
  depositGroup: 'bench',
  channel: 'transfer',
  bank: 'KBANK',
  accountNo: '9000000001',
  accountName: 'Bench deposits',
  minAmount: 2000,
  maxAdjustment: 999,
  priority: 0,
  active: true,
} as const

/**
 * The benchmarks' platform, merchant (deposit group `bench`, `merchant`
 * fields merged in) and deposit account, in a migrated database: bench/run.ts
 * and bench:statements.
 */
export async function createBenchMerchant(merchantFields: { payoutRoute?: string } = {}) {
  const { createPlatform } = await import('#merchants/actions/create_platform')
  const { createMerchant } = await import('#merchants/actions/create_merchant')
  const { default: DepositAccount } = await import('#payments/models/deposit_account')
  const actor = { name: 'bench' }
  await createPlatform({ code: 'bench', name: 'Benchmark' }, actor)
  const { merchant, credentials } = await createMerchant(
    { platform: 'bench', name: 'Bench shop' },
    actor
  )
  merchant.merge({ depositGroup: 'bench', ...merchantFields })
  await merchant.save()
  const account = await DepositAccount.create({ ...BENCH_DEPOSIT_ACCOUNT })
  return { merchant, credentials, account }
}
