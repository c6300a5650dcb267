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

/** What a console page answered: status, page, and where a redirect goes. */
export interface ConsoleAnswer {
  status: number
  html: string
  location: string | null
}

/**
 * A new operator of `role` signed in to the console (its session cookie),
 * with its session's CSRF token: GET a page, POST a form (the token added
 * unless `csrf` says otherwise: null sends none).
 */
export async function consoleAs(ctx: Pick<TestApp, 'services' | 'handle'>, role: OperatorRole) {
  const op = await signedInOperator(ctx, role, 'console')
  const cookie = `arena_console=${op.token}`
  const csrf = ctx.services.operatorSessions.csrfFor(op.token)
  const answer = async (res: Response): Promise<ConsoleAnswer> => ({ status: res.status, html: await res.text(), location: res.headers.get('location') })
  return {
    op,
    csrf,
    // As a browser asks: without the #fragment.
    get: async (path: string) => answer(await ctx.handle(new Request(`http://localhost${path.split('#')[0]}`, { headers: { cookie } }))),
    post: async (path: string, fields: Record<string, string>, token: string | null = csrf) =>
      answer(
        await ctx.handle(
          new Request(`http://localhost${path}`, {
            method: 'POST',
            headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ ...fields, ...(token === null ? {} : { _csrf: token }) }).toString(),
          }),
        ),
      ),
  }
}

/** A console page's HTML with the markup taken out: what an operator reads. */
export function textOf(html: string): string {
  return html.replace(/<[^>]+>/g, ' ').replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/\s+/g, ' ')
}
