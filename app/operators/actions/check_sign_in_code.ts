import type Operator from '#operators/models/operator'
import { checkSecondFactor, recordFailedSignIn, type RequestOrigin } from '#operators/sign_in'
import { countFailedSignIn, signInBlock, type SignInBlock } from '#operators/sign_in_limits'

/** How the second step of a sign-in ended. */
export type SignInCodeCheck =
  | { outcome: 'blocked'; block: NonNullable<SignInBlock> }
  /** The code of a time step already used: right, but too late; the next one works. */
  | { outcome: 'reused' }
  | { outcome: 'wrong' }
  | { outcome: 'proved'; method: 'totp' | 'recovery_code' }

/**
 * The second step of a sign-in: a TOTP code or a recovery code. Refused
 * while failed sign-ins lock the account (audited as rate limited); a wrong
 * code, or one already used, counts as a failed sign-in and is audited.
 */
export async function checkSignInCode(
  operator: Operator,
  code: string,
  origin: RequestOrigin & { ip: string }
): Promise<SignInCodeCheck> {
  const block = await signInBlock(operator.email, origin.ip, true)
  if (block) {
    await recordFailedSignIn(operator.email, 'rate_limited', origin)
    return { outcome: 'blocked', block }
  }
  const method = await checkSecondFactor(operator.id, code)
  if (method === 'reused' || method === null) {
    await countFailedSignIn(operator.email, origin.ip, true)
    await recordFailedSignIn(
      operator.email,
      method === 'reused' ? 'second_factor_reused' : 'second_factor',
      origin
    )
    return { outcome: method === 'reused' ? 'reused' : 'wrong' }
  }
  return { outcome: 'proved', method }
}
