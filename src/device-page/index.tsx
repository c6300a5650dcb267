// The device-code verification page at /device (contract §13, RFC 8628): a
// player whose TV, console or handheld shows a code opens this page in any
// browser, signs in (a password, or a configured OpenID Connect provider),
// sees the code and approves or denies it; the device's next poll of
// POST /api/v1/auth/device-code/token then gets its tokens, once
// (src/modules/auth/device-codes.ts). Served by the binary like the console,
// rendered on the server, working without script.
//
// What must stay true: the page never opens an account session of its own
// (its sign-in is a signed cookie of 15 minutes, ./session.ts); a password
// sign-in here is the login's (SignIn.check: the same throttle and hash
// gate); every POST comes from this site (Origin) and every POST of a
// signed-in player carries the page session's CSRF token (403 otherwise);
// nothing secret is ever in a URL (the user code is not a secret: it only
// names a request that a signed-in player must still approve).
import { Elysia, t } from 'elysia'
import { AppError, type ErrorEnvelope } from '../shared/errors'
import type { Clock } from '../shared/clock'
import type { Storage } from '../db/storage'
import { crossSite } from '../console'
import { htmlPage, overHttps } from '../console/http'
import type { SignIn } from '../modules/auth/sign-in'
import { normalizeUserCode, displayUserCode, type DeviceCodes } from '../modules/auth/device-codes'
import { ConfirmView, DoneView, EnterCodeView, ErrorView, SignInView, type ProviderLink } from './pages'
import { DEVICE_PAGE_PREFIX, pageCookie, PageSessions, pageTicket } from './session'

/**
 * The sign-in providers the page offers beside the password (OpenID Connect,
 * configured by ARENA_OIDC_PROVIDERS). A flow started here comes back to
 * `returnTo` with `?signin=<one-time code>`, which the page redeems on the
 * server for the account the provider proved.
 */
export interface DeviceSignInProviders {
  list(): ProviderLink[]
  /** The provider's authorization URL for a sign-in that returns to `returnTo` (a /device path); 404 not_found for an unknown provider. */
  start(name: string, returnTo: string, request: Request): Promise<string>
  /** The account a one-time `signin` code names (once); null when it is unknown, used or expired. */
  redeem(code: string): Promise<string | null>
}

/** No provider configured: the password alone. */
export const NO_PROVIDERS: DeviceSignInProviders = {
  list: () => [],
  start: async () => {
    throw new AppError('not_found', 'No such sign-in provider')
  },
  redeem: async () => null,
}

export interface DevicePageDeps {
  storage: Storage
  clock: Clock
  signIn: SignIn
  deviceCodes: DeviceCodes
  /** A server secret the page session and CSRF tokens are signed with. */
  key: string
  /** ARENA_ENV=production: cookies are always Secure; elsewhere when the request came over HTTPS. */
  secureCookie: boolean
  trustProxy: boolean
  addressOf: (request: Request, server: { requestIP(request: Request): { address: string } | null } | null) => string
  providers?: DeviceSignInProviders
}

/** 303 to a /device path this module built (never one taken from a request as it is). */
function seeOther(location: string, headers: Record<string, string> = {}): Response {
  return new Response(null, { status: 303, headers: { location, 'cache-control': 'no-store', ...headers } })
}

/** The page for a code, as a path: `/device?code=ABCD-1234`, or `/device`. */
function pagePath(code: string | null): string {
  return code === null ? DEVICE_PAGE_PREFIX : `${DEVICE_PAGE_PREFIX}?code=${code}`
}

/** A code as typed, shown back in its display form when it has the shape of one; null otherwise. */
function shownCode(typed: string | undefined): string | null {
  const stored = typed === undefined ? null : normalizeUserCode(typed)
  return stored === null ? null : displayUserCode(stored)
}

const CODE_FIELD = t.String({ maxLength: 64 })

/**
 * What a provider's sign-in that came back with `signin_error=<code>` says: a
 * fixed text per code, never words from the URL (anyone can make a link).
 */
function providerProblem(code: string): string {
  switch (code) {
    case 'access_denied':
      return 'The sign-in was cancelled at the provider. Try again, or sign in with your password.'
    case 'account_exists':
      return "An account already uses the email address that provider gave. Sign in with that account's password here; you can link the provider to it in the game afterwards."
    case 'account_banned':
      return 'This account is banned.'
    default:
      return 'The sign-in with that provider did not finish. Try again, or sign in with your password.'
  }
}

export function devicePageModule(deps: DevicePageDeps) {
  const { deviceCodes, signIn } = deps
  const providers = deps.providers ?? NO_PROVIDERS
  const sessions = new PageSessions({ storage: deps.storage, clock: deps.clock, key: deps.key })
  const secureFor = (request: Request) => deps.secureCookie || overHttps(request, deps.trustProxy)
  const signedIn = (request: Request) => sessions.open(pageTicket(request))

  /** The signed-in player's page for a code: approve or deny it when it waits, else type one. */
  async function codePage(user: { username: string }, csrf: string, typed: string | undefined): Promise<Response> {
    if (typed === undefined) return htmlPage(<EnterCodeView username={user.username} csrf={csrf} />)
    const pending = await deviceCodes.pending(typed)
    if (pending !== null) return htmlPage(<ConfirmView username={user.username} csrf={csrf} code={pending.userCode} />)
    const error = normalizeUserCode(typed) === null ? 'A code is 8 letters and digits, like ABCD-1234: check it on your device and type it again.' : 'No device is waiting for that code: it may have expired or been answered already. Check the code on your device, or start again there.'
    return htmlPage(<EnterCodeView username={user.username} csrf={csrf} typed={typed.slice(0, 16)} error={error} />, 404)
  }

  const page = new Elysia({ name: 'arena/device-page', prefix: DEVICE_PAGE_PREFIX })
    .onTransform(({ request }) => {
      // A form from another site (a browser always sends Origin on a cross-site POST) is refused before anything reads it.
      if (request.method !== 'GET' && request.method !== 'HEAD' && crossSite(request, deps.trustProxy)) throw new AppError('forbidden', 'A form of this page must come from the page itself')
    })
    .get(
      '',
      async ({ query, request }) => {
        if (query.signin_error !== undefined) return htmlPage(<SignInView code={shownCode(query.code)} providers={providers.list()} error={providerProblem(query.signin_error)} />, 401)
        if (query.signin !== undefined) {
          // Back from a provider: the account it proved signs in to this page, then the page for the code.
          const userId = await providers.redeem(query.signin)
          const user = userId === null ? null : await deps.storage.read.auth.userById(userId)
          if (user === null) return htmlPage(<SignInView code={shownCode(query.code)} providers={providers.list()} error="That sign-in did not finish or has expired: try again." />, 401)
          return seeOther(pagePath(shownCode(query.code)), { 'set-cookie': pageCookie(sessions.ticketFor(user), { secure: secureFor(request) }) })
        }
        const session = await signedIn(request)
        if (session === null) return htmlPage(<SignInView code={shownCode(query.code)} providers={providers.list()} />)
        return codePage(session.user, session.csrf, query.code)
      },
      { query: t.Object({ code: t.Optional(CODE_FIELD), signin: t.Optional(t.String({ maxLength: 512 })), signin_error: t.Optional(t.String({ maxLength: 64 })) }), detail: { hide: true } },
    )
    .post(
      '/login',
      async ({ body, request, server }) => {
        const code = shownCode(body.code)
        try {
          const user = await signIn.check({ identifier: body.identifier, password: body.password, address: deps.addressOf(request, server), userAgent: request.headers.get('user-agent'), deviceToken: null })
          return seeOther(pagePath(code), { 'set-cookie': pageCookie(sessions.ticketFor(user), { secure: secureFor(request) }) })
        } catch (error) {
          if (!(error instanceof AppError) || error.status >= 500) throw error
          // The same form again, saying why (a wrong password, a block, a ban).
          return htmlPage(<SignInView code={code} identifier={body.identifier} providers={providers.list()} error={error.message} />, error.status, error.headers ?? {})
        }
      },
      {
        body: t.Object({ identifier: t.String({ maxLength: 320 }), password: t.String({ maxLength: 1024 }), code: t.Optional(CODE_FIELD) }),
        detail: { hide: true },
      },
    )
    .post(
      '/approve',
      async ({ body, request, server }) => {
        const ticket = pageTicket(request)
        const session = await sessions.open(ticket)
        if (ticket === null || session === null) throw new AppError('unauthorized', 'Your sign-in on this page has ended: sign in again, then approve the code.')
        if (!sessions.csrfMatches(ticket, body._csrf)) throw new AppError('forbidden', 'This form has no valid CSRF token: reload the page and try again')
        try {
          await deviceCodes.decide(body.code, body.decision === 'approve' ? 'approved' : 'denied', session.user.id, { address: deps.addressOf(request, server), userAgent: request.headers.get('user-agent') })
        } catch (error) {
          // Unknown, expired or answered already: the code page again, saying so.
          if (error instanceof AppError && error.code === 'not_found') return codePage(session.user, session.csrf, body.code)
          throw error
        }
        return htmlPage(<DoneView decision={body.decision} />)
      },
      {
        body: t.Object({ _csrf: t.Optional(t.String({ maxLength: 128 })), code: CODE_FIELD, decision: t.Union([t.Literal('approve'), t.Literal('deny')]) }),
        detail: { hide: true },
      },
    )
    .post(
      '/logout',
      async ({ body, request }) => {
        const ticket = pageTicket(request)
        if (ticket !== null && !sessions.csrfMatches(ticket, body._csrf)) throw new AppError('forbidden', 'This form has no valid CSRF token: reload the page and try again')
        return seeOther(DEVICE_PAGE_PREFIX, { 'set-cookie': pageCookie('', { secure: secureFor(request) }) })
      },
      { body: t.Object({ _csrf: t.Optional(t.String({ maxLength: 128 })) }), detail: { hide: true } },
    )
  // "Sign in with <provider>": served only when a provider is configured.
  if (providers.list().length === 0) return page
  return page.get(
    '/signin/:provider',
    async ({ params, query, request }) => seeOther(await providers.start(params.provider, pagePath(shownCode(query.code)), request)),
    { params: t.Object({ provider: t.String({ maxLength: 64 }) }), query: t.Object({ code: t.Optional(CODE_FIELD) }), detail: { hide: true } },
  )
}

/** The page's errors (the error plugin maps the error; this draws it). */
export function renderDevicePageError(status: number, body: ErrorEnvelope, _request: Request, headers: Record<string, string>): Response {
  const details = body.error.details?.map((d) => `${d.path}: ${d.message}`).join('; ')
  return htmlPage(<ErrorView status={status} message={`${body.error.message}${details ? ` (${details})` : ''}`} />, status, headers)
}
