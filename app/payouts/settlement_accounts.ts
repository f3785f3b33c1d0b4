import db from '@adonisjs/lucid/services/db'
import type Merchant from '#models/merchant'
import { isBankCode } from '#services/banks'
import { recordAudit } from '#services/audit'

function parse(entry: string) {
  const [bank, rawAccount, ...rest] = entry.split(':')
  const accountNo = (rawAccount ?? '').replace(/\D/g, '')
  if (rest.length > 0 || !isBankCode(bank) || accountNo.length < 10 || accountNo.length > 15) {
    throw new Error(`"${entry}" is not BANK:ACCOUNT_NO with a known bank code and 10 to 15 digits`)
  }
  return { bank, accountNo }
}

export async function settlementAccounts(merchant: Merchant) {
  return db.from('merchant_settlement_accounts').where('merchant_id', merchant.id).orderBy('id')
}

export async function addSettlementAccount(merchant: Merchant, entry: string, actor: string) {
  const { bank, accountNo } = parse(entry)
  await db.rawQuery(
    'INSERT IGNORE INTO merchant_settlement_accounts (merchant_id, bank, account_no, created_at) VALUES (?, ?, ?, ?)',
    [merchant.id, bank, accountNo, new Date()]
  )
  await recordAudit({
    actor,
    action: 'merchant.settlement_account.add',
    subjectType: 'merchant',
    subjectId: merchant.merchantId,
    details: { bank, account_no: accountNo },
  })
}

export async function removeSettlementAccount(merchant: Merchant, entry: string, actor: string) {
  const { bank, accountNo } = parse(entry)
  const deleted = await db
    .from('merchant_settlement_accounts')
    .where({ merchant_id: merchant.id, bank, account_no: accountNo })
    .delete()
  if (Number(deleted) === 0) {
    throw new Error(`${bank}:${accountNo} is not a registered settlement account`)
  }
  await recordAudit({
    actor,
    action: 'merchant.settlement_account.remove',
    subjectType: 'merchant',
    subjectId: merchant.merchantId,
    details: { bank, account_no: accountNo },
  })
}
