// Operator roles (contract §11), lowest first: viewer < moderator / finance <
// admin. Moderator and finance are side by side: neither includes the other.
export const OPERATOR_ROLES = ['viewer', 'moderator', 'finance', 'admin'] as const
export type OperatorRole = (typeof OPERATOR_ROLES)[number]

/** True when an operator of `role` may do what needs `needed`. */
export function roleAllows(role: OperatorRole, needed: OperatorRole): boolean {
  if (role === needed || role === 'admin') return true
  return needed === 'viewer'
}

/** The roles below `needed`: each of them is refused what needs it (the table-driven test walks these). */
export function rolesBelow(needed: OperatorRole): OperatorRole[] {
  return OPERATOR_ROLES.filter((role) => !roleAllows(role, needed))
}
