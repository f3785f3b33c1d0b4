import { BaseSchema } from '@adonisjs/lucid/schema'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import { binaryCollation } from '#database/collation'

/**
 * Identifiers and references compare byte for byte (spec: merchant_id and
 * token "must match exactly"; merchant_order_id abc1 and ABC1 are two ids).
 * Tables were created with the database's case- and accent-insensitive
 * collation, so these columns get a binary one. Same type, NULLability and
 * (NULL) default: MODIFY keeps their indexes and unique keys.
 *
 * Converted: ids and references the gateway issues or receives, token
 * digests, and the bank codes and account identifiers that payments and
 * payouts are matched by. Kept: names and free text, URLs and host names,
 * operator-chosen group and route names, and codes only the gateway writes.
 */
const COLUMNS: Record<string, Record<string, string>> = {
  platforms: { code: 'VARCHAR(32) NOT NULL' },
  merchants: {
    merchant_id: 'VARCHAR(32) NOT NULL',
    order_prefix: 'VARCHAR(3) NOT NULL',
  },
  merchant_credentials: {
    token_hash: 'CHAR(64) NOT NULL',
    token_hint: 'VARCHAR(8) NOT NULL',
  },
  ledger_transactions: { reference_id: 'VARCHAR(40) NULL' },
  audit_logs: { subject_id: 'VARCHAR(64) NULL' },
  deposit_accounts: {
    bank: 'VARCHAR(8) NOT NULL',
    account_no: 'VARCHAR(20) NOT NULL',
    promptpay_id: 'VARCHAR(20) NULL',
    biller_id: 'VARCHAR(15) NULL',
  },
  merchant_order_ids: { merchant_order_id: 'VARCHAR(40) NOT NULL' },
  payment_orders: {
    platform_order_id: 'CHAR(24) NOT NULL',
    uuid: 'CHAR(36) NOT NULL',
    merchant_order_id: 'VARCHAR(40) NOT NULL',
    payment_reference: 'VARCHAR(20) NULL',
    external_reference: 'VARCHAR(64) NULL',
    customer_bank: 'VARCHAR(8) NOT NULL',
    customer_account_no: 'VARCHAR(15) NOT NULL',
  },
  callback_outbox: { platform_order_id: 'CHAR(24) NOT NULL' },
  payout_orders: {
    platform_order_id: 'CHAR(24) NOT NULL',
    merchant_order_id: 'VARCHAR(40) NOT NULL',
    bank: 'VARCHAR(8) NOT NULL',
    account_no: 'VARCHAR(15) NOT NULL',
    connector_reference: 'VARCHAR(64) NULL',
    batch_id: 'VARCHAR(40) NULL',
  },
  merchant_settlement_accounts: {
    bank: 'VARCHAR(8) NOT NULL',
    account_no: 'VARCHAR(15) NOT NULL',
  },
  statement_lines: {
    fingerprint: 'CHAR(64) NOT NULL',
    reference: 'VARCHAR(64) NULL',
  },
}

/** One ALTER per table: the table is rebuilt once. */
async function setCollations(db: QueryClientContract, collationOf: (table: string) => string) {
  for (const [table, columns] of Object.entries(COLUMNS)) {
    const changes = Object.entries(columns).map(([column, definition]) => {
      const [type, ...nullability] = definition.split(' ')
      return `MODIFY \`${column}\` ${type} COLLATE ${collationOf(table)} ${nullability.join(' ')}`
    })
    await db.rawQuery(`ALTER TABLE \`${table}\` ${changes.join(', ')}`)
  }
}

export default class extends BaseSchema {
  async up() {
    this.defer(async (db) => {
      const collation = await binaryCollation(db)
      await setCollations(db, () => collation)
    })
  }

  /**
   * Back to each table's default collation, which its columns had. Fails with
   * a duplicate key while rows differ only by case (merchant_order_ids abc1 and
   * ABC1): those must be resolved first.
   */
  async down() {
    this.defer(async (db) => {
      const [rows] = await db.rawQuery(
        `SELECT TABLE_NAME AS name, TABLE_COLLATION AS collation FROM information_schema.TABLES
          WHERE TABLE_SCHEMA = DATABASE()`
      )
      const defaults = new Map<string, string>(
        rows.map((row: { name: string; collation: string }) => [row.name, row.collation])
      )
      await setCollations(db, (table) => defaults.get(table)!)
    })
  }
}
