import { Bouncer } from '@adonisjs/bouncer'
import type { HttpContext } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'
import { abilities } from '#operators/roles'
import type Operator from '#operators/models/operator'

/** A bouncer for the request's operator, also shared with the templates (@can). */
export default class InitializeBouncerMiddleware {
  async handle(ctx: HttpContext, next: NextFn) {
    ctx.bouncer = new Bouncer(
      () => (ctx.auth.user as Operator | undefined) || null,
      abilities
    ).setContainerResolver(ctx.containerResolver)
    ctx.view.share(ctx.bouncer.edgeHelpers)
    return next()
  }
}

declare module '@adonisjs/core/http' {
  export interface HttpContext {
    bouncer: Bouncer<Operator, typeof abilities>
  }
}
