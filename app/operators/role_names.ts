/**
 * The back-office roles, lowest first, as the operators.role column holds
 * them. What each may do is roles.ts's; this file imports nothing, so that
 * the model can name a role without loading the abilities.
 */
export const OPERATOR_ROLES = ['viewer', 'operator', 'admin'] as const
export type OperatorRole = (typeof OPERATOR_ROLES)[number]
