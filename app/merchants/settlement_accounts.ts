import db from '@adonisjs/lucid/services/db'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import { isBankCode } from '#core/banks'

/**
 * The bank accounts a merchant may settle to (none registered: any account),
 * written "BANK:ACCOUNT_NO" as operators type and read them.
 */
export interface SettlementAccount {
  bank: string
  account_no: string
}

/** "KBANK:123-4-56789-0" → { bank, account_no } (spaces and dashes dropped); null if malformed. */
export function parseSettlementAccount(entry: string): SettlementAccount | null {
  const [bank, rawAccount, ...rest] = entry.trim().split(':')
  const accountNo = (rawAccount ?? '').replace(/[\s-]/g, '')
  if (rest.length > 0 || !isBankCode(bank) || !/^\d{10,15}$/.test(accountNo)) return null
  return { bank, account_no: accountNo }
}

export function settlementAccountText(account: SettlementAccount) {
  return `${account.bank}:${account.account_no}`
}

/** The merchant's registered settlement accounts as "BANK:ACCOUNT_NO", oldest first. */
export async function settlementAccountsOf(merchantId: number, client?: QueryClientContract) {
  const rows = await (client ?? db.connection())
    .from('merchant_settlement_accounts')
    .where('merchant_id', merchantId)
    .orderBy('id')
    .select('bank', 'account_no')
  return rows.map((row: SettlementAccount) => settlementAccountText(row))
}
