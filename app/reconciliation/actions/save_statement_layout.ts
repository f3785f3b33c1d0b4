import vine from '@vinejs/vine'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type ApprovalRequest from '#approvals/models/approval_request'
import { approvalDetails } from '#approvals/approval_requests'
import {
  registerApprovableAction,
  type ApprovalTarget,
  type RunContext,
} from '#approvals/approvable_actions'
import { askOrApplyFromShell } from '#approvals/maker_checker'
import {
  DEFINITION_FIELDS,
  describeDefinition,
  validateDefinition,
  type LayoutDefinition,
} from '#reconciliation/layouts/definition'
import {
  LAYOUT_NAME_PATTERN,
  LAYOUT_NAME_RULE,
  RESERVED_LAYOUT_NAMES,
} from '#reconciliation/statement_layouts'
import { bankCode } from '#payments/deposit_account_input'
import { changedValues, recordAudit } from '#core/audit'
import { ActionError, validateInput, type FieldError } from '#core/validation'
import type { Actor } from '#core/actor'
import { inTransaction } from '#core/transaction'

export const SAVE_STATEMENT_LAYOUT_ACTION = 'statement_layout.save'
/** One change of a layout waits at a time. */
export const SAVE_STATEMENT_LAYOUT_KIND = 'statement_layout_change'

const identity = vine.compile(
  vine.object({
    name: vine.string().trim().toLowerCase().regex(LAYOUT_NAME_PATTERN),
    bank: vine.any().use(bankCode()).optional(),
    comment: vine.string().trim().maxLength(500).optional(),
  })
)

const MESSAGES = {
  'name.required': 'name is required: what imports and deposit accounts call the layout',
  'name.regex': `name: ${LAYOUT_NAME_RULE}`,
}

export interface SaveLayoutData {
  name: string
  bank: string | null
  comment: string | undefined
  definition: LayoutDefinition
}

/**
 * The input of a save: the layout's name, bank and comment, and its
 * definition's options (the form's fields, or a stored request's input).
 * Every problem of both parts at once, each beside its field.
 */
export async function validateLayoutInput(input: Record<string, unknown>): Promise<SaveLayoutData> {
  const errors: FieldError[] = []
  const head = await validateInput(identity, {
    name: input.name,
    bank: input.bank,
    comment: input.comment,
  }).catch((error) => {
    if (!(error instanceof ActionError)) throw error
    errors.push(...error.errors)
    return null
  })
  const definition = await validateDefinition(input).catch((error) => {
    if (!(error instanceof ActionError)) throw error
    errors.push(...error.errors)
    return null
  })
  if (head && RESERVED_LAYOUT_NAMES.includes(head.name)) {
    errors.push({
      field: 'name',
      message: `name "${head.name}" is a built-in layout's: choose another (not ${RESERVED_LAYOUT_NAMES.join(', ')})`,
    })
  }
  if (errors.length > 0 || !head || !definition) {
    // A failure of the name's own schema carries its messages; keep them as VineJS words them.
    throw new ActionError(
      errors.map((error) =>
        error.field === 'name' && error.message === 'name has the wrong format'
          ? { field: 'name', message: MESSAGES['name.regex'] }
          : error
      )
    )
  }
  return {
    name: head.name,
    bank: (head.bank as string | undefined) ?? null,
    comment: head.comment,
    definition,
  }
}

/** What a request stores: the input again (validated again on approval). */
function storedInput(data: SaveLayoutData) {
  return { name: data.name, bank: data.bank, comment: data.comment, ...data.definition }
}

function layoutTarget(name: string): ApprovalTarget {
  return { type: 'statement_layout', id: name, amount: null, reviewedBy: null }
}

/** The layout as it is now (locked), with its current definition; null for a new one. */
async function prepareSave(trx: TransactionClientContract, data: SaveLayoutData) {
  const layout = await trx.from('statement_layouts').where('name', data.name).forUpdate().first()
  let current: LayoutDefinition | null = null
  if (layout) {
    const version = await trx
      .from('statement_layout_versions')
      .where('statement_layout_id', layout.id)
      .where('version', layout.current_version)
      .firstOrFail()
    current =
      typeof version.definition === 'string' ? JSON.parse(version.definition) : version.definition
  }
  const diff = changedValues(
    snapshot(layout?.bank ?? null, current),
    snapshot(data.bank, data.definition)
  )
  if (layout && diff.changed.length === 0) {
    throw ActionError.field(
      'name',
      `layout ${data.name} already reads files this way (version ${layout.current_version}): nothing to change`
    )
  }
  return {
    layout: layout as { id: number; current_version: number; bank: string | null } | null,
    current,
    diff,
    /** The layout as asked (the request card's after). */
    asked: snapshot(data.bank, data.definition),
    target: layoutTarget(data.name),
  }
}

type SavePrepared = Awaited<ReturnType<typeof prepareSave>>

/** The layout as the audit log and the request card show it: bank and every option. */
function snapshot(bank: string | null, definition: LayoutDefinition | null) {
  if (!definition) return {}
  return { bank: bank ?? '—', ...describeDefinition(definition) }
}

/** Writes the new version and makes it current; audited. */
async function applySave(
  trx: TransactionClientContract,
  prepared: SavePrepared,
  data: SaveLayoutData,
  actor: Actor,
  request: ApprovalRequest | null
) {
  const now = new Date()
  let layoutId: number
  let version: number
  if (prepared.layout) {
    layoutId = Number(prepared.layout.id)
    version = Number(prepared.layout.current_version) + 1
    await trx
      .from('statement_layouts')
      .where('id', layoutId)
      .update({ current_version: version, bank: data.bank, updated_at: now })
  } else {
    version = 1
    const [id] = await trx.table('statement_layouts').insert({
      name: data.name,
      bank: data.bank,
      current_version: version,
      created_by: (request?.requestedByActor ?? actor.name).slice(0, 120),
      created_at: now,
      updated_at: now,
    })
    layoutId = Number(id)
  }
  await trx.table('statement_layout_versions').insert({
    statement_layout_id: layoutId,
    version,
    definition: JSON.stringify(data.definition),
    saved_by: (request?.requestedByActor ?? actor.name).slice(0, 120),
    approved_by: request ? actor.name.slice(0, 120) : null,
    approval_request_id: request?.id ?? null,
    comment: data.comment ?? null,
    created_at: now,
  })
  await recordAudit(trx, actor, {
    action: SAVE_STATEMENT_LAYOUT_ACTION,
    target: { type: 'statement_layout', id: data.name },
    before: prepared.layout ? prepared.diff.before : null,
    after: prepared.layout ? prepared.diff.after : snapshot(data.bank, data.definition),
    reason: { comment: data.comment },
    details: { layout_id: layoutId, version, ...approvalDetails(request) },
  })
  return { layoutId, version }
}

/**
 * Saves a statement layout (a new one, or a new version of one): in the
 * back-office an approval request for a second admin, who carries it out as
 * stored (the layout checked again); only then is the version current, and
 * the next import reads with it. From the server's shell it applies at once,
 * recorded as a break-glass use. Refused when it changes nothing, or while
 * another change of the same layout waits.
 */
export async function saveStatementLayout(
  input: Record<string, unknown>,
  actor: Actor
): Promise<
  | { request: ApprovalRequest; saved: null }
  | { request: null; saved: { layoutId: number; version: number } }
> {
  const data = await validateLayoutInput(input)
  return inTransaction(async (trx) => {
    const prepared = await prepareSave(trx, data)
    const outcome = await askOrApplyFromShell(trx, {
      action: SAVE_STATEMENT_LAYOUT_ACTION,
      target: prepared.target,
      input: storedInput(data),
      prepared,
      actor,
      reason: { comment: data.comment },
      field: 'name',
      summary: `${prepared.layout ? 'changed' : 'defined'} statement layout ${data.name}`,
      run: () => applySave(trx, prepared, data, actor, null),
    })
    return outcome.request
      ? { request: outcome.request, saved: null }
      : { request: null, saved: outcome.result }
  })
}

/*
 * A layout decides which amounts, directions and references the gateway
 * reads from a bank's file, so which orders get paid: a second admin
 * approves every version (docs/decisions.md, "Four eyes on where money goes").
 */
registerApprovableAction<SaveLayoutData, SavePrepared>({
  name: SAVE_STATEMENT_LAYOUT_ACTION,
  kind: SAVE_STATEMENT_LAYOUT_KIND,
  approverRole: 'admin',
  sensitive: true,
  describe: (data) => `save statement layout ${data.name}`,
  // Called with the stored input; the prepared layout holds what it asks.
  change: (_input, prepared) =>
    prepared.layout
      ? { before: prepared.diff.before, after: prepared.diff.after }
      : {
          before: {},
          after: Object.fromEntries(
            Object.entries(prepared.asked).filter(([, value]) => value !== '—')
          ),
        },
  validate: (input) => validateLayoutInput(input),
  prepare: (trx, data) => prepareSave(trx, data),
  run: async (trx, prepared, data, context: RunContext) => {
    const saved = await applySave(trx, prepared, data, context.actor, context.request)
    return { statement_layout_id: saved.layoutId, name: data.name, version: saved.version }
  },
})

/** The definition's fields, for forms (the layout's own fields first). */
export const LAYOUT_FORM_FIELDS = ['name', 'bank', 'comment', ...DEFINITION_FIELDS]
