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
