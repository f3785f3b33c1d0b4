import type { HttpContext } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'

/** The sign-in pages: an operator already signed in goes to the back-office instead. */
export default class AdminGuestMiddleware {
  async handle(ctx: HttpContext, next: NextFn) {
    if (await ctx.auth.check()) return ctx.response.redirect('/admin')
    return next()
  }
}
