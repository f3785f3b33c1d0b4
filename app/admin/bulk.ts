import type { HttpContext } from '@adonisjs/core/http'
import { ActionError } from '#core/validation'

/** One item's outcome in a bulk action: the page lists every one. */
export interface BulkResult {
  itemId: string
  ok: boolean
  message: string
}

/**
 * Runs `each` for every selected item, one after the other (each item is
 * its own transaction in the action), and keeps going when one is refused:
 * a refusal is that item's result, never the whole batch's. Errors that are
 * not refusals (the database is down) stop the batch and surface as usual.
 */
export async function runBulk(
  itemIds: string[],
  each: (itemId: string) => Promise<string>
): Promise<BulkResult[]> {
  const results: BulkResult[] = []
  for (const itemId of [...new Set(itemIds)]) {
    try {
      results.push({ itemId, ok: true, message: await each(itemId) })
    } catch (error) {
      if (!(error instanceof ActionError)) throw error
      results.push({ itemId, ok: false, message: error.errors.map((e) => e.message).join(' ') })
    }
  }
  return results
}

/** The ids ticked in a table form (`ids` as one value or many). */
export function selectedIds(ctx: HttpContext, field = 'ids'): string[] {
  const value = ctx.request.input(field, [])
  return (Array.isArray(value) ? value : [value])
    .map((id) => String(id).trim())
    .filter((id) => id.length > 0)
    .slice(0, 200)
}

/** Shows the per-item results on the next page (layout: "bulkResults"). */
export function flashBulkResults(ctx: HttpContext, title: string, results: BulkResult[]) {
  const failed = results.filter((result) => !result.ok).length
  ctx.session.flash('bulkResults', {
    title: `${title}: ${results.length - failed} done, ${failed} refused`,
    results,
  })
}
