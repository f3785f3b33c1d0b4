import vine from '@vinejs/vine'
import SavedOrderView from '#payments/models/saved_order_view'
import { hasErrors, orderQueryString, readOrderSearch } from '#payments/order_filters'
import { recordAudit } from '#core/audit'
import { isDuplicateKey } from '#core/db_retry'
import { ActionError, validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import { inTransaction } from '#core/transaction'

export const saveOrderViewValidator = vine.compile(
  vine.object({
    name: vine.string().trim().minLength(1).maxLength(80),
    /** The orders list's query string, as the list's address has it. */
    query: vine.string().trim().maxLength(2000),
  })
)

/**
 * Saves the orders list's current filter under a name, shared with every
 * operator. The query string is read the way the list reads it and stored
 * in its canonical form (known filters, sort, kind; never a page), so a
 * view shows the same orders whoever opens it. A filter the list refuses is
 * refused here; a name is unique within a kind.
 */
export async function saveOrderView(input: Record<string, unknown>, actor: Actor) {
  const data = await validateInput(saveOrderViewValidator, input)
  if (!actor.operatorId) throw ActionError.general('Only a signed-in operator saves views')
  const search = readOrderSearch(Object.fromEntries(new URLSearchParams(data.query)))
  if (hasErrors(search)) {
    // The filter is a hidden field of the form: its problems go on top, not beside it.
    throw ActionError.general(
      `The search has errors, fix them first: ${Object.values(search.errors).join('; ')}`
    )
  }
  const query = orderQueryString(search)
  if (query.length > 2000) throw ActionError.general('The search is too long to save')
  try {
    return await inTransaction(async (trx) => {
      const view = await SavedOrderView.create(
        { name: data.name, kind: search.kind, query, createdBy: actor.operatorId! },
        { client: trx }
      )
      await recordAudit(trx, actor, {
        action: 'order_view.save',
        target: { type: 'saved_order_view', id: String(view.id) },
        after: { name: view.name, kind: view.kind, query },
      })
      return view
    })
  } catch (error) {
    if (isDuplicateKey(error)) {
      throw ActionError.field('name', `a ${search.kind} view named "${data.name}" already exists`)
    }
    throw error
  }
}
