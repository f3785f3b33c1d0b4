import db from '@adonisjs/lucid/services/db'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import { isBankCode } from '#core/banks'

/**
 * The bank accounts a merchant may settle to, written "BANK:ACCOUNT_NO" as
 * operators type and read them. A merchant that has ever had one registered
 * (merchants.settlement_accounts_required) settles only to a registered
 * account: removing the last one refuses every settlement, it never lifts the
 * restriction. A merchant that never registered one settles to the account
 * its request names.
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

/** The merchant's registered accounts and whether it may settle only to them. */
export async function settlementRestriction(merchantId: number, client?: QueryClientContract) {
  const rows = await (client ?? db.connection())
    .from('merchants as m')
    .leftJoin('merchant_settlement_accounts as a', 'a.merchant_id', 'm.id')
    .where('m.id', merchantId)
    .orderBy('a.id')
    .select('m.settlement_accounts_required as required', 'a.bank', 'a.account_no')
  const accounts = rows
    .filter((row: { bank: string | null }) => row.bank !== null)
    .map((row: SettlementAccount) => settlementAccountText(row))
  return {
    required:
      rows.some((row: { required: unknown }) => Boolean(row.required)) || accounts.length > 0,
    accounts,
  }
}

/**
 * Why a settlement to `bank` + `accountNo` is refused, or null: only a
 * registered account once the merchant has (or had) one; none registered
 * after that refuses every destination.
 */
export async function settlementDestinationRefusal(
  merchantId: number,
  bank: string,
  accountNo: string,
  client?: QueryClientContract
) {
  const { required, accounts } = await settlementRestriction(merchantId, client)
  if (!required || accounts.includes(`${bank}:${accountNo}`)) return null
  if (accounts.length === 0) {
    return `${bank} ${accountNo} is not one of this merchant's registered settlement accounts: none is registered, so no settlement can be made until one is`
  }
  return `${bank} ${accountNo} is not one of this merchant's registered settlement accounts`
}
