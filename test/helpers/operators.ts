// Named operators for tests (contract §11): created through the service as
// the CLI would (the admin token's identity), signed in with their one-time
// password replaced, so a test holds a live session of any role.
import type { TestApp } from './app'
import type { OperatorRole } from '../../src/modules/operators/roles'
import type { OperatorSessionKind } from '../../src/modules/operators/store'
import type { Actor } from '../../src/modules/audit/log'

export const OPERATOR_PASSWORD = 'operator password 1234'

/** An Actor as the CLI is: admin, no id. */
export function cliActor(ctx: Pick<TestApp, 'services'>, name = 'cli:test'): Actor {
  return ctx.services.audit.actor({ id: null, name, role: 'admin' }, 'cli')
}

let counter = 0

/** A new operator of `role`, its one-time password replaced by OPERATOR_PASSWORD, and a live session of `kind`. */
export async function signedInOperator(ctx: Pick<TestApp, 'services'>, role: OperatorRole, kind: OperatorSessionKind = 'api', name = `${role}-${++counter}`) {
  const { operator, password } = await ctx.services.operators.create({ name, role }, cliActor(ctx))
  const signedIn = await ctx.services.operatorSessions.signIn({ name, password, newPassword: OPERATOR_PASSWORD, kind, userAgent: 'test', ip: '127.0.0.1' })
  return { operator, token: signedIn.token, sessionId: signedIn.session.id }
}

/** The Authorization header of an operator API session. */
export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` }
}
