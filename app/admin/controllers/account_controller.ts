import type { HttpContext } from '@adonisjs/core/http'
import type Operator from '#operators/models/operator'

/** The operator's own account: role, second factor, sessions. */
export default class AccountController {
  async show({ view, auth }: HttpContext) {
    const operator = auth.user as Operator
    return view.render('admin/account', {
      recoveryCodesLeft: operator.recoveryCodeHashes?.length ?? 0,
    })
  }
}
