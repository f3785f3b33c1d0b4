import type { HttpContext } from '@adonisjs/core/http'
import { readFile, rm } from 'node:fs/promises'
import db from '@adonisjs/lucid/services/db'
import type Operator from '#operators/models/operator'
import {
  LAYOUT_FORM_FIELDS,
  saveStatementLayout,
} from '#reconciliation/actions/save_statement_layout'
import {
  describeDefinition,
  definitionFormValues,
  validateDefinition,
  type LayoutDefinition,
} from '#reconciliation/layouts/definition'
import { previewDefinedLayout, type LayoutPreview } from '#reconciliation/layouts/defined_layout'
import { pendingRequestsFor, reasonOptions } from '#admin/pending_requests'
import { APPROVAL_APPROVE_REASON_CODES } from '#approvals/actions/approve_request'
import { APPROVAL_REJECT_REASON_CODES } from '#approvals/actions/reject_request'
import { submitAction } from '#admin/operator_action'
import { ActionError, type FieldError } from '#core/validation'
import { BANKS } from '#core/banks'
import { formatGatewayDateTime } from '#core/clock'
import { STATEMENT_FILE_MAX_BYTES } from '#admin/controllers/statements_controller'

const PER_PAGE = 25

/** What the editor's selects offer. */
const CHOICES = {
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
const NEW_LAYOUT: Record<string, string> = {
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

const DECISION_CODES = {
  approveCodes: reasonOptions(APPROVAL_APPROVE_REASON_CODES),
  rejectCodes: reasonOptions(APPROVAL_REJECT_REASON_CODES),
}

function json(value: unknown) {
  return typeof value === 'string' ? JSON.parse(value) : value
}

/** A stand-in for the session's flash store on a page rendered in answer to a POST: the typed values and the errors. */
function formState(values: Record<string, unknown>, errors: FieldError[]) {
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

async function layoutRow(id: number) {
  return db.from('statement_layouts').where('id', id).first()
}

/**
 * The statement layouts operators define (docs/reconciliation.md, "Layouts
 * operators define"): the list, each layout with its versions and the
 * deposit accounts reading with it, and the editor (admins) that previews a
 * sample file line by line before a version is saved. Saving opens an
 * approval request for a second admin (`statement_layout.save`); viewers
 * and operators may look.
 */
export default class StatementLayoutsController {
  async index({ request, view, auth, session }: HttpContext) {
    const pageNumber = Math.max(1, Number(request.input('page', 1)) || 1)
    const page = await db
      .from('statement_layouts as l')
      .leftJoin('deposit_accounts as a', 'a.statement_layout_id', 'l.id')
      .groupBy('l.id')
      .orderBy('l.name')
      .select('l.id', 'l.name', 'l.bank', 'l.current_version', 'l.updated_at', 'l.created_by')
      .count('a.id as accounts')
      .paginate(pageNumber, PER_PAGE)
    const names = new Set((await db.from('statement_layouts').select('name')).map((r) => r.name))
    // New layouts waiting for a second admin (they are not in the list until approved).
    const waiting = await db
      .from('approval_requests')
      .where('target_type', 'statement_layout')
      .where('status', 'pending')
      .where('expires_at', '>', new Date())
      .orderBy('id')
      .select('target_id')
    const operator = auth.user as Operator
    const additions = []
    for (const row of waiting) {
      if (names.has(row.target_id)) continue
      additions.push(...(await pendingRequestsFor(operator, 'statement_layout', row.target_id)))
    }
    const pendingNames = new Set(waiting.map((row) => row.target_id))
    return view.render('admin/statement_layouts/index', {
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
      pendingRequests: additions,
      refusal: session.flashMessages.get('actionRefusal') ?? null,
      back: '/admin/statement-layouts',
      ...DECISION_CODES,
    })
  }

  /** The editor for a new layout. */
  async create({ view }: HttpContext) {
    return view.render('admin/statement_layouts/layout', {
      ...(await this.pageState(null, null)),
      values: NEW_LAYOUT,
      preview: null,
      sampleName: null,
    })
  }

  /** One layout: its current version, versions, accounts, pending change; the editor for admins. */
  async show(ctx: HttpContext) {
    const layout = await layoutRow(Number(ctx.params.id) || 0)
    if (!layout) throw ActionError.notFound('id', `No statement layout ${ctx.params.id}`)
    const state = await this.pageState(layout, ctx.auth.user as Operator)
    return ctx.view.render('admin/statement_layouts/layout', {
      ...state,
      refusal: ctx.session.flashMessages.get('actionRefusal') ?? null,
      values: {
        name: layout.name,
        bank: layout.bank ?? '',
        ...definitionFormValues(state.current!),
      },
      preview: null,
      sampleName: null,
    })
  }

  /**
   * The editor's form (multipart): "Preview" reads the sample file with the
   * layout as typed and shows the page again with every line and refused
   * cell (nothing saved); "Save" asks a second admin to approve it.
   */
  async submit(ctx: HttpContext) {
    const layout = ctx.params.id ? await layoutRow(Number(ctx.params.id) || 0) : null
    if (ctx.params.id && !layout)
      throw ActionError.notFound('id', `No statement layout ${ctx.params.id}`)
    const input = ctx.request.only(LAYOUT_FORM_FIELDS)
    if (layout) input.name = layout.name
    const sample = ctx.request.file('sample', { size: STATEMENT_FILE_MAX_BYTES })
    try {
      if (ctx.request.input('intent') === 'preview')
        return await this.preview(ctx, layout, input, sample)
      return await submitAction(
        ctx,
        (actor) => saveStatementLayout(input, actor),
        ({ request, saved }) => {
          ctx.session.flash(
            'success',
            request
              ? `Layout ${request.targetId}: approval request #${request.id} opened: waits for a second admin; imports read with it once approved.`
              : `Layout ${input.name}: version ${saved.version} saved.`
          )
          return ctx.response.redirect(
            layout ? `/admin/statement-layouts/${layout.id}` : '/admin/statement-layouts'
          )
        }
      )
    } finally {
      if (sample?.tmpPath) await rm(sample.tmpPath, { force: true })
    }
  }

  private async preview(
    ctx: HttpContext,
    layout: Record<string, any> | null,
    input: Record<string, unknown>,
    sample: ReturnType<HttpContext['request']['file']>
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
      // The name and bank do not matter for a preview; the definition does.
      definition = await validateDefinition(input)
    } catch (error) {
      if (!(error instanceof ActionError)) throw error
      errors.push(...error.errors)
    }
    if (!sample || !sample.tmpPath) {
      errors.push({
        field: 'sample',
        message: 'sample is required: choose a file of the bank to preview',
      })
    } else if (sample.hasErrors) {
      errors.push({
        field: 'sample',
        message: `sample must be at most ${STATEMENT_FILE_MAX_BYTES / 1024 / 1024} MB`,
      })
    }
    let preview: LayoutPreview | null = null
    if (definition && sample?.tmpPath && !sample.hasErrors) {
      preview = await previewDefinedLayout(definition, await readFile(sample.tmpPath))
    }
    ctx.view.share(formState(values, errors))
    const state = await this.pageState(layout, ctx.auth.user as Operator)
    return ctx.view.render('admin/statement_layouts/layout', {
      ...state,
      values,
      preview,
      sampleName: sample?.clientName ?? null,
    })
  }

  /** What every rendering of the layout page shows besides the form. */
  private async pageState(layout: Record<string, any> | null, operator: Operator | null) {
    const common = { ...CHOICES, ...DECISION_CODES, refusal: null }
    if (!layout) {
      return {
        ...common,
        layout: null,
        current: null as LayoutDefinition | null,
        currentRows: [],
        versions: [],
        accounts: [],
        pendingRequests: [],
        back: '/admin/statement-layouts/new',
        action: '/admin/statement-layouts/new',
      }
    }
    const versions = await db
      .from('statement_layout_versions')
      .where('statement_layout_id', layout.id)
      .orderBy('version', 'desc')
    const current = json(
      versions.find((row) => row.version === layout.current_version)!.definition
    ) as LayoutDefinition
    const accounts = await db
      .from('deposit_accounts')
      .where('statement_layout_id', layout.id)
      .orderBy('id')
      .select('id', 'bank', 'account_no', 'account_name', 'deposit_group')
    return {
      ...common,
      layout: {
        id: layout.id,
        name: layout.name,
        bank: layout.bank ?? '—',
        version: layout.current_version,
        createdBy: String(layout.created_by).replace(/^operator:/, ''),
      },
      current,
      currentRows: Object.entries(describeDefinition(current))
        .filter(([, value]) => value !== '—')
        .map(([field, value]) => ({ field, value })),
      versions: versions.map((row) => ({
        version: row.version,
        savedBy: String(row.saved_by).replace(/^operator:/, ''),
        approvedBy: row.approved_by ? String(row.approved_by).replace(/^operator:/, '') : '—',
        at: formatGatewayDateTime(new Date(row.created_at)),
        comment: row.comment ?? '',
        current: row.version === layout.current_version,
      })),
      accounts,
      pendingRequests: operator
        ? await pendingRequestsFor(operator, 'statement_layout', layout.name)
        : [],
      back: `/admin/statement-layouts/${layout.id}`,
      action: `/admin/statement-layouts/${layout.id}`,
    }
  }
}
