// The signed-in operator's own account (any role): its sessions (ending any
// of them), and an authenticator (TOTP): setting one up shows the secret once,
// as text and as an otpauth:// URI to paste or type into the app, then asks
// for a code to confirm it; from then on sign-in asks for a code too. Setting
// one up asks for the password, turning it off for the password and a
// current code: a stolen cookie alone can do neither.
import { Elysia, t } from 'elysia'
import type { Services } from '../../services'
import type { Clock } from '../../shared/clock'
import type { Operator } from '../../modules/operators/model'
import { clearedSessionCookie, CONSOLE_PREFIX, redirect } from '../http'
import { Csrf } from '../layout'
import { attempt, consolePage, NOTICE_FIELDS, Time } from '../page'
import { consoleRoute, consoleSession } from '../session'

const SECTION = '/console/account'
const CsrfBody = t.Object({ _csrf: t.String({ maxLength: 128 }) })
const PASSWORD_FIELD = t.String({ maxLength: 1024 })

/** The operator acting: a console session always belongs to a named operator (only the admin token has no id, and it has no console session). */
function selfOf(request: Request): string {
  const id = consoleSession(request).actor.operator.id
  if (id === null) throw new Error('a console session without an operator id')
  return id
}

export function accountPages(services: Services, options: { secureFor: (request: Request) => boolean; clock: Clock }) {
  const { operators, operatorSessions, operatorTotp } = services
  const { clock } = options
  return (app: Elysia<'/console'>) =>
    app
      .get(
        '/account',
        async ({ request, query }) => {
          const { csrf, sessionId } = consoleSession(request)
          const id = selfOf(request)
          const [me, sessions] = await Promise.all([operators.byId(id), operatorSessions.sessions(id, sessionId)])
          return consolePage(request, { title: 'Your account', section: SECTION, query }, (
            <>
              <dl class="facts">
                <dt>Name</dt>
                <dd>{me.name}</dd>
                <dt>Role</dt>
                <dd>{me.role}</dd>
                <dt>Operator since</dt>
                <dd>
                  <Time iso={me.createdAt} />
                </dd>
              </dl>
              <h2 id="totp">Authenticator</h2>
              <Authenticator me={me} csrf={csrf} />
              <h2 id="sessions">Sessions</h2>
              <table aria-labelledby="sessions">
                <thead>
                  <tr>
                    <th scope="col">Kind</th>
                    <th scope="col">Started</th>
                    <th scope="col">Last seen</th>
                    <th scope="col">Expires</th>
                    <th scope="col">Device</th>
                    <th scope="col">State</th>
                    <th scope="col">Action</th>
                  </tr>
                </thead>
                <tbody>
                  {sessions.map((s) => {
                    const live = s.revokedAt === null && Date.parse(s.expiresAt) > clock.now().getTime()
                    return (
                      <tr aria-current={s.current ? 'true' : undefined}>
                        <td>{s.kind === 'api' ? 'admin API' : 'console'}</td>
                        <td>
                          <Time iso={s.createdAt} />
                        </td>
                        <td>
                          <Time iso={s.lastSeenAt} />
                        </td>
                        <td>
                          <Time iso={s.expiresAt} />
                        </td>
                        <td>{s.userAgent ?? <span class="muted">unknown</span>}</td>
                        <td>{s.current ? <strong>this session</strong> : live ? <span class="ok">live</span> : <span class="muted">{s.revokedAt ? 'ended' : 'expired'}</span>}</td>
                        <td>
                          {live && (
                            <form method="post" action={`${SECTION}/sessions/${s.id}/revoke`} class="inline">
                              <Csrf token={csrf} />
                              <button type="submit" class="secondary">
                                {s.current ? 'End (signs you out)' : 'End'}
                              </button>
                            </form>
                          )}
                        </td>
                      </tr>
                    )
                  })}
                </tbody>
              </table>
            </>
          ))
        },
        { query: t.Object(NOTICE_FIELDS), ...consoleRoute('viewer') },
      )
      .post(
        '/account/sessions/:id/revoke',
        ({ request, params }) =>
          attempt(request, SECTION, async () => {
            const { actor, sessionId } = consoleSession(request)
            await operatorSessions.revokeSession(selfOf(request), params.id, actor)
            // Ending the session in use is signing out: the cookie goes with it.
            if (params.id === sessionId) return redirect(`${CONSOLE_PREFIX}/login`, 'own_session_ended', { 'set-cookie': clearedSessionCookie(options.secureFor(request)) })
            return redirect(`${SECTION}#sessions`, 'session_ended')
          }),
        { params: t.Object({ id: t.String({ maxLength: 64 }) }), body: CsrfBody, ...consoleRoute('viewer') },
      )
      .post(
        '/account/totp',
        ({ request, body }) =>
          attempt(request, `${SECTION}#totp`, async () => {
            const { csrf } = consoleSession(request)
            const { secret, uri } = await operatorTotp.beginTotp(selfOf(request), body.password)
            return consolePage(request, { title: 'Set up an authenticator', section: SECTION }, (
              <>
                <p>
                  Add this account to your authenticator app (any TOTP app: 6 digits every 30 seconds) by typing the secret or pasting the URI. It is shown
                  this once.
                </p>
                <dl class="facts secret">
                  <dt>Secret</dt>
                  <dd>
                    <code>{secret}</code>
                  </dd>
                  <dt>URI</dt>
                  <dd>
                    <code>{uri}</code>
                  </dd>
                </dl>
                <ConfirmForm csrf={csrf} />
              </>
            ))
          }),
        { body: t.Object({ _csrf: t.String({ maxLength: 128 }), password: PASSWORD_FIELD }), ...consoleRoute('viewer') },
      )
      .post(
        '/account/totp/confirm',
        ({ request, body }) =>
          attempt(request, SECTION, async () => {
            await operatorTotp.confirmTotp(selfOf(request), body.code.trim(), consoleSession(request).actor)
            return redirect(SECTION, 'totp_enabled')
          }),
        { body: t.Object({ _csrf: t.String({ maxLength: 128 }), code: t.String({ maxLength: 16 }) }), ...consoleRoute('viewer') },
      )
      .post(
        '/account/totp/disable',
        ({ request, body }) =>
          attempt(request, `${SECTION}#totp`, async () => {
            await operatorTotp.removeOwnTotp(selfOf(request), { password: body.password, code: body.code?.trim() }, consoleSession(request).actor)
            return redirect(SECTION, 'totp_disabled')
          }),
        { body: t.Object({ _csrf: t.String({ maxLength: 128 }), password: PASSWORD_FIELD, code: t.Optional(t.String({ maxLength: 16 })) }), ...consoleRoute('viewer') },
      )
}

function ConfirmForm({ csrf }: { csrf: string }) {
  return (
    <form method="post" action={`${SECTION}/totp/confirm`} class="stack">
      <Csrf token={csrf} />
      <label>
        The code your authenticator shows now
        <input name="code" inputMode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" required maxLength={6} />
      </label>
      <button type="submit">Confirm</button>
    </form>
  )
}

/** The operator's password, asked again before its second factor changes. */
function PasswordField() {
  return (
    <label>
      Your password
      <input name="password" type="password" autocomplete="current-password" required maxLength={1024} />
    </label>
  )
}

function Authenticator({ me, csrf }: { me: Operator; csrf: string }) {
  if (me.totpEnabled) {
    return (
      <>
        <p class="ok">Enabled: signing in asks for a code from your authenticator.</p>
        <form method="post" action={`${SECTION}/totp/disable`} class="stack" aria-label="Turn off the authenticator">
          <Csrf token={csrf} />
          <PasswordField />
          <label>
            A code your authenticator shows now
            <input name="code" inputMode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" required maxLength={6} />
          </label>
          <button type="submit" class="danger">
            Turn off the authenticator
          </button>
        </form>
      </>
    )
  }
  return (
    <>
      <p>Not set up: signing in asks for your password only.</p>
      <form method="post" action={`${SECTION}/totp`} class="stack" aria-label="Set up an authenticator">
        <Csrf token={csrf} />
        <PasswordField />
        <button type="submit">Set up an authenticator</button>
      </form>
      <details>
        <summary>Finish a setup you began (the secret is on your authenticator already)</summary>
        <ConfirmForm csrf={csrf} />
      </details>
    </>
  )
}
