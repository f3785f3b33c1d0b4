import type { HttpContext } from '@adonisjs/core/http'
import { rm } from 'node:fs/promises'
import type Operator from '#operators/models/operator'
import {
  LAYOUT_FORM_FIELDS,
  saveStatementLayout,
} from '#reconciliation/actions/save_statement_layout'
import { definitionFormValues } from '#reconciliation/layouts/definition'
import { submitAction } from '#admin/operator_action'
import { ActionError } from '#core/validation'
import { STATEMENT_FILE_MAX_BYTES } from '#admin/controllers/statements_controller'
import { statementLayoutRow } from '#admin/queries/statement_layouts'
import {
  DECISION_CODES,
  NEW_LAYOUT,
  formState,
  layoutListPage,
  layoutPageState,
  layoutPreview,
} from '#admin/views/statement_layouts'

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
    return view.render('admin/statement_layouts/index', {
      ...(await layoutListPage(pageNumber, auth.user as Operator)),
      refusal: session.flashMessages.get('actionRefusal') ?? null,
      back: '/admin/statement-layouts',
      ...DECISION_CODES,
    })
  }

  /** The editor for a new layout. */
  async create({ view }: HttpContext) {
    return view.render('admin/statement_layouts/layout', {
      ...(await layoutPageState(null, null)),
      values: NEW_LAYOUT,
      preview: null,
      sampleName: null,
    })
  }

  /** One layout: its current version, versions, accounts, pending change; the editor for admins. */
  async show(ctx: HttpContext) {
    const layout = await statementLayoutRow(Number(ctx.params.id) || 0)
    if (!layout) throw ActionError.notFound('id', `No statement layout ${ctx.params.id}`)
    const state = await layoutPageState(layout, ctx.auth.user as Operator)
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
    const layout = ctx.params.id ? await statementLayoutRow(Number(ctx.params.id) || 0) : null
    if (ctx.params.id && !layout)
      throw ActionError.notFound('id', `No statement layout ${ctx.params.id}`)
    const input = ctx.request.only(LAYOUT_FORM_FIELDS)
    if (layout) input.name = layout.name
    const sample = ctx.request.file('sample', { size: STATEMENT_FILE_MAX_BYTES })
    try {
      if (ctx.request.input('intent') === 'preview')
        return await this.preview(ctx, layout, input, sample)
      return await this.save(ctx, layout, input)
    } finally {
      if (sample?.tmpPath) await rm(sample.tmpPath, { force: true })
    }
  }

  private async save(
    ctx: HttpContext,
    layout: Record<string, any> | null,
    input: Record<string, unknown>
  ) {
    return submitAction(
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
  }

  private async preview(
    ctx: HttpContext,
    layout: Record<string, any> | null,
    input: Record<string, unknown>,
    sample: ReturnType<HttpContext['request']['file']>
  ) {
    const { values, errors, preview } = await layoutPreview(input, sample, STATEMENT_FILE_MAX_BYTES)
    ctx.view.share(formState(values, errors))
    return ctx.view.render('admin/statement_layouts/layout', {
      ...(await layoutPageState(layout, ctx.auth.user as Operator)),
      values,
      preview,
      sampleName: sample?.clientName ?? null,
    })
  }
}
