// Who is using the console, per request. The console module's transform hook
// (index.tsx) resolves the session cookie before validation and, on a form,
// checks its CSRF token; each route then declares the role it needs with
// `consoleRoute`, exactly as the admin API's routes do with operatorRoute.
import { AppError } from '../shared/errors'
import type { Actor } from '../modules/audit/log'
import { roleAllows, type OperatorRole } from '../modules/operators/roles'

export interface ConsoleSession {
  /** The signed-in operator acting through this request (its actions are audited as `console`). */
  actor: Actor
  sessionId: string
  /** The session's CSRF token: every form carries it as `_csrf`. */
  csrf: string
}

const sessions = new WeakMap<Request, ConsoleSession>()

export function setConsoleSession(request: Request, session: ConsoleSession): void {
  sessions.set(request, session)
}

/** The signed-in operator of this console request (resolved before the route ran). */
export function consoleSession(request: Request): ConsoleSession {
  const session = sessions.get(request)
  if (session === undefined) throw new AppError('unauthorized', 'Sign in to the console')
  return session
}

/** A console route's role check, before validation: `...consoleRoute('moderator')`. Console pages stay out of the API document. */
export function consoleRoute(role: OperatorRole) {
  return {
    transform: ({ request }: { request: Request }) => {
      const { actor } = consoleSession(request)
      if (!roleAllows(actor.operator.role, role)) throw new AppError('forbidden', `This needs the ${role} role; you are ${actor.operator.role}`)
    },
    detail: { hide: true, 'x-arena-role': role },
  }
}
