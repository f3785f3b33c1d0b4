import vine from '@vinejs/vine'
import SavedOrderView from '#payments/models/saved_order_view'
import { recordAudit } from '#core/audit'
import { ActionError, validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import { inTransaction } from '#core/transaction'

export const deleteOrderViewValidator = vine.compile(
  vine.object({
    id: vine.number().withoutDecimals().positive(),
  })
)

/**
 * Deletes a saved orders view. Views are shared, but only the operator who
 * saved one deletes it (the others' lists would change under them).
 */
export async function deleteOrderView(input: Record<string, unknown>, actor: Actor) {
  const { id } = await validateInput(deleteOrderViewValidator, input)
  return inTransaction(async (trx) => {
    const view = await SavedOrderView.query({ client: trx }).where('id', id).forUpdate().first()
    if (!view) throw ActionError.notFound('id', `no saved view ${id}`)
    if (!actor.operatorId || view.createdBy !== actor.operatorId) {
      throw ActionError.general(
        `View "${view.name}" was saved by another operator: only they delete it`
      )
    }
    await view.useTransaction(trx).delete()
    await recordAudit(trx, actor, {
      action: 'order_view.delete',
      target: { type: 'saved_order_view', id: String(view.id) },
      before: { name: view.name, kind: view.kind, query: view.query },
    })
    return view
  })
}
