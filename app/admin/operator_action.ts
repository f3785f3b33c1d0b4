import type { HttpContext } from '@adonisjs/core/http'
import type Operator from '#operators/models/operator'
import { ActionError } from '#core/validation'
import { AlreadyDone } from '#core/already_done'
import type { Actor } from '#core/actor'

/** The signed-in operator as the audit log records them, with the request's origin. */
export function operatorActor(ctx: HttpContext): Actor {
  const operator = ctx.auth.user as Operator
  return {
    name: operator.actorName,
    operatorId: operator.id,
    ip: ctx.request.ip(),
    requestId: ctx.request.id() ?? null,
  }
}

/** A refusal shown beside the action that was refused (the `action` option of submitAction). */
export interface ActionRefusal {
  /** The form's key on the page ("freeze", "approve", "attach"…). */
  action: string
  /** notice: what was asked already holds (AlreadyDone); error: nothing was done. */
  tone: 'notice' | 'error'
  message: string
}

/**
 * Runs an operator action for a form: on success `then` answers (usually a
 * redirect with a flash message); when the action refuses, each error goes
 * beside its field (or on top of the form), what was typed is kept, and the
 * operator is sent back to the form. The Ace command shows the same messages.
 *
 * `formFields`, when given, are the fields the form shows an error beside:
 * a refusal on any other field (the order, the slip, the request decided)
 * goes on top of the page with the general ones, never to an unseen field.
 *
 * `action`, when given, names the form on a page of several actions: the
 * general refusals (and those on fields the form lacks) are flashed as
 * `actionRefusal` for that form to show at its top, instead of on top of the
 * page (errors beside the form's own fields need no heading), and a refusal
 * because it was already done is a notice, not an error.
 */
export async function submitAction<T>(
  ctx: HttpContext,
  run: (actor: Actor) => Promise<T>,
  then: (result: T) => unknown,
  options: { formFields?: readonly string[]; action?: string } = {}
) {
  try {
    const result = await run(operatorActor(ctx))
    return await then(result)
  } catch (error) {
    if (!(error instanceof ActionError)) throw error
    if (error.notFound && ctx.request.method() === 'GET') throw error
    const besideField = (item: { field: string | null }) =>
      item.field !== null && (!options.formFields || options.formFields.includes(item.field))
    const fieldErrors = error.errors.filter(besideField)
    const general = error.errors.filter((item) => !besideField(item))
    ctx.session.flashExcept(['_csrf', 'password'])
    if (fieldErrors.length > 0) {
      ctx.session.flash(
        'inputErrorsBag',
        fieldErrors.reduce<Record<string, string[]>>((bag, item) => {
          ;(bag[item.field!] ??= []).push(item.message)
          return bag
        }, {})
      )
    }
    const message =
      general.length > 0
        ? general.map((item) => item.message).join(' ')
        : 'Nothing was saved: please correct the fields marked below.'
    if (options.action) {
      // Only the fields are wrong: they are marked in the open form, nothing more to say.
      if (general.length === 0) return ctx.response.redirect().back()
      const refusal: ActionRefusal = {
        action: options.action,
        tone: error instanceof AlreadyDone ? 'notice' : 'error',
        message,
      }
      ctx.session.flash('actionRefusal', refusal)
    } else {
      ctx.session.flash('error', message)
    }
    return ctx.response.redirect().back()
  }
}
