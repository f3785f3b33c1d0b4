import { readFile } from 'node:fs/promises'
import type Operator from '#operators/models/operator'
import { LAYOUT_FORM_FIELDS } from '#reconciliation/actions/save_statement_layout'
import {
  describeDefinition,
  validateDefinition,
  type LayoutDefinition,
} from '#reconciliation/layouts/definition'
import { previewDefinedLayout, type LayoutPreview } from '#reconciliation/layouts/preview'
import { ActionError, type FieldError } from '#core/validation'
import { BANKS } from '#core/banks'
import { formatGatewayDateTime } from '#core/clock'
import { pendingRequestsFor, reasonOptions } from '#admin/pending_requests'
import { APPROVAL_APPROVE_REASON_CODES } from '#approvals/actions/approve_request'
import { APPROVAL_REJECT_REASON_CODES } from '#approvals/actions/reject_request'
import { liveRequestTargets } from '#admin/queries/pending_targets'
import { pendingRequestsOnTargets } from '#admin/views/pending_additions'
import {
  accountsReadingWith,
  statementLayoutList,
  statementLayoutNames,
  statementLayoutVersions,
} from '#admin/queries/statement_layouts'

const PER_PAGE = 25

export const DECISION_CODES = {
  approveCodes: reasonOptions(APPROVAL_APPROVE_REASON_CODES),
  rejectCodes: reasonOptions(APPROVAL_REJECT_REASON_CODES),
}

/** What the editor's selects offer. */
export const LAYOUT_CHOICES = {
  banks: [
    { value: '', label: '—' },
    ...Object.keys(BANKS).map((value) => ({ value, label: value })),
  ],
  formats: [
    { value: 'csv', label: 'CSV (or tab-separated text)' },
    { value: 'xlsx', label: 'XLSX (Excel workbook)' },
  ],
  encodings: [
    { value: 'utf8', label: 'UTF-8' },
    { value: 'utf8-bom', label: 'UTF-8 with BOM' },
    { value: 'utf16le', label: 'UTF-16 LE (Excel "Unicode text")' },
    { value: 'utf16be', label: 'UTF-16 BE' },
    { value: 'windows-874', label: 'windows-874 (TIS-620, Thai)' },
  ],
  delimiters: [
    { value: 'comma', label: 'comma ,' },
    { value: 'tab', label: 'tab' },
    { value: 'semicolon', label: 'semicolon ;' },
    { value: 'pipe', label: 'pipe |' },
  ],
  amountModes: [
    { value: 'signed', label: 'one signed column (negative: money out)' },
    { value: 'split', label: 'withdrawal and deposit columns' },
    { value: 'direction', label: 'an amount and a direction column' },
  ],
  thousands: [
    { value: 'comma', label: 'comma 1,234.00' },
    { value: 'dot', label: 'dot 1.234,00' },
    { value: 'space', label: 'space 1 234,00' },
    { value: 'apostrophe', label: "apostrophe 1'234.00" },
    { value: 'none', label: 'none 1234.00' },
  ],
  decimals: [
    { value: 'dot', label: 'dot .' },
    { value: 'comma', label: 'comma ,' },
  ],
  eras: [
    { value: 'ce', label: 'Gregorian (CE): 2026, 26' },
    { value: 'be', label: 'Buddhist era (BE): 2569, 69' },
  ],
}

/** A new layout's form starts from the most common Thai export. */
export const NEW_LAYOUT: Record<string, string> = {
  format: 'csv',
  encoding: 'utf8',
  delimiter: 'comma',
  header_row: 'on',
  skip_rows: '0',
  footer_rows: '0',
  amount_mode: 'split',
  thousands: 'comma',
  decimal: 'dot',
  era: 'be',
  date_format: 'DD/MM/YYYY',
  time_format: 'HH:mm',
}

function json(value: unknown) {
  return typeof value === 'string' ? JSON.parse(value) : value
}

/** A stand-in for the session's flash store on a page rendered in answer to a POST: the typed values and the errors. */
export function formState(values: Record<string, unknown>, errors: FieldError[]) {
  const bag: Record<string, string[]> = {}
  for (const error of errors) if (error.field) (bag[error.field] ??= []).push(error.message)
  const store: Record<string, unknown> = { ...values, inputErrorsBag: bag }
  const general = errors.filter((error) => !error.field).map((error) => error.message)
  if (general.length > 0) store.error = general.join(' ')
  else if (errors.length > 0)
    store.error = 'The layout has errors: please correct the fields marked below.'
  return {
    flashMessages: {
      get: (key: string, fallback?: unknown) => store[key] ?? fallback,
      has: (key: string) => key in store,
      all: () => store,
    },
    old: (key: string, fallback?: unknown) => (key in values ? values[key] : fallback),
  }
}

const operatorName = (actor: unknown) => String(actor).replace(/^operator:/, '')

/**
 * The list of defined layouts, and the new layouts waiting for a second
 * admin (they are not in the list until approved).
 */
export async function layoutListPage(pageNumber: number, operator: Operator) {
  const page = await statementLayoutList(pageNumber, PER_PAGE)
  const names = await statementLayoutNames()
  const waiting = (await liveRequestTargets(['statement_layout'])).map((row) => row.targetId)
  const pendingNames = new Set(waiting)
  return {
    layouts: page.all().map((row) => ({
      id: row.id,
      name: row.name,
      bank: row.bank ?? '—',
      version: row.current_version,
      accounts: Number(row.accounts),
      updated: formatGatewayDateTime(new Date(row.updated_at)),
      waiting: pendingNames.has(row.name),
    })),
    page,
    query: (to: number) => new URLSearchParams({ page: String(to) }).toString(),
    pendingRequests: await pendingRequestsOnTargets(
      operator,
      'statement_layout',
      waiting.filter((name) => !names.has(name))
    ),
  }
}

/** The editor's page for a new layout: nothing besides the form. */
function newLayoutState() {
  return {
    layout: null,
    current: null as LayoutDefinition | null,
    currentRows: [] as Array<{ field: string; value: string }>,
    versions: [] as Array<Record<string, unknown>>,
    accounts: [] as Array<Record<string, any>>,
    pendingRequests: [] as Awaited<ReturnType<typeof pendingRequestsFor>>,
    back: '/admin/statement-layouts/new',
    action: '/admin/statement-layouts/new',
  }
}

/**
 * What every rendering of the layout page shows besides the form: the
 * layout's current version, its versions, the accounts reading with it and
 * the change waiting on it (`operator` null: none shown).
 */
export async function layoutPageState(
  layout: Record<string, any> | null,
  operator: Operator | null
) {
  const common = { ...LAYOUT_CHOICES, ...DECISION_CODES, refusal: null }
  if (!layout) return { ...common, ...newLayoutState() }
  const versions = await statementLayoutVersions(layout.id)
  const current = json(
    versions.find((row) => row.version === layout.current_version)!.definition
  ) as LayoutDefinition
  return {
    ...common,
    layout: {
      id: layout.id,
      name: layout.name,
      bank: layout.bank ?? '—',
      version: layout.current_version,
      createdBy: operatorName(layout.created_by),
    },
    current,
    currentRows: Object.entries(describeDefinition(current))
      .filter(([, value]) => value !== '—')
      .map(([field, value]) => ({ field, value })),
    versions: versions.map((row) => ({
      version: row.version,
      savedBy: operatorName(row.saved_by),
      approvedBy: row.approved_by ? operatorName(row.approved_by) : '—',
      at: formatGatewayDateTime(new Date(row.created_at)),
      comment: row.comment ?? '',
      current: row.version === layout.current_version,
    })),
    accounts: await accountsReadingWith(layout.id),
    pendingRequests: operator
      ? await pendingRequestsFor(operator, 'statement_layout', layout.name)
      : [],
    back: `/admin/statement-layouts/${layout.id}`,
    action: `/admin/statement-layouts/${layout.id}`,
  }
}

/** The sample file of a preview, as the multipart body gave it. */
export interface SampleFile {
  tmpPath?: string
  hasErrors: boolean
  clientName: string
}

/** Why a sample cannot be read: none chosen, or too large. */
function sampleProblem(sample: SampleFile | null, maxBytes: number): FieldError | null {
  if (!sample || !sample.tmpPath) {
    return { field: 'sample', message: 'sample is required: choose a file of the bank to preview' }
  }
  if (sample.hasErrors) {
    return { field: 'sample', message: `sample must be at most ${maxBytes / 1024 / 1024} MB` }
  }
  return null
}

/**
 * A preview of the layout as typed: the sample file read line by line with
 * it, every refused cell shown (nothing saved); or the form's errors. The
 * name and bank do not matter for a preview; the definition does.
 */
export async function layoutPreview(
  input: Record<string, unknown>,
  sample: SampleFile | null,
  maxBytes: number
) {
  const values = Object.fromEntries(
    LAYOUT_FORM_FIELDS.map((field) => [
      field,
      input[field] === undefined ? '' : String(input[field]),
    ])
  )
  const errors: FieldError[] = []
  let definition: LayoutDefinition | null = null
  try {
    definition = await validateDefinition(input)
  } catch (error) {
    if (!(error instanceof ActionError)) throw error
    errors.push(...error.errors)
  }
  const problem = sampleProblem(sample, maxBytes)
  if (problem) errors.push(problem)
  let preview: LayoutPreview | null = null
  if (definition && !problem) {
    preview = await previewDefinedLayout(definition, await readFile(sample!.tmpPath!))
  }
  return { values, errors, preview }
}
