// The bearer-token guard every module uses: `{ auth: true }` on a route puts
// `auth: { user, session }` in its context or answers 401 (contract §1).
// `{ authAllowExpired: true }` is for /auth/validate alone: a genuine token of
// a live session whose only fault is its age.
import { Elysia } from 'elysia'
import type { AuthService } from '../modules/auth/service'

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null
  const match = /^Bearer[ ]+([A-Za-z0-9._~+/=-]+)\s*$/i.exec(header)
  return match ? match[1]! : null
}

// The header is read from `request`, not Elysia's parsed `headers`: Elysia
// decides which context fields to build by reading the hook's source, and in
// the minified binary that inference missed `headers` in a macro's resolve.
export function authGuard(auth: AuthService) {
  return new Elysia({ name: 'arena/auth-guard' }).macro({
    auth: {
      async resolve({ request }) {
        return { auth: await auth.authenticate(bearerToken(request.headers.get('authorization') ?? undefined)) }
      },
    },
    authAllowExpired: {
      async resolve({ request }) {
        return {
          auth: await auth.authenticate(bearerToken(request.headers.get('authorization') ?? undefined), { allowExpired: true }),
        }
      },
    },
  })
}
