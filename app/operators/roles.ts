import { Bouncer } from '@adonisjs/bouncer'
import type Operator from '#operators/models/operator'
import { OPERATOR_ROLES, type OperatorRole } from '#operators/role_names'

export { OPERATOR_ROLES, type OperatorRole } from '#operators/role_names'

/*
 * Roles (role_names.ts), each including the one below: a viewer reads; an
 * operator also runs operations (reviews, decisions, resends); an admin also
 * configures (platforms, merchants, the deposit-account pool, operators).
 */

/** A role's place in the order viewer < operator < admin: a higher rank gives more access. */
export const roleRank = (role: OperatorRole) => OPERATOR_ROLES.indexOf(role)

export function hasRole(operator: Pick<Operator, 'role'>, needed: OperatorRole) {
  return roleRank(operator.role) >= roleRank(needed)
}

/** Abilities checked on the server for every back-office request (bouncer). */
export const readBackOffice = Bouncer.ability((operator: Operator) => hasRole(operator, 'viewer'))
export const runOperations = Bouncer.ability((operator: Operator) => hasRole(operator, 'operator'))
export const configureGateway = Bouncer.ability((operator: Operator) => hasRole(operator, 'admin'))

/** Every ability, for the request's bouncer (and @can in templates). */
export const abilities = { readBackOffice, runOperations, configureGateway }

export const ABILITY_BY_ROLE = {
  viewer: readBackOffice,
  operator: runOperations,
  admin: configureGateway,
} as const
