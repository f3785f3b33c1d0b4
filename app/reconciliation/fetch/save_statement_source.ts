import { X509Certificate } from 'node:crypto'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type ApprovalRequest from '#approvals/models/approval_request'
import { approvalDetails } from '#approvals/approval_requests'
import {
  registerApprovableAction,
  type ApprovalTarget,
  type RunContext,
} from '#approvals/approvable_actions'
import { actsFromShell, askOrApplyFromShell } from '#approvals/maker_checker'
import { changedValues, recordAudit } from '#core/audit'
import { ActionError, clearable, onOff, validateInput, type FieldError } from '#core/validation'
import type { Actor } from '#core/actor'
import {
  SSH_FINGERPRINT,
  normalizeCertificateFingerprint,
  normalizeSshFingerprint,
} from '#reconciliation/fetch/channel'
import { DUE_BY } from '#reconciliation/fetch/missing_statements'
import {
  encryptSourceSecret,
  findSource,
  lockSource,
  parsePrivateKey,
  type SourceKind,
  type StatementSource,
} from '#reconciliation/fetch/statement_sources'
import { inTransaction } from '#core/transaction'
import { dispatch } from '#core/queue/queue_manager'

export const SAVE_STATEMENT_SOURCE_ACTION = 'statement_source.save'
/** One change of a source waits at a time. */
export const SAVE_STATEMENT_SOURCE_KIND = 'statement_source_change'
/** The target of a request to add a source, before it has an id. */
export const NEW_STATEMENT_SOURCE_TARGET = 'new_statement_source'

const schema = vine.object({
  id: vine.number().withoutDecimals().min(1).optional(),
  deposit_account_id: vine.number().withoutDecimals().min(1).optional(),
  kind: vine.enum(['sftp', 'imap'] as const).optional(),
  name: vine.string().trim().minLength(1).maxLength(80).optional(),
  host: vine
    .string()
    .trim()
    .maxLength(255)
    .regex(/^[A-Za-z0-9.:_-]+$/)
    .optional(),
  port: vine.number().withoutDecimals().range([1, 65535]).optional(),
  username: vine.string().trim().minLength(1).maxLength(255).optional(),
  /** The SSH private key or IMAP password as typed: never stored as such, never in a request. */
  secret: vine.string().maxLength(20_000).optional(),
  /** A stored request's secret: the id of its encrypted copy (statement_source_secrets). */
  secret_id: vine.number().withoutDecimals().min(1).optional(),
  host_key_fingerprint: clearable(vine.string().trim().maxLength(120)).optional(),
  imap_tls: vine.enum(['implicit', 'starttls'] as const).optional(),
  tls_ca: clearable(vine.string().trim().maxLength(20_000)).optional(),
  remote_dir: vine.string().trim().maxLength(500).optional(),
  file_pattern: clearable(vine.string().trim().maxLength(200)).optional(),
  remove_after_import: vine.any().use(onOff()).optional(),
  mailbox: vine.string().trim().maxLength(200).optional(),
  sender: vine.string().trim().toLowerCase().email().maxLength(255).optional(),
  layout: clearable(
    vine
      .string()
      .trim()
      .regex(/^[a-z0-9_-]{1,32}$/)
  ).optional(),
  every_minutes: vine.number().withoutDecimals().range([1, 1440]).optional(),
  statement_due_by: clearable(vine.string().trim().regex(DUE_BY)).optional(),
  enabled: vine.any().use(onOff()).optional(),
  comment: vine.string().trim().maxLength(500).optional(),
})
export const saveStatementSourceValidator = vine.compile(schema)
type SaveData = Infer<typeof schema>

const MESSAGES = {
  'host.regex': 'host must be a host name or an IP address',
  'sender.email': "sender must be the bank's e-mail address (e.g. statements@bank.example)",
  'layout.regex': 'layout must be a layout name (letters, digits, - and _)',
  'statement_due_by.regex': 'statement_due_by must be a time HH:mm (GMT+7), e.g. 09:30, or none',
  'port.range': 'port must be from 1 to 65535',
  'every_minutes.range': 'every_minutes must be from 1 to 1440',
}

/** What decides where a source's statements come from, and how they are read. */
export const CONFIG_FIELDS = [
  'deposit_account_id',
  'kind',
  'name',
  'host',
  'port',
  'username',
  'host_key_fingerprint',
  'imap_tls',
  'tls_ca',
  'remote_dir',
  'file_pattern',
  'remove_after_import',
  'mailbox',
  'sender',
  'layout',
  'every_minutes',
  'statement_due_by',
  'enabled',
] as const
type ConfigField = (typeof CONFIG_FIELDS)[number]

/** What may change at once: it moves no statement elsewhere (switching off only stops fetching). */
const AT_ONCE = new Set<string>(['name', 'every_minutes', 'statement_due_by'])

export type SourceAttributes = Pick<StatementSource, ConfigField>

/** A source as the audit log and the request card show it: the secret never, only whether it is set. */
export function sourceSnapshot(source: SourceAttributes, secret: 'set' | 'changed' | null) {
  return {
    deposit_account_id: source.deposit_account_id,
    kind: source.kind,
    name: source.name,
    host: source.host,
    port: source.port,
    username: source.username,
    secret,
    host_key_fingerprint: source.host_key_fingerprint,
    imap_tls: source.imap_tls,
    tls_ca: source.tls_ca ? caSummary(source.tls_ca) : null,
    remote_dir: source.remote_dir,
    file_pattern: source.file_pattern,
    remove_after_import: source.remove_after_import,
    mailbox: source.mailbox,
    sender: source.sender,
    layout: source.layout,
    every_minutes: source.every_minutes,
    statement_due_by: source.statement_due_by,
    enabled: source.enabled,
  }
}

/** A CA certificate named by its subject and fingerprint (its PEM is long and says nothing). */
function caSummary(pem: string) {
  try {
    const certificate = new X509Certificate(pem)
    return `${certificate.subject.replace(/\n/g, ', ')} (${certificate.fingerprint256})`
  } catch {
    return 'unreadable certificate'
  }
}

const DEFAULT_PORT = { sftp: 22, implicit: 993, starttls: 143 }

/** The source the input makes: the current one (null: a new one) with the fields given. */
function resultingSource(current: SourceAttributes | null, data: SaveData): SourceAttributes {
  const kind = (current?.kind ?? data.kind ?? 'sftp') as SourceKind
  const pick = <K extends ConfigField>(field: K, fallback: SourceAttributes[K]) => {
    const value = (data as Record<string, unknown>)[field]
    if (value === undefined) return current ? current[field] : fallback
    return value as SourceAttributes[K]
  }
  const imapTls = kind === 'imap' ? (pick('imap_tls', 'implicit') ?? 'implicit') : null
  const fingerprint = pick('host_key_fingerprint', null)
  return {
    deposit_account_id: pick('deposit_account_id', 0),
    kind,
    name: pick('name', ''),
    host: pick('host', ''),
    port: pick('port', kind === 'sftp' ? DEFAULT_PORT.sftp : DEFAULT_PORT[imapTls!]),
    username: pick('username', ''),
    host_key_fingerprint: fingerprint
      ? kind === 'sftp'
        ? normalizeSshFingerprint(fingerprint)
        : (normalizeCertificateFingerprint(fingerprint) ?? fingerprint)
      : null,
    imap_tls: imapTls,
    tls_ca: kind === 'imap' ? pick('tls_ca', null) : null,
    remote_dir: kind === 'sftp' ? pick('remote_dir', '') : null,
    file_pattern: pick('file_pattern', kind === 'sftp' ? '*.csv' : null),
    remove_after_import: kind === 'sftp' ? Boolean(pick('remove_after_import', false)) : false,
    mailbox: kind === 'imap' ? pick('mailbox', 'INBOX') : null,
    sender: kind === 'imap' ? pick('sender', null) : null,
    layout: pick('layout', null),
    every_minutes: pick('every_minutes', 15),
    statement_due_by: pick('statement_due_by', null),
    enabled: Boolean(pick('enabled', true)),
  }
}

/** Every problem of the source the change makes, each with its field. */
function problems(source: SourceAttributes, secret: string | undefined, creating: boolean) {
  const found: FieldError[] = []
  const need = (field: ConfigField, what: string) => {
    const value = source[field]
    if (value === null || value === undefined || value === '' || value === 0) {
      found.push({ field, message: `${field} is required: ${what}` })
    }
  }
  need('deposit_account_id', 'the deposit account whose statements this source fetches')
  need('name', 'a name for this source (e.g. "KBank H2H")')
  need('host', "the bank's server")
  need('username', 'the user the bank gave')
  if (source.kind === 'sftp') {
    need('remote_dir', 'the directory the bank drops statement files in')
    if (!source.host_key_fingerprint) {
      found.push({
        field: 'host_key_fingerprint',
        message:
          'host_key_fingerprint is required: the server\'s host key as "SHA256:…" (ssh-keyscan -p PORT HOST | ssh-keygen -lf -)',
      })
    } else if (!SSH_FINGERPRINT.test(source.host_key_fingerprint)) {
      found.push({
        field: 'host_key_fingerprint',
        message:
          'host_key_fingerprint must be an OpenSSH SHA256 fingerprint: "SHA256:" and 43 base64 characters',
      })
    }
  } else {
    need('sender', "the bank's sender address: only its mails are read")
    if (
      source.host_key_fingerprint &&
      !normalizeCertificateFingerprint(source.host_key_fingerprint)
    ) {
      found.push({
        field: 'host_key_fingerprint',
        message:
          'host_key_fingerprint must be the certificate\'s SHA-256 fingerprint: 32 hex bytes ("AB:CD:…", as openssl x509 -fingerprint -sha256 prints it), or none',
      })
    }
    if (source.tls_ca) {
      try {
        new X509Certificate(source.tls_ca)
      } catch {
        found.push({
          field: 'tls_ca',
          message: 'tls_ca must be a PEM certificate (-----BEGIN CERTIFICATE-----)',
        })
      }
    }
  }
  if (creating && !secret) {
    found.push({
      field: 'secret',
      message:
        source.kind === 'sftp'
          ? 'secret is required: the SSH private key (OpenSSH or PEM, without a passphrase) the bank authorised'
          : 'secret is required: the mailbox password',
    })
  }
  if (secret && source.kind === 'sftp') {
    const parsed = parsePrivateKey(secret)
    if (parsed.error) found.push({ field: 'secret', message: `secret: ${parsed.error}` })
  }
  if (secret !== undefined && source.kind === 'imap' && secret.length > 500) {
    found.push({ field: 'secret', message: 'secret must be at most 500 characters' })
  }
  return found
}

function refuseIfAny(found: FieldError[]) {
  if (found.length > 0) throw new ActionError(found)
}

function sourceTarget(id: number): ApprovalTarget {
  return { type: 'statement_source', id: String(id), amount: null, reviewedBy: null }
}

function newSourceTarget(source: SourceAttributes): ApprovalTarget {
  return {
    type: NEW_STATEMENT_SOURCE_TARGET,
    id: `${source.deposit_account_id}:${source.name}`.slice(0, 120),
    amount: null,
    reviewedBy: null,
  }
}

/**
 * Locks what the change depends on and checks it: the source (a change),
 * the deposit account it fetches for, a name not used by another source of
 * that account, the secret a stored request names.
 */
async function prepareSave(trx: TransactionClientContract, data: SaveData) {
  const current = data.id ? await lockSource(trx, data.id) : null
  if (data.id && !current) throw ActionError.notFound('id', `no statement source ${data.id}`)
  if (current && data.kind && data.kind !== current.kind) {
    throw ActionError.field(
      'kind',
      `source ${current.id} is an ${current.kind.toUpperCase()} source: add a new source for another kind`
    )
  }
  const after = resultingSource(current, data)
  refuseIfAny(problems(after, data.secret, !current && data.secret_id === undefined))
  const account = await trx
    .from('deposit_accounts')
    .where('id', after.deposit_account_id)
    .select('id')
    .first()
  if (!account) {
    throw ActionError.field('deposit_account_id', `no deposit account ${after.deposit_account_id}`)
  }
  const clash = await trx
    .from('statement_sources')
    .where('deposit_account_id', after.deposit_account_id)
    .where('name', after.name)
    .if(current !== null, (query) => query.whereNot('id', current!.id))
    .select('id')
    .first()
  if (clash) {
    throw ActionError.field(
      'name',
      `deposit account ${after.deposit_account_id} already has a statement source named "${after.name}" (source ${clash.id})`
    )
  }
  let secretEncrypted: string | null = null
  if (data.secret_id !== undefined) {
    const row = await trx
      .from('statement_source_secrets')
      .where('id', data.secret_id)
      .forUpdate()
      .first()
    if (!row)
      throw ActionError.general(`the secret of this request is gone (secret ${data.secret_id})`)
    secretEncrypted = String(row.secret_encrypted)
  }
  const secretChanged = data.secret !== undefined || data.secret_id !== undefined
  const diff = changedValues(
    current ? sourceSnapshot(current, 'set') : {},
    sourceSnapshot(after, current ? (secretChanged ? 'changed' : 'set') : 'set')
  )
  return {
    current,
    after,
    diff,
    secretEncrypted,
    target: current ? sourceTarget(current.id) : newSourceTarget(after),
  }
}
type SavePrepared = Awaited<ReturnType<typeof prepareSave>>

/** A change applied at once only when it can only stop fetching (or rename, reschedule). */
function appliesAtOnce(field: string, before: unknown, after: unknown) {
  if (field === 'enabled') return before === true && after === false
  return AT_ONCE.has(field)
}

/** Keeps a typed secret encrypted apart, for a request to name by id (and delete when it ends). */
async function stageSecret(trx: TransactionClientContract, secret: string) {
  const [id] = await trx.table('statement_source_secrets').insert({
    secret_encrypted: encryptSourceSecret(secret),
    created_at: new Date(),
  })
  return Number(id)
}

/** Where the channel is: a change of it reads the mailbox from its first mail again. */
const CHANNEL_FIELDS = ['host', 'port', 'username', 'mailbox']

async function applySave(
  trx: TransactionClientContract,
  prepared: SavePrepared,
  fields: string[],
  secretEncrypted: string | null,
  actor: Actor,
  comment: string | undefined,
  request: ApprovalRequest | null,
  extra: Record<string, unknown> = {}
) {
  const { current, after } = prepared
  const now = new Date()
  const details = { ...approvalDetails(request), ...extra }
  if (!current) {
    if (!secretEncrypted) throw ActionError.field('secret', 'secret is required')
    const [id] = await trx.table('statement_sources').insert({
      ...after,
      secret_encrypted: secretEncrypted,
      created_at: now,
      updated_at: now,
    })
    await recordAudit(trx, actor, {
      action: 'statement_source.create',
      target: { type: 'statement_source', id: String(id) },
      after: sourceSnapshot(after, 'set'),
      reason: { comment },
      details: Object.keys(details).length > 0 ? details : null,
    })
    return { id: Number(id), changed: fields }
  }
  const values: Record<string, unknown> = {}
  for (const field of fields) {
    if (field === 'secret') continue
    values[field] = after[field as ConfigField]
  }
  if (fields.includes('secret') && secretEncrypted) values.secret_encrypted = secretEncrypted
  if (fields.some((field) => CHANNEL_FIELDS.includes(field))) {
    values.imap_uid_validity = null
    values.imap_last_uid = null
  }
  await trx
    .from('statement_sources')
    .where('id', current.id)
    .update({ ...values, updated_at: now })
  const shown = (snapshot: Record<string, unknown>) =>
    Object.fromEntries(fields.map((field) => [field, snapshot[field] ?? null]))
  await recordAudit(trx, actor, {
    action: 'statement_source.update',
    target: { type: 'statement_source', id: String(current.id) },
    before: shown(prepared.diff.before),
    after: shown(prepared.diff.after),
    reason: { comment },
    details: Object.keys(details).length > 0 ? details : null,
  })
  return { id: current.id, changed: fields }
}

export interface SourceSave {
  /** The source's id; null while a new source waits for approval. */
  id: number | null
  /** What changed now. */
  changed: string[]
  request: ApprovalRequest | null
  /** What waits for the request. */
  asked: string[]
  breakGlass: boolean
}

function describe(data: SaveData) {
  const fields = Object.keys(data).filter(
    (field) => !['id', 'comment', 'secret_id'].includes(field) && (data as any)[field] !== undefined
  )
  if (data.secret_id !== undefined) fields.push('secret')
  return data.id
    ? `change statement source ${data.id}: ${fields.join(', ')}`
    : `add ${String(data.kind ?? '').toUpperCase()} statement source "${data.name}" (${data.host}) for deposit account ${data.deposit_account_id}`
}

/**
 * Adds a statement source to a deposit account, or changes one: only the
 * fields given change; an empty secret keeps the stored one.
 *
 * Four eyes: where statements come from (the account, the server, its host
 * key or certificate, the user and secret, the directory, pattern, mailbox
 * and sender, the layout, switching it on) decides what the gateway takes
 * as the bank's word, so in the back-office a new source, or such a change,
 * opens an approval request for a second admin (the request names the
 * typed secret by the id of its encrypted copy: neither the request nor its
 * audit row holds it). Switching a source off, renaming it, its interval
 * and its due hour apply at once. From the shell everything applies at
 * once, recorded as a break-glass use.
 */
export async function saveStatementSource(
  input: Record<string, unknown>,
  actor: Actor
): Promise<SourceSave> {
  const data = await validateInput(saveStatementSourceValidator, input, MESSAGES)
  if (data.secret_id !== undefined) {
    throw ActionError.field('secret_id', 'secret_id is set by an approval request, never typed')
  }
  return inTransaction(async (trx) => {
    const prepared = await prepareSave(trx, data)
    const { current, after, diff } = prepared
    if (current && diff.changed.length === 0) {
      return { id: current.id, changed: [], request: null, asked: [], breakGlass: false }
    }
    const secretId = data.secret !== undefined ? await stageSecret(trx, data.secret) : null
    const stored = (fields: string[]): SaveData => ({
      ...(current ? { id: current.id } : { kind: after.kind }),
      ...Object.fromEntries(
        fields
          .filter((field) => field !== 'secret' && field !== 'kind')
          .map((field) => [field, after[field as ConfigField] ?? 'none'])
      ),
      ...(secretId !== null ? { secret_id: secretId } : {}),
      ...(data.comment ? { comment: data.comment } : {}),
    })
    const now = current
      ? diff.changed.filter((field) => appliesAtOnce(field, diff.before[field], diff.after[field]))
      : []
    const asked = diff.changed.filter((field) => !now.includes(field))
    const applyNow = async (fields: string[], extra: Record<string, unknown> = {}) => {
      const secret = secretId !== null ? await takeStagedSecret(trx, secretId) : null
      return applySave(trx, prepared, fields, secret, actor, data.comment, null, extra)
    }
    if (asked.length === 0) {
      await applyNow(now)
      return { id: current!.id, changed: now, request: null, asked: [], breakGlass: false }
    }
    const outcome = await askOrApplyFromShell(trx, {
      action: SAVE_STATEMENT_SOURCE_ACTION,
      target: prepared.target,
      input: stored(current ? asked : diff.changed),
      prepared,
      actor,
      reason: { comment: data.comment },
      field: current ? (asked.find((field) => field !== 'secret') ?? 'secret') : 'name',
      summary: current
        ? `changed statement source ${current.id} (deposit account ${after.deposit_account_id}): ${asked.join(', ')}`
        : `added ${after.kind.toUpperCase()} statement source "${after.name}" (${after.host}) for deposit account ${after.deposit_account_id}`,
      run: () => applyNow(diff.changed),
    })
    if (!outcome.request) {
      return {
        id: outcome.result.id,
        changed: diff.changed,
        request: null,
        asked: [],
        breakGlass: actsFromShell(actor),
      }
    }
    if (now.length > 0) {
      await applySave(trx, prepared, now, null, actor, data.comment, null, {
        approval_request_id: outcome.request.id,
        waiting_for_approval: asked,
      })
    }
    return {
      id: current?.id ?? null,
      changed: now,
      request: outcome.request,
      asked,
      breakGlass: false,
    }
  })
}

/** The staged secret's ciphertext, and the staged copy deleted (it lives on in the source). */
async function takeStagedSecret(trx: TransactionClientContract, id: number) {
  const row = await trx.from('statement_source_secrets').where('id', id).forUpdate().first()
  if (!row) return null
  await trx.from('statement_source_secrets').where('id', id).delete()
  return String(row.secret_encrypted)
}

/**
 * Switches a source off (or on, which waits for a second admin in the
 * back-office like any change that starts fetching).
 */
export async function setStatementSourceEnabled(
  id: number | string,
  enabled: boolean,
  actor: Actor,
  comment?: string
) {
  return saveStatementSource({ id, enabled: enabled ? 'on' : 'off', comment }, actor)
}

/** The fields a stored request changes. */
function askedFields(data: SaveData) {
  const fields = Object.keys(data).filter(
    (field) =>
      !['id', 'comment', 'secret_id', 'secret'].includes(field) &&
      (data as Record<string, unknown>)[field] !== undefined
  )
  if (data.secret_id !== undefined) fields.push('secret')
  return fields
}

/*
 * A new source, or a change of where statements come from, waits for a
 * second admin; approving checks the source and the account again and
 * applies it as stored, with the staged secret.
 */
registerApprovableAction<SaveData, SavePrepared>({
  name: SAVE_STATEMENT_SOURCE_ACTION,
  kind: SAVE_STATEMENT_SOURCE_KIND,
  approverRole: 'admin',
  sensitive: true,
  describe,
  change: (data, prepared) => {
    const fields = prepared.current
      ? askedFields(data)
      : Object.keys(prepared.diff.after).filter((field) => prepared.diff.after[field] !== null)
    const pickFields = (snapshot: Record<string, unknown>) =>
      Object.fromEntries(fields.map((field) => [field, snapshot[field] ?? null]))
    return {
      before: prepared.current ? pickFields(sourceSnapshot(prepared.current, 'set')) : {},
      after: pickFields(
        sourceSnapshot(prepared.after, prepared.current && data.secret_id ? 'changed' : 'set')
      ),
    }
  },
  validate: (input) => validateInput(saveStatementSourceValidator, input, MESSAGES),
  prepare: async (trx, data) => {
    const prepared = await prepareSave(trx, data)
    if (prepared.current && prepared.diff.changed.length === 0) {
      throw ActionError.general(
        `statement source ${prepared.current.id} already is as asked: nothing to change`
      )
    }
    return prepared
  },
  run: async (trx, prepared, data, context: RunContext) => {
    const secret = data.secret_id !== undefined ? await takeStagedSecret(trx, data.secret_id) : null
    const fields = prepared.current ? askedFields(data) : prepared.diff.changed
    const result = await applySave(
      trx,
      prepared,
      fields,
      secret,
      context.actor,
      data.comment,
      context.request
    )
    return { statement_source_id: result.id, changed: result.changed }
  },
  closed: async (trx, data) => {
    if (data.secret_id !== undefined) {
      await trx.from('statement_source_secrets').where('id', data.secret_id).delete()
    }
  },
})

/**
 * "Fetch now": the worker fetches the source at once, due or not, on or
 * off. Refused for an unknown source, or when the queue is unreachable.
 */
export async function fetchStatementSourceNow(id: string) {
  const source = await findSource(Number(id) || 0)
  if (!source) throw ActionError.notFound('id', `no statement source ${id}`)
  try {
    await dispatch('fetchStatementSource', { sourceId: source.id })
  } catch {
    throw ActionError.general(
      'the fetch could not be queued (the queue is unreachable): try again, or run statements:fetch on a server'
    )
  }
  return source
}
