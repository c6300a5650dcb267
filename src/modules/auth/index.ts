// Accounts and auth sessions over HTTP (contract §1).
import { Elysia } from 'elysia'
import { authGuard } from '../../plugins/auth'
import { BEARER, BEARER_SECURITY, errors, JSON_BODY, STORAGE } from '../../plugins/openapi'
import {
  LoginBody,
  LogoutBody,
  LogoutResponse,
  RefreshBody,
  RegisterBody,
  SessionsResponse,
  TokenResponse,
  UserResponse,
} from './model'
import type { AuthService } from './service'

export interface ClientAddressOptions {
  /** Take the client address from the right-most X-Forwarded-For entry (behind one trusted proxy). */
  trustProxy: boolean
}

export function authModule(auth: AuthService, options: ClientAddressOptions) {
  return new Elysia({ name: 'arena/auth', prefix: '/api/v1' })
    .use(authGuard(auth))
    .post(
      '/user/register',
      async ({ body, set }) => {
        set.status = 201
        return { user: await auth.register(body) }
      },
      {
        body: RegisterBody,
        // 503 also when the password-hash gate is full.
        response: { 201: UserResponse, ...errors(JSON_BODY, { 409: ['username_taken', 'email_taken'] }, STORAGE) },
        detail: { tags: ['auth'], summary: 'Create an account (any Authorization header is ignored)' },
      },
    )
    .post(
      '/user/login',
      ({ body, request, server }) => {
        // The right-most entry is the one our proxy appended; anything left of it the client wrote.
        const forwarded = options.trustProxy ? request.headers.get('x-forwarded-for')?.split(',').at(-1)?.trim() : undefined
        const address = forwarded || server?.requestIP(request)?.address || 'unknown'
        return auth.login({ ...body, address, userAgent: request.headers.get('user-agent') })
      },
      {
        body: LoginBody,
        response: { 200: TokenResponse, ...errors(JSON_BODY, { 401: ['invalid_credentials'], 429: ['rate_limited'] }, STORAGE) },
        detail: { tags: ['auth'], summary: 'Exchange an email or username and a password for tokens' },
      },
    )
    .post(
      '/auth/validate',
      ({ body, auth: { session } }) => auth.rotate({ refreshToken: body.refreshToken, sessionId: session.id, userId: session.userId }),
      {
        authAllowExpired: true,
        body: RefreshBody,
        response: { 200: TokenResponse, ...errors(JSON_BODY, BEARER, { 401: ['refresh_token_reused'] }, STORAGE) },
        detail: {
          tags: ['auth'],
          summary: 'Rotate a refresh token; the bearer may be expired but must be of the same session',
          security: BEARER_SECURITY,
        },
      },
    )
    .post('/user/s/logout', async ({ body, auth: { session } }) => ({ revoked: await auth.logout({ userId: session.userId, sessionId: session.id, all: body.all === true }) }), {
      auth: true,
      // No body at all means {}; anything else must be { all?: boolean }.
      transform(context) {
        if (context.body === null || context.body === undefined) context.body = {}
      },
      body: LogoutBody,
      response: { 200: LogoutResponse, ...errors(JSON_BODY, BEARER, STORAGE) },
      detail: { tags: ['auth'], summary: 'Revoke this session, or with { all: true } every session of the user', security: BEARER_SECURITY },
    })
    .get('/me', ({ auth: { user } }) => ({ user }), {
      auth: true,
      response: { 200: UserResponse, ...errors(BEARER, STORAGE) },
      detail: { tags: ['auth'], summary: 'The authenticated user', security: BEARER_SECURITY },
    })
    .get('/me/sessions', async ({ auth: { user, session } }) => ({ sessions: await auth.listSessions(user.id, session.id) }), {
      auth: true,
      response: { 200: SessionsResponse, ...errors(BEARER, STORAGE) },
      detail: { tags: ['auth'], summary: 'Where the user is logged in: the live sessions', security: BEARER_SECURITY },
    })
}
