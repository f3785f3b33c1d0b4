import type DepositAccount from '#payments/models/deposit_account'
import type Operator from '#operators/models/operator'
import { depositAccountUsage } from '#payments/deposit_account_usage'
import { listMaintenanceWindows, presentMaintenanceWindow } from '#payments/maintenance_windows'
import {
  CREATE_DEPOSIT_ACCOUNT_ACTION,
  NEW_DEPOSIT_ACCOUNT_TARGET,
} from '#payments/actions/create_deposit_account'
import { definedLayoutChoices } from '#reconciliation/statement_layouts'
import { BANKS } from '#core/banks'
import {
  POOL_SORTS,
  poolGroups,
  poolQuery,
  poolRow,
  recentlyCancelledWindows,
  windowsOfAccount,
  type PoolFilters,
  type PoolSort,
} from '#admin/queries/deposit_account_pool'
import { liveRequestTargets } from '#admin/queries/pending_targets'
import { pendingRequestsFor } from '#admin/pending_requests'
import { pendingRequestsOnTargets } from '#admin/views/pending_additions'

const PER_PAGE = 25

/** What the forms' selects offer. */
export const ACCOUNT_CHOICES = {
  channels: ['qr', 'transfer', 'external'].map((value) => ({ value, label: value })),
  banks: Object.keys(BANKS).map((value) => ({ value, label: value })),
}

/** The statement layouts an account may read its files with (and none: neutral, or recognised). */
export async function layoutChoices() {
  const layouts = await definedLayoutChoices()
  return {
    statementLayouts: [
      { value: '', label: 'none: neutral (a KBiz export is recognised)' },
      ...layouts.map((layout) => ({
        value: String(layout.id),
        label: `${layout.name}${layout.bank ? ` (${layout.bank})` : ''} v${layout.version}`,
      })),
    ],
  }
}

/** A maintenance window as the pages show it, with what it takes out of selection. */
export function windowRow(window: Parameters<typeof presentMaintenanceWindow>[0]) {
  const shown = presentMaintenanceWindow(window)
  return {
    ...shown,
    takes_out: shown.bank
      ? `every ${shown.bank} account`
      : `deposit account ${shown.deposit_account_id}`,
  }
}

/**
 * The live approval requests on the pool, for the list: the changes
 * waiting on each account (by account id) and the new accounts waiting to be
 * added, each with what the operator may do with it.
 */
async function poolRequests(operator: Operator) {
  const rows = await liveRequestTargets(['deposit_account', NEW_DEPOSIT_ACCOUNT_TARGET])
  const changes = new Map<number, number>()
  const newTargets: string[] = []
  for (const row of rows) {
    if (row.targetType === 'deposit_account') changes.set(Number(row.targetId), row.id)
    else if (row.action === CREATE_DEPOSIT_ACCOUNT_ACTION) newTargets.push(row.targetId)
  }
  const additions = await pendingRequestsOnTargets(operator, NEW_DEPOSIT_ACCOUNT_TARGET, newTargets)
  return { changes, additions }
}

/** The list's filters, sort and page as the query string gives them. */
function poolSearch(input: Record<string, unknown>) {
  const filters: PoolFilters = {}
  for (const key of ['group', 'channel', 'bank', 'active'] as const) {
    const value = String(input[key] ?? '')
      .trim()
      .slice(0, 64)
    if (value) filters[key] = value
  }
  const sort: PoolSort = POOL_SORTS.includes(input.sort as PoolSort)
    ? (input.sort as PoolSort)
    : 'priority'
  const dir: 'asc' | 'desc' = input.dir === 'asc' ? 'asc' : 'desc'
  const pageNumber = Math.max(1, Number(input.page ?? 1) || 1)
  return { filters, sort, dir, pageNumber }
}

/**
 * The pool's list: one page of accounts by deposit group with their usage
 * beside every limit, the maintenance windows, and the requests waiting.
 */
export async function poolPage(input: Record<string, unknown>, operator: Operator) {
  const { filters, sort, dir, pageNumber } = poolSearch(input)
  const page = await poolQuery(filters, sort, dir).paginate(pageNumber, PER_PAGE)
  const accounts = page.all()
  const usage = await depositAccountUsage(accounts)
  const rows = accounts.map((account) => poolRow(account, usage.get(account.id)!))
  const groups = await poolGroups()
  const listed = new Map<string, typeof rows>()
  for (const row of rows) {
    listed.set(row.deposit_group, [...(listed.get(row.deposit_group) ?? []), row])
  }
  const requests = await poolRequests(operator)
  const filterQuery = (extra: Record<string, string>) =>
    new URLSearchParams({ ...filters, sort, dir, ...extra }).toString()
  return {
    filters,
    sort,
    dir,
    page,
    query: (to: number) => filterQuery({ page: String(to) }),
    /** The link of a sortable column heading: the other direction when already sorted by it. */
    sortQuery: (column: PoolSort) =>
      filterQuery({ sort: column, dir: sort === column && dir === 'desc' ? 'asc' : 'desc' }),
    groups: [...listed.entries()].map(([name, groupRows]) => ({
      name,
      total: groups.find((group) => group.name === name)?.total ?? groupRows.length,
      accounts: groupRows,
    })),
    groupChoices: groups.map((group) => ({
      value: group.name,
      label: `${group.name} (${group.total})`,
    })),
    windows: (await listMaintenanceWindows()).map(windowRow),
    cancelledWindows: (await recentlyCancelledWindows()).map(windowRow),
    /** Account id → the approval request waiting on it. */
    pendingChanges: Object.fromEntries(requests.changes),
    pendingAdditions: requests.additions,
  }
}

/** One account's page: its usage, settings, windows and the requests waiting on it. */
export async function depositAccountPage(account: DepositAccount, operator: Operator) {
  const usage = await depositAccountUsage([account])
  return {
    account: poolRow(account, usage.get(account.id)!),
    providerConfig: account.providerConfig ? JSON.stringify(account.providerConfig) : '',
    windows: (await windowsOfAccount(account)).map(windowRow),
    pendingRequests: await pendingRequestsFor(operator, 'deposit_account', String(account.id)),
    statementLayoutId: account.statementLayoutId === null ? '' : String(account.statementLayoutId),
    ...(await layoutChoices()),
  }
}
