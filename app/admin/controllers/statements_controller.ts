import type { HttpContext } from '@adonisjs/core/http'
import { readFile, rm } from 'node:fs/promises'
import { importStatement } from '#reconciliation/actions/import_statement'
import { LAYOUTS } from '#reconciliation/layouts/index'
import { definedLayoutChoices } from '#reconciliation/statement_layouts'
import {
  depositAccountChoices,
  matchRates,
  confirmationFacts,
  statementImportPage,
  statementImports,
} from '#admin/queries/statements'
import { pendingRequestsFor, reasonOptions } from '#admin/pending_requests'
import { APPROVAL_APPROVE_REASON_CODES } from '#approvals/actions/approve_request'
import { APPROVAL_REJECT_REASON_CODES } from '#approvals/actions/reject_request'
import type Operator from '#operators/models/operator'
import { ActionError } from '#core/validation'
import { submitAction } from '#admin/operator_action'
import { importNotice } from '#admin/views/statement_import'
import type { Actor } from '#core/actor'
import type { MultipartFile } from '@adonisjs/core/bodyparser'

const PER_PAGE = 25

/**
 * Largest statement file the page takes: a busy account's day is far below
 * it (about 100 bytes a line); the body parser's own multipart limit is above.
 */
export const STATEMENT_FILE_MAX_BYTES = 10 * 1024 * 1024

/** The action's fields that describe the file: shown beside the file control. */
const FILE_FIELDS = new Set(['content', 'file_name'])

/**
 * The uploaded file imported (the same import action as the command, from
 * the same bytes), its problems shown beside the file control; the body
 * parser's temporary copy is removed whatever happens.
 */
async function importUploadedFile(
  input: Record<string, unknown>,
  file: MultipartFile | null,
  actor: Actor
) {
  try {
    if (!file || !file.tmpPath) {
      throw ActionError.field('file', 'file is required: choose the statement file')
    }
    if (file.hasErrors) {
      throw ActionError.field(
        'file',
        `file must be at most ${STATEMENT_FILE_MAX_BYTES / 1024 / 1024} MB`
      )
    }
    // Bytes, as the command reads them: the same file imports the same lines either way.
    const content = await readFile(file.tmpPath)
    return await importStatement({ ...input, file_name: file.clientName, content }, actor, {
      origin: { channel: 'upload' },
    }).catch((error) => {
      if (!(error instanceof ActionError)) throw error
      throw new ActionError(
        error.errors.map((item) =>
          item.field && FILE_FIELDS.has(item.field) ? { ...item, field: 'file' } : item
        ),
        error.notFound
      )
    })
  } finally {
    // The body parser's temporary copy: the statement is now in the database.
    if (file?.tmpPath) await rm(file.tmpPath, { force: true })
  }
}

/**
 * Bank statements: upload a deposit account's statement file (the same
 * import action as `statements:import`), the result of each import with the
 * lines still waiting for an operator, past imports, and the match rate per
 * account and day. Viewers read; operators upload.
 */
export default class StatementsController {
  async index({ request, view }: HttpContext) {
    const account = Number(request.input('account', 0)) || undefined
    const pageNumber = Math.max(1, Number(request.input('page', 1)) || 1)
    const imports = await statementImports({ account }, pageNumber, PER_PAGE)
    const accounts = await depositAccountChoices()
    return view.render('admin/statements/index', {
      accountFilter: account ? String(account) : '',
      imports: imports.rows,
      page: imports.page,
      query: (to: number) =>
        new URLSearchParams({
          ...(account ? { account: String(account) } : {}),
          page: String(to),
        }).toString(),
      accounts,
      layouts: [
        ...Object.keys(LAYOUTS).map((value) => ({ value, label: value })),
        // The layouts operators defined, each read with its current version.
        ...(await definedLayoutChoices()).map((layout) => ({
          value: layout.name,
          label: `${layout.name} (v${layout.version})`,
        })),
      ],
      rates: await matchRates(),
      maxMegabytes: STATEMENT_FILE_MAX_BYTES / 1024 / 1024,
    })
  }

  async show({ params, request, view, session, auth }: HttpContext) {
    const pageNumber = Math.max(1, Number(request.input('page', 1)) || 1)
    const found = await statementImportPage(Number(params.id) || 0, pageNumber)
    if (!found) throw ActionError.notFound('id', `No statement import ${params.id}`)
    const { statementImport } = found
    const operator = auth.user as Operator
    const waiting = statementImport.status === 'awaiting_confirmation'
    // The confirmation request, with what this operator may do (the server's own rules).
    const pending = waiting
      ? await pendingRequestsFor(operator, 'statement_import', String(statementImport.id))
      : []
    return view.render('admin/statements/import', {
      ...found,
      query: (to: number) => new URLSearchParams({ page: String(to) }).toString(),
      confirmation:
        statementImport.status === 'confirmed'
          ? null
          : await confirmationFacts(statementImport.id, statementImport.deposit_account_id),
      refusal: session.flashMessages.get('actionRefusal') ?? null,
      pendingRequests: pending,
      back: `/admin/statements/imports/${statementImport.id}`,
      approveCodes: reasonOptions(APPROVAL_APPROVE_REASON_CODES),
      rejectCodes: reasonOptions(APPROVAL_REJECT_REASON_CODES),
    })
  }

  /** A statement file from the browser (multipart), imported and matched; then its result. */
  async store(ctx: HttpContext) {
    const input = ctx.request.only(['deposit_account_id', 'layout'])
    const file = ctx.request.file('file', { size: STATEMENT_FILE_MAX_BYTES })
    return submitAction(
      ctx,
      (actor) => importUploadedFile(input, file, actor),
      (summary) => {
        const notice = importNotice(file!.clientName, summary)
        ctx.session.flash(notice.tone, notice.message)
        return ctx.response.redirect(`/admin/statements/imports/${summary.importId}`)
      }
    )
  }
}
