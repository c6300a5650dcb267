// The operator console at /console (contract §11): pages rendered on the
// server with Preact (escaped by construction), plain HTML forms, no script,
// every asset embedded in the binary. Why server-rendered: nothing to build
// or ship beside the binary, it works offline and without JavaScript, and
// each action is one form posted to a route that runs the same service
// method, with the same role check and audit record, as the admin API.
//
// A request flows: the transform hook below resolves the session cookie
// (HttpOnly, SameSite=Strict, path /console) and, on a form, checks its CSRF
// token (an HMAC of the session token) and its Origin; the route's
// `consoleRoute(role)` refuses a lower role; the handler calls a service with
// the session's Actor and answers a page or a redirect. Errors become pages
// (renderConsoleError), a signed-out GET a redirect to the sign-in page.
import { Elysia, t } from 'elysia'
import { AppError } from '../shared/errors'
import type { ErrorEnvelope } from '../shared/errors'
import { requestState } from '../plugins/request-context'
import type { Services } from '../services'
import type { Clock } from '../shared/clock'
import { ASSETS } from './assets'
import { clearedPasswordStepCookie, clearedSessionCookie, CONSOLE_PREFIX, deviceCookie, deviceToken, overHttps, htmlPage, isConsolePath, passwordStepCookie, passwordStepTicket, pathOf, redirect, sessionCookie, sessionToken } from './http'
import { Layout } from './layout'
import { noticeText, type NoticeCode } from './notices'
import { consoleRoute, setConsoleSession } from './session'
import { ChoosePasswordPage, PASSWORD_RULE, SignInPage, type PasswordProblem } from './pages/sign-in'
import type { SignedIn } from '../modules/operators/sessions'
import { userPages } from './pages/users'
import { dashboardPage } from './pages/dashboard'
import { disputesPages } from './pages/disputes'
import { evidencePages } from './pages/evidence'
import { gamesPages } from './pages/games'
import { gameRatingPages } from './pages/game-ratings'
import { gameServerPages } from './pages/game-servers'
import { matchmakingPages } from './pages/matchmaking'
import { tournamentsPages } from './pages/tournaments'
import { withdrawalsPages } from './pages/withdrawals'
import { payoutsPages } from './pages/payouts'
import { webhookPages } from './pages/webhooks'
import { auditPages } from './pages/audit'
import { securityPages } from './pages/security'
import { operatorPages } from './pages/operators'
import { accountPages } from './pages/account'

export interface ConsoleDeps {
  services: Services
  /** Send the cookie with `Secure` always (ARENA_ENV=production: the console is served over HTTPS there); elsewhere only on a request that came over HTTPS. */
  secureCookie: boolean
  sessionTtlS: number
  /** The server's clock (whether a session listed on the account page is still live). */
  clock: Clock
  /** The client's address (the sign-in throttle counts per address). */
  addressOf: (request: Request, server: { requestIP(request: Request): { address: string } | null } | null) => string
  /** ARENA_TRUST_PROXY: the Origin check compares with X-Forwarded-Host. */
  trustProxy: boolean
}

/** Paths reachable without a session: the sign-in page, its choose-your-password step (which checks its own ticket and CSRF token) and the stylesheet. */
function isPublic(path: string): boolean {
  return path === `${CONSOLE_PREFIX}/login` || path === `${CONSOLE_PREFIX}/login/password` || path.startsWith(`${CONSOLE_PREFIX}/assets/`)
}

/**
 * A form from another site (a browser always sends Origin on a cross-site
 * POST): refused before anything reads it. Behind a proxy that rewrites Host
 * (ARENA_TRUST_PROXY), the host the browser asked for is the proxy's
 * X-Forwarded-Host (its right-most entry, the one our proxy wrote).
 */
export function crossSite(request: Request, trustProxy: boolean): boolean {
  const origin = request.headers.get('origin')
  if (origin === null || origin === 'null') return origin === 'null'
  const forwarded = trustProxy ? request.headers.get('x-forwarded-host')?.split(',').at(-1)?.trim() : undefined
  const host = forwarded || request.headers.get('host')
  try {
    return new URL(origin).host !== (host ?? new URL(request.url).host)
  } catch {
    return true
  }
}

export function consoleModule({ services, secureCookie, sessionTtlS, clock, addressOf, trustProxy }: ConsoleDeps) {
  const { operatorSessions, audit } = services
  /** Whether this request's cookie is sent `Secure`: in production, or whenever the browser came over HTTPS (said by X-Forwarded-Proto behind a trusted proxy). */
  const secureFor = (request: Request) => secureCookie || overHttps(request, trustProxy)
  type Server = Parameters<ConsoleDeps['addressOf']>[1]

  /** A sign-in done: the session cookie (the browser's previous session ended, not left live beside it) and the device cookie. */
  async function signedInAnswer(request: Request, signedIn: SignedIn, next: string, notice: NoticeCode): Promise<Response> {
    const previous = sessionToken(request)
    if (previous !== null) await operatorSessions.signOut(previous)
    const answer = redirect(next, notice, { 'set-cookie': sessionCookie(signedIn.token, { secure: secureFor(request), maxAgeS: sessionTtlS }) })
    // This browser is now a known place of the operator's: failures on the name elsewhere do not block its next sign-in.
    answer.headers.append('set-cookie', deviceCookie(signedIn.deviceToken, { secure: secureFor(request) }))
    return answer
  }

  /** The step's ticket is missing, forged, expired or spent: back to the sign-in form, saying so. */
  function stepEnded(request: Request): Response {
    return redirect(`${CONSOLE_PREFIX}/login`, 'password_step_ended', { 'set-cookie': clearedPasswordStepCookie(secureFor(request)) })
  }

  /**
   * Finishes the choose-your-password step: signed in (a redirect), or the
   * problem to show beside its field. Neither a mismatch nor a password
   * that breaks the rule counts towards the sign-in throttle: the one-time
   * password was proven when the ticket was made.
   */
  async function finishStep(request: Request, server: Server, ticket: string, next: string, newPassword: string, confirmPassword: string): Promise<Response | PasswordProblem> {
    if (newPassword !== confirmPassword) return { field: 'confirmPassword', message: 'The two passwords are not the same. Type the new password in both fields again.' }
    try {
      const signedIn = await operatorSessions.finishPasswordStep({ ticket, newPassword, kind: 'console', userAgent: request.headers.get('user-agent'), ip: addressOf(request, server), deviceToken: deviceToken(request) })
      const answer = await signedInAnswer(request, signedIn, next, 'password_chosen')
      answer.headers.append('set-cookie', clearedPasswordStepCookie(secureFor(request)))
      return answer
    } catch (error) {
      if (error instanceof AppError && error.code === 'validation_failed') {
        return { field: 'newPassword', message: `A password needs ${PASSWORD_RULE}; that one has ${[...newPassword].length}. Choose another and type it in both fields.` }
      }
      if (error instanceof AppError && error.code === 'invalid_credentials') return stepEnded(request)
      throw error
    }
  }

  return new Elysia({ name: 'arena/console', prefix: CONSOLE_PREFIX })
    .onTransform(async ({ request, body }) => {
      const path = pathOf(request.url)
      const writing = request.method !== 'GET' && request.method !== 'HEAD'
      if (writing && crossSite(request, trustProxy)) throw new AppError('forbidden', 'A console form must come from the console itself')
      if (isPublic(path)) return
      const token = sessionToken(request)
      const live = token === null ? null : await operatorSessions.session(token, 'console')
      if (token === null || live === null) throw new AppError('unauthorized', 'Sign in to the console')
      if (writing) {
        const given = (body as Record<string, unknown> | null | undefined)?._csrf
        if (typeof given !== 'string' || !operatorSessions.csrfMatches(token, given)) {
          throw new AppError('forbidden', 'This form has no valid CSRF token: reload the page and try again')
        }
      }
      setConsoleSession(request, { actor: audit.actor(live.operator, 'console', requestState(request)?.id ?? null), sessionId: live.sessionId, csrf: live.csrf })
    })
    .get('/assets/:file', ({ params }) => {
      // An own key only: `ASSETS[name]` of a name like `constructor` or `hasOwnProperty` is Object.prototype's, and answered 200 with no body and `content-type: undefined` (found by the every-route fuzz).
      const asset = Object.hasOwn(ASSETS, params.file) ? ASSETS[params.file] : undefined
      if (asset === undefined) throw new AppError('not_found', 'No such console asset')
      return new Response(asset.body, { headers: { 'content-type': asset.type, 'cache-control': 'public, max-age=3600', 'x-content-type-options': 'nosniff' } })
    }, { params: t.Object({ file: t.String({ maxLength: 64 }) }), detail: { hide: true } })
    .get('/login', ({ query }) => htmlPage(<SignInPage next={safeNext(query.next)} notice={noticeText(query.notice)} />), {
      query: t.Object({ next: t.Optional(t.String({ maxLength: 512 })), notice: t.Optional(t.String({ maxLength: 200 })) }),
      detail: { hide: true },
    })
    .post(
      '/login',
      async ({ body, request, server }) => {
        const next = safeNext(body.next)
        const place = { kind: 'console' as const, userAgent: request.headers.get('user-agent'), ip: addressOf(request, server), deviceToken: deviceToken(request) }
        try {
          const begun = await operatorSessions.beginSignIn({ name: body.name, password: body.password, totp: body.totp || undefined, ...place })
          if ('signedIn' in begun) return signedInAnswer(request, begun.signedIn, next, 'signed_in')
          const { ticket, operator, expiresAt } = begun.passwordStep
          const setTicket = { 'set-cookie': passwordStepCookie(ticket, { secure: secureFor(request), maxAgeS: Math.ceil((expiresAt.getTime() - clock.now().getTime()) / 1000) }) }
          const step = (problem: PasswordProblem | null, status: number) =>
            htmlPage(<ChoosePasswordPage name={operator.name} next={next} csrf={operatorSessions.csrfFor(ticket)} expiresAt={expiresAt} problem={problem} />, status, setTicket)
          // A script (or an older form) may send the new password with the one-time one: the step, finished at once.
          if (!body.newPassword) return step(null, 200)
          const finished = await finishStep(request, server, ticket, next, body.newPassword, body.newPassword)
          return finished instanceof Response ? finished : step(finished, 422)
        } catch (error) {
          if (!(error instanceof AppError)) throw error
          // The same page again, saying why (a wrong password, a missing or wrong code, a block).
          return htmlPage(<SignInPage next={next} error={error.message} name={body.name} askCode={error.code === 'totp_required' || error.code === 'invalid_totp'} />, error.status, error.headers ?? {})
        }
      },
      {
        body: t.Object({
          name: t.String({ maxLength: 64 }),
          password: t.String({ maxLength: 256 }),
          newPassword: t.Optional(t.String({ maxLength: 1024 })),
          totp: t.Optional(t.String({ maxLength: 16 })),
          next: t.Optional(t.String({ maxLength: 512 })),
        }),
        detail: { hide: true },
      },
    )
    // The choose-your-password step (pages/sign-in.tsx): shown again while its ticket lives, and its form.
    .get(
      '/login/password',
      async ({ query, request }) => {
        const ticket = passwordStepTicket(request)
        const step = ticket === null ? null : await operatorSessions.passwordStep(ticket)
        if (ticket === null || step === null) return stepEnded(request)
        return htmlPage(<ChoosePasswordPage name={step.operator.name} next={safeNext(query.next)} csrf={operatorSessions.csrfFor(ticket)} expiresAt={step.expiresAt} />)
      },
      { query: t.Object({ next: t.Optional(t.String({ maxLength: 512 })) }), detail: { hide: true } },
    )
    .post(
      '/login/password',
      async ({ body, request, server }) => {
        const ticket = passwordStepTicket(request)
        const step = ticket === null ? null : await operatorSessions.passwordStep(ticket)
        if (ticket === null || step === null) return stepEnded(request)
        if (typeof body._csrf !== 'string' || !operatorSessions.csrfMatches(ticket, body._csrf)) {
          throw new AppError('forbidden', 'This form has no valid CSRF token: reload the page and try again')
        }
        const next = safeNext(body.next)
        const finished = await finishStep(request, server, ticket, next, body.newPassword, body.confirmPassword)
        if (finished instanceof Response) return finished
        return htmlPage(<ChoosePasswordPage name={step.operator.name} next={next} csrf={operatorSessions.csrfFor(ticket)} expiresAt={step.expiresAt} problem={finished} />, 422)
      },
      {
        body: t.Object({
          _csrf: t.Optional(t.String({ maxLength: 128 })),
          newPassword: t.String({ maxLength: 1024 }),
          confirmPassword: t.String({ maxLength: 1024 }),
          next: t.Optional(t.String({ maxLength: 512 })),
        }),
        detail: { hide: true },
      },
    )
    .post(
      '/logout',
      async ({ request }) => {
        const token = sessionToken(request)
        if (token !== null) await operatorSessions.signOut(token)
        return redirect(`${CONSOLE_PREFIX}/login`, 'signed_out', { 'set-cookie': clearedSessionCookie(secureFor(request)) })
      },
      // Any signed-in operator may sign out: declared like every other console route, so the table-driven role test covers it.
      { body: t.Object({ _csrf: t.String({ maxLength: 128 }) }), ...consoleRoute('viewer') },
    )
    // The pages: function plugins adding their routes to this instance, so the transform above guards them.
    .use(userPages(services))
    .use(dashboardPage(services))
    .use(tournamentsPages(services))
    .use(disputesPages(services))
    .use(evidencePages(services))
    .use(withdrawalsPages(services))
    .use(payoutsPages(services))
    .use(gamesPages(services))
    .use(gameRatingPages(services))
    .use(gameServerPages(services))
    .use(matchmakingPages(services))
    .use(securityPages(services))
    .use(auditPages(services))
    .use(webhookPages(services))
    .use(operatorPages(services))
    .use(accountPages(services, { secureFor, clock }))
}

/** Where to go after signing in: a console path, never elsewhere. */
function safeNext(next: string | undefined): string {
  return next !== undefined && isConsolePath(next) && next !== `${CONSOLE_PREFIX}/login` ? next : CONSOLE_PREFIX
}

/** The console's error pages (the error plugin maps the error; this draws it). A signed-out GET goes to the sign-in page. */
export function renderConsoleError(status: number, body: ErrorEnvelope, request: Request, headers: Record<string, string>): Response {
  if (status === 401 && (request.method === 'GET' || request.method === 'HEAD')) {
    const url = request.url
    const path = url.slice(url.indexOf('/', url.indexOf('//') + 2))
    return new Response(null, { status: 303, headers: { ...headers, location: `${CONSOLE_PREFIX}/login?next=${encodeURIComponent(path)}`, 'cache-control': 'no-store' } })
  }
  const details = body.error.details?.map((d) => `${d.path}: ${d.message}`).join('; ')
  return htmlPage(
    <Layout title={status === 403 ? 'Not allowed' : status === 404 ? 'Not found' : 'Something went wrong'} operator={null}>
      <p class="error" role="alert">
        {body.error.message}
        {details ? ` (${details})` : ''}
      </p>
      <p>
        <a href={CONSOLE_PREFIX}>Back to the console</a>
      </p>
    </Layout>,
    status,
    headers,
  )
}
