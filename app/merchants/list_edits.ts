import vine from '@vinejs/vine'
import type { FieldContext } from '@vinejs/vine/types'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type Merchant from '#merchants/models/merchant'
import type ApprovalRequest from '#approvals/models/approval_request'
import { approvalDetails } from '#approvals/approval_requests'
import {
  registerApprovableAction,
  type ApprovableAction,
  type ApprovalTarget,
  type RunContext,
} from '#approvals/approvable_actions'
import { askOrApplyFromShell } from '#approvals/maker_checker'
import { lockMerchant, merchantTarget } from '#merchants/merchant_rules'
import { recordAudit } from '#core/audit'
import { ActionError } from '#core/validation'
import type { Actor } from '#core/actor'

/*
 * A merchant's lists of entries (the IP whitelist, the settlement accounts)
 * are edited the same way: entries to add and to remove, each read into its
 * canonical form; the change worked out against the list as it is now (the
 * merchant locked); what is left to write stored as asked; four eyes in the
 * back-office, break-glass from the shell; one audit row with the list before
 * and after. The lists differ in their entries, their rows and their words.
 */

/** An edit of one merchant's list, as validated. */
export type ListEditData = {
  merchant_id: string
  add?: string[]
  remove?: string[]
  comment?: string
}

/**
 * The validator of a list edit whose entries `parse` reads into their
 * canonical form (null: not an entry); a refused entry is named with its
 * list: `add: "x" is not …`.
 */
export function listEditValidator(parse: (text: string) => string | null, problem: string) {
  const entry = vine.createRule((value, _options, field: FieldContext) => {
    const canonical = parse(String(value))
    if (!canonical) {
      const list = field.wildCardPath.split('.')[0]
      return field.report(`${list}: "${value}" ${problem}`, 'list_entry', field)
    }
    field.mutate(canonical, field)
  })
  return vine.compile(
    vine.object({
      merchant_id: vine.string().trim(),
      add: vine.array(vine.any().use(entry())).optional(),
      remove: vine.array(vine.any().use(entry())).optional(),
      comment: vine.string().trim().maxLength(500).optional(),
    })
  )
}

/** What an edit does to the list now: entries added and removed, and those already so. */
export interface ListChange {
  before: string[]
  after: string[]
  added: string[]
  removed: string[]
  /** Asked to be added, already listed. */
  alreadyListed: string[]
  /** Asked to be removed, not listed. */
  notListed: string[]
}

/** The change `data` asks of the list `before` (each entry once). */
export function listChange(before: string[], data: ListEditData): ListChange {
  const add = [...new Set(data.add ?? [])]
  const remove = [...new Set(data.remove ?? [])]
  const added = add.filter((entry) => !before.includes(entry))
  const removed = remove.filter((entry) => before.includes(entry))
  return {
    before,
    after: [...before.filter((entry) => !removed.includes(entry)), ...added],
    added,
    removed,
    alreadyListed: add.filter((entry) => before.includes(entry)),
    notListed: remove.filter((entry) => !before.includes(entry)),
  }
}

/** A list's prepared edit: the merchant locked, the change against its list now. */
export type PreparedListEdit<Extra = {}> = ListChange &
  Extra & { merchant: Merchant; target: ApprovalTarget }

/**
 * Locks the merchant and works out the change against its list now (`read`
 * gives the list and anything else the edit needs); on approval, the re-check.
 */
export async function prepareListEdit<Extra extends { list: string[] }>(
  trx: TransactionClientContract,
  data: ListEditData,
  read: (merchant: Merchant) => Promise<Extra>
) {
  const merchant = await lockMerchant(trx, data.merchant_id)
  const { list, ...extra } = await read(merchant)
  return {
    merchant,
    ...extra,
    ...listChange(list, data),
    target: merchantTarget(merchant),
  }
}

/** The audit row of a list edit: the list before and after, under the list's name. */
export async function recordListEdit(
  trx: TransactionClientContract,
  context: RunContext,
  edit: {
    action: string
    merchant: Merchant
    list: string
    before: string[]
    after: string[]
    comment?: string
  }
) {
  await recordAudit(trx, context.actor, {
    action: edit.action,
    target: { type: 'merchant', id: edit.merchant.merchantId },
    before: { [edit.list]: edit.before },
    after: { [edit.list]: edit.after },
    reason: { comment: edit.comment },
    details: approvalDetails(context.request),
  })
}

/**
 * Carries out a prepared edit, or asks for it: nothing to write, nothing
 * done; what only narrows the list (`atOnce`) is written now; anything else
 * goes through four eyes (askOrApplyFromShell: a request in the back-office,
 * break-glass from the shell), stored as what is left to write. Returns the
 * request opened, and whether the change is written.
 */
export async function applyListEdit(
  trx: TransactionClientContract,
  edit: {
    action: string
    data: ListEditData
    prepared: PreparedListEdit
    actor: Actor
    /** The change can only stop money or calls: no second admin. */
    atOnce?: boolean
    /** For the break-glass record, from what is stored. */
    summary: (stored: ListEditData) => string
    run: (stored: ListEditData) => Promise<unknown>
  }
): Promise<{ request: ApprovalRequest | null; applied: boolean }> {
  const { merchant, added, removed } = edit.prepared
  if (added.length + removed.length === 0) return { request: null, applied: false }
  const stored: ListEditData = {
    merchant_id: merchant.merchantId,
    ...(added.length > 0 ? { add: added } : {}),
    ...(removed.length > 0 ? { remove: removed } : {}),
    ...(edit.data.comment ? { comment: edit.data.comment } : {}),
  }
  if (edit.atOnce) {
    await edit.run(stored)
    return { request: null, applied: true }
  }
  const outcome = await askOrApplyFromShell(trx, {
    action: edit.action,
    target: edit.prepared.target,
    input: stored,
    prepared: edit.prepared,
    actor: edit.actor,
    reason: { comment: edit.data.comment },
    field: added.length > 0 ? 'add' : null,
    summary: edit.summary(stored),
    run: () => edit.run(stored),
  })
  return { request: outcome.request, applied: outcome.request === null }
}

/**
 * Registers a list edit with the approvals: an admin approves, the card
 * shows the list before and after; on approval a change with nothing left to
 * write (someone else made it meanwhile) is refused with `unchanged`.
 */
export function registerListEdit<Prepared extends PreparedListEdit>(
  edit: Pick<
    ApprovableAction<ListEditData, Prepared>,
    'name' | 'kind' | 'describe' | 'change' | 'validate' | 'run'
  > & {
    prepare: (trx: TransactionClientContract, data: ListEditData) => Promise<Prepared>
    unchanged: (data: ListEditData, prepared: Prepared) => string
  }
) {
  const { unchanged, prepare, ...action } = edit
  registerApprovableAction<ListEditData, Prepared>({
    ...action,
    approverRole: 'admin',
    sensitive: true,
    prepare: async (trx, data) => {
      const prepared = await prepare(trx, data)
      if (prepared.added.length + prepared.removed.length === 0) {
        throw ActionError.general(unchanged(data, prepared))
      }
      return prepared
    },
  })
}
