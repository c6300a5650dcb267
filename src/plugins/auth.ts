// The bearer-token guard every module uses: `{ auth: true }` on a route puts
// `auth: { user, session }` in its context or answers 401 (contract §1).
// `{ authAllowExpired: true }` is for /auth/validate alone: a genuine token of
// a live session whose only fault is its age.
import { Elysia } from 'elysia'
import type { Authenticated, AuthService } from '../modules/auth/service'
import { settleRateLimit } from './rate-limit'

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null
  const match = /^Bearer[ ]+([A-Za-z0-9._~+/=-]+)\s*$/i.exec(header)
  return match ? match[1]! : null
}

// Authentication runs in `transform`, before body validation, so a caller
// without a valid token gets 401 whatever it sent, never a 422 that describes
// the route. `resolve` then hands the result to the handler.
//
// The header is read from `request`, not Elysia's parsed `headers`: Elysia
// decides which context fields to build by reading the hook's source, and in
// the minified binary that inference missed `headers` in a macro's hook.
const authenticated = new WeakMap<Request, Authenticated>()

export function authGuard(auth: AuthService) {
  const check = async (request: Request, allowExpired: boolean) => {
    const token = bearerToken(request.headers.get('authorization') ?? undefined)
    let found: Authenticated | undefined
    try {
      found = await auth.authenticate(token, { allowExpired })
    } finally {
      // The account's rate limit, once the bearer is known; a refused bearer
      // counts against the address alone (and a 429 wins over the 401).
      await settleRateLimit(request, found?.user.id ?? null)
    }
    authenticated.set(request, found)
  }
  const result = (request: Request) => {
    const found = authenticated.get(request)
    // transform always runs first; reaching here without it is a wiring bug.
    if (!found) throw new Error('auth guard: resolve ran without transform')
    return { auth: found }
  }
  return new Elysia({ name: 'arena/auth-guard' }).macro({
    auth: {
      transform: ({ request }) => check(request, false),
      resolve: ({ request }) => result(request),
    },
    authAllowExpired: {
      transform: ({ request }) => check(request, true),
      resolve: ({ request }) => result(request),
    },
  })
}
