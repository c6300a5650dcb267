// What every operator route shares: who may call it, how the caller is
// known, and the route documentation naming both.
//
// The caller is resolved once per request by the operator module's transform
// hook (before validation, so a caller without a credential learns nothing
// about a body): the admin token (ARENA_ADMIN_TOKEN: role admin, name
// `token`) or a named operator's API session as a bearer (./index.ts; how
// one signs in: ./operators.ts). Each route then declares the role it needs
// with `operatorRoute`, whose own transform refuses a lower role with 403
// `forbidden`, still before validation. The role is also written into the
// route's OpenAPI `x-arena-role`, which the table-driven test over app.routes
// reads.
import { AppError } from '../../shared/errors'
import { requiredHeaders } from '../../plugins/openapi'
import type { Actor } from '../audit/log'
import { roleAllows, type OperatorRole } from '../operators/roles'

export const ADMIN_TOKEN_HEADER = 'x-admin-token'
/** Every operator route: the credential is checked before anything else, validation included; then the role. */
export const OPERATOR = { 401: ['unauthorized'], 403: ['forbidden'] } as const

const actors = new WeakMap<Request, Actor>()

/** Called by the credential check once it knows who is calling. */
export function setActor(request: Request, actor: Actor): void {
  actors.set(request, actor)
}

/** The operator calling this route (resolved before the route ran). */
export function actorOf(request: Request): Actor {
  const actor = actors.get(request)
  // Unreachable behind the credential check; a route mounted outside it would fail here, not act anonymously.
  if (actor === undefined) throw new AppError('unauthorized', 'No operator credential')
  return actor
}

/** Refuses a caller whose role is below `role`: the per-route transform of operatorRoute. */
function requireRole(role: OperatorRole) {
  return ({ request }: { request: Request }) => {
    const actor = actorOf(request)
    if (!roleAllows(actor.operator.role, role)) {
      throw new AppError('forbidden', `This needs the ${role} role; ${actor.operator.name} is ${actor.operator.role}`)
    }
  }
}

/** A route's role check and documentation: `...operatorRoute('moderator', 'Resolve a match')`. */
export function operatorRoute(role: OperatorRole, summary: string) {
  return {
    transform: requireRole(role),
    detail: { tags: ['admin'], summary: `${summary} (role: ${role})`, parameters: requiredHeaders(ADMIN_TOKEN_HEADER), 'x-arena-role': role },
  }
}
