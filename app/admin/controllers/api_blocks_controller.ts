import type { HttpContext } from '@adonisjs/core/http'
import {
  authFailureCounters,
  authFailureStore,
  presentCounter,
} from '#merchant_api/auth_failure_blocks'
import { AUTH_FAILURE_BLOCK_SECONDS, AUTH_FAILURE_WINDOW_SECONDS } from '#merchant_api/rate_limits'
import { clearAuthFailureBlock } from '#merchant_api/actions/clear_auth_failure_block'
import { submitAction } from '#admin/operator_action'

/**
 * The merchant API's failed-authentication blocks: addresses and merchant_ids
 * over their limit (and those still counting), read from Redis. Viewers read;
 * operators clear one (audited), through the same action as `api:blocks --clear`.
 */
export default class ApiBlocksController {
  async index(ctx: HttpContext) {
    const redis = await authFailureStore()
    // Redis lost while reading: the page says it cannot read them, rather than failing.
    const found = redis ? await authFailureCounters(redis).catch(() => null) : null
    return ctx.view.render('admin/api_blocks', {
      reachable: found !== null,
      truncated: found?.truncated ?? false,
      rows: (found?.counters ?? []).map(presentCounter),
      windowSeconds: AUTH_FAILURE_WINDOW_SECONDS,
      blockMinutes: AUTH_FAILURE_BLOCK_SECONDS / 60,
    })
  }

  /** Lifts one block: its counters are deleted, with an audit row. */
  async clear(ctx: HttpContext) {
    return submitAction(
      ctx,
      (actor) =>
        clearAuthFailureBlock(
          { subject: ctx.request.input('subject'), comment: ctx.request.input('comment') },
          actor
        ),
      (result) => {
        const kind = presentCounter(result.cleared[0]).kind
        ctx.session.flash(
          'success',
          result.wasBlocked
            ? `Block of ${kind} ${result.subject} lifted: its failed authentications count from 0 again.`
            : `${kind} ${result.subject} was not blocked; its failed authentications count from 0 again.`
        )
        return ctx.response.redirect('/admin/api-blocks')
      },
      // The rows' forms have no field to show a message beside: on top of the page.
      { formFields: [] }
    )
  }
}
