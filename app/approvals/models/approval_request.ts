import { DateTime } from 'luxon'
import { BaseModel, column } from '@adonisjs/lucid/orm'
import { dateTimeColumn } from '#core/columns'

export const APPROVAL_STATUSES = [
  'pending',
  'approved',
  'rejected',
  'expired',
  'superseded',
] as const
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number]

const json = {
  prepare: (value: unknown) =>
    value === null || value === undefined ? null : JSON.stringify(value),
  consume: (value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value),
}

const nullableNumber = { consume: (value: unknown) => (value === null ? null : Number(value)) }

/**
 * A decision waiting for a second operator (four eyes): which action, on
 * which target, with which input, asked by whom; once decided, by whom and
 * what running the action returned.
 */
export default class ApprovalRequest extends BaseModel {
  @column({ isPrimary: true, consume: Number })
  declare id: number

  /** One pending request per target and kind ("mark_paid", "enable_deposits", ...). */
  @column()
  declare kind: string

  @column()
  declare targetType: string

  @column()
  declare targetId: string

  /** The registry's name of the action run on approval (approvable_actions.ts). */
  @column()
  declare action: string

  /** The action's validated input, run as stored. */
  @column(json)
  declare input: Record<string, unknown>

  /** Satang at stake, when the action moves money. */
  @column(nullableNumber)
  declare amount: number | null

  /** The requesting operator (null: asked from the command line). */
  @column(nullableNumber)
  declare requestedBy: number | null

  @column()
  declare requestedByActor: string

  /** The operator who reviewed the slip behind the request, if any. */
  @column(nullableNumber)
  declare reviewedBy: number | null

  @column()
  declare status: ApprovalStatus

  /** kind:target_type:target_id while pending, null after: the unique key allows one. */
  @column()
  declare pendingKey: string | null

  @column()
  declare reasonCode: string | null

  @column()
  declare comment: string | null

  @column(nullableNumber)
  declare decidedBy: number | null

  @column()
  declare decidedByActor: string | null

  @dateTimeColumn()
  declare decidedAt: DateTime | null

  @column()
  declare decisionReasonCode: string | null

  @column()
  declare decisionComment: string | null

  @column(json)
  declare result: Record<string, unknown> | null

  /** A money-directing change: the values when it was asked, as the card shows them. */
  @column(json)
  declare changeBefore: Record<string, unknown> | null

  /** ...and the values asked for. */
  @column(json)
  declare changeAfter: Record<string, unknown> | null

  @dateTimeColumn()
  declare expiresAt: DateTime

  @dateTimeColumn({ autoCreate: true })
  declare createdAt: DateTime

  @dateTimeColumn({ autoCreate: true, autoUpdate: true })
  declare updatedAt: DateTime

  /** Pending and not past its expiry: the only state in which it can be decided. */
  isLive(now: DateTime = DateTime.utc()) {
    return this.status === 'pending' && this.expiresAt > now
  }
}

/** The unique key of a pending request. */
export function pendingKeyOf(kind: string, target: { type: string; id: string }) {
  return `${kind}:${target.type}:${target.id}`
}
