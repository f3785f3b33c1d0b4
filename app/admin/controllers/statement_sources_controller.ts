import type { HttpContext } from '@adonisjs/core/http'
import { ActionError } from '#core/validation'
import { submitAction } from '#admin/operator_action'
import { pendingRequestsFor, reasonOptions } from '#admin/pending_requests'
import { APPROVAL_APPROVE_REASON_CODES } from '#approvals/actions/approve_request'
import { APPROVAL_REJECT_REASON_CODES } from '#approvals/actions/reject_request'
import type ApprovalRequest from '#approvals/models/approval_request'
import type Operator from '#operators/models/operator'
import {
  fetchStatementSourceNow,
  saveStatementSource,
  setStatementSourceEnabled,
} from '#reconciliation/fetch/save_statement_source'
import drive from '@adonisjs/drive/services/main'
import {
  depositAccountChoices,
  fetchedFiles,
  keptFile,
  sourceView,
} from '#admin/queries/statement_sources'
import { statementSourcesPage } from '#admin/views/statement_sources'

/** The form's fields (the action's input names); `secret` is write-only. */
const SOURCE_FIELDS = [
  'deposit_account_id',
  'kind',
  'name',
  'host',
  'port',
  'username',
  'secret',
  'host_key_fingerprint',
  'imap_tls',
  'tls_ca',
  'remote_dir',
  'file_pattern',
  'mailbox',
  'sender',
  'layout',
  'every_minutes',
  'statement_due_by',
  'comment',
]

/** Optional settings: emptied on the edit form, they are cleared. */
const CLEARABLE = ['host_key_fingerprint', 'file_pattern', 'layout', 'statement_due_by']

const DECISION_CODES = {
  approveCodes: reasonOptions(APPROVAL_APPROVE_REASON_CODES),
  rejectCodes: reasonOptions(APPROVAL_REJECT_REASON_CODES),
}

const CHOICES = {
  kinds: [
    { value: 'sftp', label: 'SFTP directory (host-to-host)' },
    { value: 'imap', label: 'IMAP mailbox (statements by mail)' },
  ],
  tlsModes: [
    { value: 'implicit', label: 'TLS from the start (IMAPS, port 993)' },
    { value: 'starttls', label: 'STARTTLS, required (port 143)' },
  ],
}

function opened(request: ApprovalRequest) {
  return `approval request #${request.id} opened: waits for a second admin`
}

function pageNumber(ctx: HttpContext) {
  return Math.max(1, Number(ctx.request.input('page', 1)) || 1)
}

/**
 * Where each deposit account's statements are fetched from (SFTP, IMAP):
 * the sources with their last fetch, success and error, a form to add or
 * change one (the secret write-only; where statements come from waits for a
 * second admin), "Fetch now" for operators, and the files fetched with
 * where each came from and its import.
 */
export default class StatementSourcesController {
  async index(ctx: HttpContext) {
    return ctx.view.render('admin/statement_sources/index', {
      ...(await statementSourcesPage(ctx.auth.user as Operator)),
      refusal: ctx.session.flashMessages.get('actionRefusal') ?? null,
      back: '/admin/statement-sources',
      ...DECISION_CODES,
    })
  }

  async create(ctx: HttpContext) {
    return ctx.view.render('admin/statement_sources/form', {
      source: null,
      accounts: await depositAccountChoices(),
      ...CHOICES,
    })
  }

  async store(ctx: HttpContext) {
    const input = ctx.request.only(SOURCE_FIELDS)
    input.remove_after_import = ctx.request.input('remove_after_import') === 'on' ? 'on' : 'off'
    return this.#submit(
      ctx,
      (actor) => saveStatementSource(input, actor),
      ({ id, request }) => {
        if (request) {
          ctx.session.flash(
            'success',
            `New statement source "${String(input.name ?? '').trim()}" for deposit account ${input.deposit_account_id}: ${opened(request)}; nothing is fetched until approved.`
          )
          return ctx.response.redirect('/admin/statement-sources')
        }
        ctx.session.flash('success', `Statement source ${id} added.`)
        return ctx.response.redirect(`/admin/statement-sources/${id}`)
      }
    )
  }

  async show(ctx: HttpContext) {
    const id = Number(ctx.params.id) || 0
    const source = await sourceView(id)
    if (!source) throw ActionError.notFound('id', `no statement source ${ctx.params.id}`)
    const files = await fetchedFiles({ source: id }, pageNumber(ctx))
    return ctx.view.render('admin/statement_sources/show', {
      source,
      files: files.rows,
      page: files.page,
      query: (to: number) => new URLSearchParams({ page: String(to) }).toString(),
      accounts: await depositAccountChoices(),
      pendingRequests: await pendingRequestsFor(
        ctx.auth.user as Operator,
        'statement_source',
        String(id)
      ),
      refusal: ctx.session.flashMessages.get('actionRefusal') ?? null,
      back: `/admin/statement-sources/${id}`,
      ...DECISION_CODES,
      ...CHOICES,
    })
  }

  async update(ctx: HttpContext) {
    const id = String(ctx.params.id)
    const input = ctx.request.only(SOURCE_FIELDS)
    for (const field of CLEARABLE) if (input[field] === '') input[field] = 'none'
    // An empty secret (or CA, never shown to be kept) keeps the stored one.
    if (!input.secret) delete input.secret
    if (!input.tls_ca) delete input.tls_ca
    delete input.kind
    input.remove_after_import = ctx.request.input('remove_after_import') === 'on' ? 'on' : 'off'
    return this.#submit(
      ctx,
      (actor) => saveStatementSource({ ...input, id }, actor),
      ({ changed, request, asked }) => {
        const saved = changed.length > 0 ? `Saved: ${changed.join(', ')}.` : null
        const waits = request ? `${asked.join(', ')}: ${opened(request)}.` : null
        ctx.session.flash('success', [saved, waits].filter(Boolean).join(' ') || 'Nothing changed.')
        return ctx.response.redirect(`/admin/statement-sources/${id}`)
      }
    )
  }

  /** Switched off at once; switched on again with a second admin. */
  async enabled(ctx: HttpContext) {
    const id = String(ctx.params.id)
    const enabled = ctx.request.input('enabled') === 'on'
    return submitAction(
      ctx,
      (actor) => setStatementSourceEnabled(id, enabled, actor, ctx.request.input('comment')),
      ({ changed, request }) => {
        ctx.session.flash(
          'success',
          request
            ? `Switching statement source ${id} on: ${opened(request)}.`
            : changed.length === 0
              ? 'Nothing changed.'
              : enabled
                ? `Statement source ${id} is on.`
                : `Statement source ${id} is off: nothing is fetched from it.`
        )
        return ctx.response.redirect(`/admin/statement-sources/${id}`)
      }
    )
  }

  /** Operators: the worker fetches the source now (due or not, on or off). */
  async fetchNow(ctx: HttpContext) {
    return submitAction(
      ctx,
      () => fetchStatementSourceNow(String(ctx.params.id)),
      (source) => {
        ctx.session.flash(
          'success',
          `Fetch of statement source ${source.id} queued: the worker fetches it now; reload to see what came.`
        )
        return ctx.response.redirect(`/admin/statement-sources/${source.id}`)
      }
    )
  }

  async files(ctx: HttpContext) {
    const source = Number(ctx.request.input('source', 0)) || undefined
    const files = await fetchedFiles({ source }, pageNumber(ctx))
    return ctx.view.render('admin/statement_sources/files', {
      files: files.rows,
      page: files.page,
      source: source ?? null,
      query: (to: number) =>
        new URLSearchParams({
          ...(source ? { source: String(source) } : {}),
          page: String(to),
        }).toString(),
    })
  }

  /**
   * The kept copy of a fetched file, byte for byte as the bank's channel
   * gave it: to read it, or to import it by hand once a refusal is mended.
   */
  async download(ctx: HttpContext) {
    const file = await keptFile(Number(ctx.params.id))
    if (!file) return ctx.response.notFound('No such fetched file')
    const bytes = await drive.use().getBytes(file.storageKey)
    const name = file.fileName.replace(/[^\w.\-]+/g, '_')
    ctx.response.header('Content-Type', 'application/octet-stream')
    ctx.response.header(
      'Content-Disposition',
      `attachment; filename="${name}"; filename*=UTF-8''${encodeURIComponent(file.fileName)}`
    )
    ctx.response.header('Cache-Control', 'no-store')
    return ctx.response.send(Buffer.from(bytes))
  }

  /** submitAction, with the typed secret never kept in the session to refill the form. */
  async #submit<T>(
    ctx: HttpContext,
    run: Parameters<typeof submitAction<T>>[1],
    then: (result: T) => unknown
  ) {
    try {
      return await submitAction(ctx, run, then)
    } finally {
      ctx.session.responseFlashMessages.unset('input.secret')
    }
  }
}
