// Accounts and auth sessions over HTTP (contract §1).
import { Elysia } from 'elysia'
import { authGuard } from '../../plugins/auth'
import { BEARER, BEARER_SECURITY, errors, INVALID, JSON_BODY, optionalBody, STORAGE } from '../../plugins/openapi'
import { EmptyBody } from '../../shared/models'
import { AppError } from '../../shared/errors'
import type { AccountDeletion } from './account-deletion'
import type { AccountExport as AccountExports } from './account-export'
import {
  AcceptedResponse,
  AccountExport,
  ChangePasswordBody,
  DeleteAccountBody,
  DeleteAccountResponse,
  ForgotPasswordBody,
  LoginBody,
  LogoutBody,
  LogoutResponse,
  RefreshBody,
  RegisterBody,
  ResetPasswordBody,
  SessionIdParams,
  SessionsEndedResponse,
  SessionsResponse,
  SignInResponse,
  SteamLoginBody,
  TokenResponse,
  UserResponse,
  VerifyEmailBody,
} from './model'
import type { EmailVerification } from './email-verification'
import type { PasswordChange } from './password-change'
import type { PasswordReset } from './password-reset'
import type { Registration } from './registration'
import type { AuthService } from './service'
import type { SignIn } from './sign-in'
import { DEVICE_HEADER } from './known-places'
import type { Identities } from './identities'
import type { SteamTickets } from './steam'

export interface ClientAddressOptions {
  /** Take the client address from the right-most X-Forwarded-For entry (behind one trusted proxy). */
  trustProxy: boolean
}

/** The services behind the routes of contract §1 that open an account or a session, and the account routes of contract §8 (verified email, password change and reset). */
export interface AccountServices {
  registration: Registration
  signIn: SignIn
  emailVerification: EmailVerification
  passwordChange: PasswordChange
  passwordReset: PasswordReset
}

/** The client's address, for the throttles: the socket's, or behind a trusted proxy the one it appended. */
export function clientAddress(request: Request, server: { requestIP(request: Request): { address: string } | null } | null, options: ClientAddressOptions): string {
  // The right-most entry is the one our proxy appended; anything left of it the client wrote.
  const forwarded = options.trustProxy ? request.headers.get('x-forwarded-for')?.split(',').at(-1)?.trim() : undefined
  return forwarded || server?.requestIP(request)?.address || 'unknown'
}

/** What every player sign-in route says of the device token (docs/api.md, "Device identity"). */
export const DEVICE_DESCRIPTION =
  'Send the device\'s own token as the `x-arena-device` request header (43 base64url characters: 32 random bytes); the answer\'s `x-arena-device` header is the token to keep: the one sent when well-formed, else a new one. It names the device to the login throttle and to the integrity signals: a signal, never proof.'

/** Where a player's sign-in comes from: the client address, its user agent, and the device token it sent (`x-arena-device`, known-places.ts). */
export function signInFrom(
  request: Request,
  server: { requestIP(request: Request): { address: string } | null } | null,
  options: ClientAddressOptions,
): { address: string; userAgent: string | null; deviceToken: string | null } {
  return { address: clientAddress(request, server, options), userAgent: request.headers.get('user-agent'), deviceToken: request.headers.get(DEVICE_HEADER) }
}

/**
 * A player's sign-in answered: the device token in the `x-arena-device`
 * header, beside the contract's body (every sign-in route answers it, so a
 * client that keeps it and sends it back is one device: known-places.ts).
 */
export function answerSignIn<T extends { deviceToken: string }>(set: { headers: Record<string, unknown> }, signedIn: T): Omit<T, 'deviceToken'> {
  const { deviceToken, ...answer } = signedIn
  set.headers[DEVICE_HEADER] = deviceToken
  return answer
}

export function authModule(auth: AuthService, options: ClientAddressOptions, account: AccountServices) {
  const { registration, signIn, emailVerification, passwordChange, passwordReset } = account
  return new Elysia({ name: 'arena/auth', prefix: '/api/v1' })
    .use(authGuard(auth))
    .post(
      '/user/register',
      async ({ body, set }) => {
        set.status = 201
        return { user: await registration.register(body) }
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
      async ({ body, request, server, set }) => answerSignIn(set, await signIn.login({ ...body, ...signInFrom(request, server, options) })),
      {
        body: LoginBody,
        // 403 account_banned (with `error.until`) only after the right password: a wrong one while banned is 401 as ever.
        response: { 200: TokenResponse, ...errors(JSON_BODY, { 401: ['invalid_credentials'], 403: ['account_banned'], 429: ['rate_limited'] }, STORAGE) },
        detail: {
          tags: ['auth'],
          summary: 'Exchange an email or username and a password for tokens',
          description:
            DEVICE_DESCRIPTION + ' A login from a device or address that signed in before counts on its own throttle, so failures elsewhere do not block it.',
        },
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
    .post(
      '/user/s/logout',
      async ({ body, auth: { session } }) => {
        // Each asks for something else; both at once is a contradiction, not a choice to guess at.
        if (body.all === true && body.others === true) {
          throw new AppError('validation_failed', 'Request failed validation', { details: [{ path: 'body/others', message: 'Not together with all' }] })
        }
        return { revoked: await auth.logout({ userId: session.userId, sessionId: session.id, all: body.all === true, others: body.others === true }) }
      },
      {
        auth: true,
        // No body at all means {}; anything else must be { all?: boolean, others?: boolean }.
        ...optionalBody(LogoutBody),
        response: { 200: LogoutResponse, ...errors(JSON_BODY, BEARER, STORAGE) },
        detail: {
          tags: ['auth'],
          summary: 'Revoke this session; with { all: true } every session of the user, with { others: true } every one but this',
          security: BEARER_SECURITY,
        },
      },
    )
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
    // ---- verified email and passwords (contract §8) ----
    .post('/user/email/verify', async ({ body, auth: { user } }) => ({ user: await emailVerification.verify(user.id, body.code) }), {
      auth: true,
      body: VerifyEmailBody,
      response: { 200: UserResponse, ...errors(JSON_BODY, BEARER, { 400: ['invalid_verification_code'] }, STORAGE) },
      detail: { tags: ['auth'], summary: 'Confirm the email address with the code mailed to it', security: BEARER_SECURITY },
    })
    .post(
      '/user/email/resend',
      async ({ auth: { user }, set }) => {
        await emailVerification.resend(user.id)
        set.status = 202
        return { accepted: true as const }
      },
      {
        auth: true,
        ...optionalBody(EmptyBody),
        response: {
          202: AcceptedResponse,
          ...errors(JSON_BODY, BEARER, { 409: ['conflict'], 429: ['rate_limited'], 503: ['mail_not_configured'] }, STORAGE),
        },
        detail: { tags: ['auth'], summary: 'Mail a new verification code (the old one stops working)', security: BEARER_SECURITY },
      },
    )
    .post(
      '/user/password/change',
      async ({ body, auth: { session } }) => ({
        revoked: await passwordChange.change({ userId: session.userId, sessionId: session.id, currentPassword: body.currentPassword, newPassword: body.newPassword }),
      }),
      {
        auth: true,
        body: ChangePasswordBody,
        // 503 also when the password-hash gate is full.
        response: {
          200: SessionsEndedResponse,
          ...errors(JSON_BODY, BEARER, { 403: ['invalid_credentials'], 409: ['conflict'], 429: ['rate_limited'] }, STORAGE),
        },
        detail: { tags: ['auth'], summary: 'Change the password; every other session ends', security: BEARER_SECURITY },
      },
    )
    .post(
      '/user/password/forgot',
      async ({ body, request, server, set }) => {
        await passwordReset.forgot({ email: body.email, address: clientAddress(request, server, options) })
        set.status = 202
        return { accepted: true as const }
      },
      {
        body: ForgotPasswordBody,
        response: { 202: AcceptedResponse, ...errors(JSON_BODY, { 429: ['rate_limited'], 503: ['mail_not_configured'] }, STORAGE) },
        detail: { tags: ['auth'], summary: 'Mail a password reset code to the address if it has an account (the answer is the same either way)' },
      },
    )
    .post(
      '/user/password/reset',
      async ({ body, request, server }) => ({ revoked: await passwordReset.reset({ ...body, address: clientAddress(request, server, options) }) }),
      {
        body: ResetPasswordBody,
        // 503 also when the password-hash gate is full.
        response: { 200: SessionsEndedResponse, ...errors(JSON_BODY, { 400: ['invalid_reset_code'], 429: ['rate_limited'] }, STORAGE) },
        detail: { tags: ['auth'], summary: 'Set a new password with the mailed reset code; every session ends' },
      },
    )
    .delete('/me/sessions/:id', async ({ params, auth: { user } }) => ({ revoked: await auth.revokeSession(user.id, params.id) }), {
      auth: true,
      params: SessionIdParams,
      response: { 200: LogoutResponse, ...errors(BEARER, INVALID, { 404: ['not_found'] }, STORAGE) },
      detail: {
        tags: ['auth'],
        summary: 'End one of the user\'s live sessions (this one included); 404 for an unknown, ended or foreign id',
        security: BEARER_SECURITY,
      },
    })
}

/** The account itself (contract §8): deleting it, exporting what arena keeps about it. */
export function accountModule(auth: AuthService, deletion: AccountDeletion, exports: AccountExports) {
  return new Elysia({ name: 'arena/account', prefix: '/api/v1' })
    .use(authGuard(auth))
    .post('/me/delete', async ({ body, auth: { user } }) => ({ deleted: true as const, ...(await deletion.deleteOwn(user.id, body.password)) }), {
      auth: true,
      body: DeleteAccountBody,
      // 403 invalid_credentials, not 401: a 401 would read as an expired bearer, which a client refreshes and replays.
      response: {
        200: DeleteAccountResponse,
        ...errors(JSON_BODY, BEARER, { 403: ['invalid_credentials'], 409: ['balance_not_empty'], 429: ['rate_limited'] }, STORAGE),
      },
      detail: { tags: ['auth'], summary: 'Delete the account: personal data erased, the ledger kept (needs an empty wallet)', security: BEARER_SECURITY },
    })
    .get(
      '/me/export',
      async ({ set, auth: { user } }) => {
        const document = await exports.exportOf(user.id)
        // A download, named for what it is; the body is the JSON document all the same.
        set.headers['content-disposition'] = `attachment; filename="arena-export-${user.id}.json"`
        return document
      },
      {
        auth: true,
        response: { 200: AccountExport, ...errors(BEARER, STORAGE) },
        detail: { tags: ['auth'], summary: 'Everything arena keeps about the user, as one JSON document', security: BEARER_SECURITY },
      },
    )
}

/**
 * Steam sign-in (contract §13): the ticket is checked with the Steam Web API
 * first (./steam.ts), outside any unit of work; only a proven, unbanned Steam
 * player reaches the identities core.
 */
export function steamModule(steam: SteamTickets, identities: Pick<Identities, 'signIn'>, options: ClientAddressOptions) {
  return new Elysia({ name: 'arena/steam', prefix: '/api/v1' }).post(
    '/user/login/steam',
    async ({ body, request, server, set }) => {
      const proven = await steam.prove({ ticket: body.ticket })
      return answerSignIn(set, await identities.signIn(proven, { create: body.create === true, ...signInFrom(request, server, options) }))
    },
    {
      body: SteamLoginBody,
      response: {
        200: SignInResponse,
        ...errors(
          JSON_BODY,
          { 401: ['invalid_credentials'], 403: ['platform_banned', 'account_banned'], 404: ['not_found'], 429: ['rate_limited'], 503: ['service_unavailable'] },
          STORAGE,
        ),
      },
      detail: {
        tags: ['auth'],
        summary: 'Sign in with a Steam session ticket (GetAuthTicketForWebApi), checked with the Steam Web API; with { create: true } a new Steam player gets an account',
        description:
          'No bearer: the ticket is the credential. 404 not_found when the server has no Steam app configured (ARENA_STEAM_APP_ID, ARENA_STEAM_WEB_API_KEY). A ticket Steam refuses is 401 invalid_credentials, a VAC- or publisher-banned Steam account 403 platform_banned, Steam not answering in time or failing 503 service_unavailable; none of these writes anything. ' +
          DEVICE_DESCRIPTION,
      },
    },
  )
}
