// Operators (admin): every named operator, creating one, changing its role,
// disabling and enabling one, giving one a new password, turning off the
// TOTP of one who lost the authenticator. A password arena makes (create, reset) is one-time and is
// shown once, on the page answering the form: never put in a redirect, where
// it would sit in the history and the logs.
import { Elysia, t } from 'elysia'
import type { Services } from '../../services'
import { OPERATOR_ROLES } from '../../modules/operators/roles'
import { redirect } from '../http'
import { Csrf } from '../layout'
import { attempt, consolePage, NOTICE_FIELDS, Time } from '../page'
import { consoleRoute, consoleSession } from '../session'
import { ConfirmButton, confirmPage } from '../confirm'

const SECTION = '/console/operators'
const IdParams = t.Object({ id: t.String({ maxLength: 64 }) })
const CsrfBody = t.Object({ _csrf: t.String({ maxLength: 128 }) })
/** A confirmation page's route: an operator's id, the query a refused form leaves, the admin role. */
const ConfirmRoute = { params: IdParams, query: t.Object(NOTICE_FIELDS), ...consoleRoute('admin') }

export function operatorPages(services: Services) {
  const { operators, operatorTotp } = services

  /** The confirmation page of an action on another operator (../confirm.tsx): what it does to them; its form posts to the same path. */
  async function confirmOperatorAction(request: Request, id: string, action: 'reset-password' | 'disable' | 'disable-totp', query: Record<string, string | undefined>): Promise<Response> {
    const op = await operators.byId(id)
    const self = op.id === consoleSession(request).actor.operator.id
    const you = self ? ' (you)' : ''
    const pages = {
      'reset-password': {
        title: `Reset the password of ${op.name}${you}?`,
        consequences: [
          `${op.name}'s password stops working now, and every session of theirs (console and admin API) ends${self ? ': this one too, so you are signed out' : ''}.`,
          'A new one-time password is shown to you once, on the next page: give it to them over a channel you trust. Their first sign-in with it chooses a new password.',
        ],
        submit: `Reset the password of ${op.name}`,
      },
      disable: {
        title: `Disable ${op.name}${you}?`,
        consequences: [
          `Every session of ${op.name} (console and admin API) ends now, on every instance, and signing in is refused until an admin enables them again.`,
          'Their past actions stay in the audit log under their name. The last enabled admin cannot be disabled.',
        ],
        submit: `Disable ${op.name}`,
      },
      'disable-totp': {
        title: `Turn off the authenticator of ${op.name}?`,
        consequences: [
          `${op.name} signs in with their password alone from now on, until they set up an authenticator again on their account page.`,
          'Do this only for an operator who lost their authenticator, once you know it is really them asking.',
        ],
        submit: `Turn off the authenticator of ${op.name}`,
      },
    }[action]
    return confirmPage(request, { ...pages, section: SECTION, query, action: `${SECTION}/${op.id}/${action}`, back: SECTION })
  }

  return (app: Elysia<'/console'>) =>
    app
      .get(
        '/operators',
        async ({ request, query }) => {
          const { actor, csrf } = consoleSession(request)
          const all = await operators.list()
          return consolePage(request, { title: 'Operators', section: SECTION, query }, (
            <>
              <table>
                <caption class="muted">Everyone who can sign in to the console or the admin API by name</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Role</th>
                    <th scope="col">Authenticator</th>
                    <th scope="col">State</th>
                    <th scope="col">Created</th>
                    <th scope="col">Actions</th>
                  </tr>
                </thead>
                <tbody>
                  {all.map((op) => (
                    <tr>
                      <td>
                        {op.name}
                        {op.id === actor.operator.id && <span class="muted"> (you)</span>}
                      </td>
                      <td>{op.role}</td>
                      <td>{op.totpEnabled ? 'enabled' : <span class="muted">none</span>}</td>
                      <td>{op.disabled ? <span class="bad">disabled</span> : <span class="ok">active</span>}</td>
                      <td>
                        <Time iso={op.createdAt} />
                      </td>
                      <td>
                        <div class="actions tight">
                          <ConfirmButton href={`${SECTION}/${op.id}/reset-password`} label="Reset password" ariaLabel={`Reset the password of ${op.name}`} kind="secondary" />
                          {/* Your own: on your account page, with your password and a code. */}
                          {op.totpEnabled && op.id !== actor.operator.id && (
                            <ConfirmButton href={`${SECTION}/${op.id}/disable-totp`} label="Turn off authenticator" ariaLabel={`Turn off the authenticator of ${op.name}`} kind="secondary" />
                          )}
                          <form method="post" action={`${SECTION}/${op.id}/role`} class="inline">
                            <Csrf token={csrf} />
                            <select name="role" aria-label={`New role for ${op.name}`}>
                              {OPERATOR_ROLES.map((role) => (
                                <option value={role} selected={role === op.role}>
                                  {role}
                                </option>
                              ))}
                            </select>{' '}
                            <button type="submit" class="secondary" aria-label={`Set the role of ${op.name}`}>
                              Set role
                            </button>
                          </form>
                          {op.disabled ? (
                            <form method="post" action={`${SECTION}/${op.id}/enable`} class="inline">
                              <Csrf token={csrf} />
                              <button type="submit" class="secondary" aria-label={`Enable ${op.name}`}>
                                Enable
                              </button>
                            </form>
                          ) : (
                            <ConfirmButton href={`${SECTION}/${op.id}/disable`} label="Disable" ariaLabel={`Disable ${op.name}`} />
                          )}
                        </div>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <h2 id="create">Create an operator</h2>
              <form method="post" action={SECTION} class="stack" aria-labelledby="create">
                <Csrf token={csrf} />
                <label>
                  Name (2 to 32 letters, digits, dots, dashes or underscores)
                  <input name="name" required minLength={2} maxLength={32} pattern="[A-Za-z0-9][A-Za-z0-9._\-]{1,31}" autocomplete="off" />
                </label>
                <label>
                  Role
                  <select name="role" required>
                    {OPERATOR_ROLES.map((role) => (
                      <option value={role}>{role}</option>
                    ))}
                  </select>
                </label>
                <button type="submit">Create</button>
              </form>
              <p class="muted">
                Roles: a viewer reads everything; a moderator also runs tournaments, disputes and bans; finance also moves money (credits, adjustments,
                withdrawals, prize pools); an admin does everything, operators and game keys included.
              </p>
            </>
          ))
        },
        { query: t.Object(NOTICE_FIELDS), ...consoleRoute('admin') },
      )
      .post(
        '/operators',
        ({ request, body }) =>
          attempt(request, SECTION, async () => {
            const { operator, password } = await operators.create({ name: body.name, role: body.role }, consoleSession(request).actor)
            return oneTimePasswordPage(request, `Operator ${operator.name} created`, operator.name, password, 201)
          }),
        {
          body: t.Object({ _csrf: t.String({ maxLength: 128 }), name: t.String({ maxLength: 64 }), role: t.UnionEnum(OPERATOR_ROLES) }),
          ...consoleRoute('admin'),
        },
      )
      .get('/operators/:id/reset-password', ({ request, params, query }) => confirmOperatorAction(request, params.id, 'reset-password', query), ConfirmRoute)
      .get('/operators/:id/disable', ({ request, params, query }) => confirmOperatorAction(request, params.id, 'disable', query), ConfirmRoute)
      .get('/operators/:id/disable-totp', ({ request, params, query }) => confirmOperatorAction(request, params.id, 'disable-totp', query), ConfirmRoute)
      .post(
        '/operators/:id/reset-password',
        ({ request, params }) =>
          attempt(request, SECTION, async () => {
            const { operator, password } = await operators.resetPassword(params.id, consoleSession(request).actor)
            return oneTimePasswordPage(request, `New password for ${operator.name}`, operator.name, password, 200)
          }),
        { params: IdParams, body: CsrfBody, ...consoleRoute('admin') },
      )
      .post(
        '/operators/:id/disable',
        ({ request, params }) =>
          attempt(request, SECTION, async () => {
            await operators.disable(params.id, consoleSession(request).actor)
            return redirect(SECTION, 'operator_disabled')
          }),
        { params: IdParams, body: CsrfBody, ...consoleRoute('admin') },
      )
      .post(
        '/operators/:id/enable',
        ({ request, params }) =>
          attempt(request, SECTION, async () => {
            await operators.enable(params.id, consoleSession(request).actor)
            return redirect(SECTION, 'operator_enabled')
          }),
        { params: IdParams, body: CsrfBody, ...consoleRoute('admin') },
      )
      .post(
        '/operators/:id/role',
        ({ request, params, body }) =>
          attempt(request, SECTION, async () => {
            await operators.setRole(params.id, body.role, consoleSession(request).actor)
            return redirect(SECTION, 'operator_role_changed')
          }),
        { params: IdParams, body: t.Object({ _csrf: t.String({ maxLength: 128 }), role: t.UnionEnum(OPERATOR_ROLES) }), ...consoleRoute('admin') },
      )
      .post(
        '/operators/:id/disable-totp',
        ({ request, params }) =>
          attempt(request, SECTION, async () => {
            await operatorTotp.disableTotp(params.id, consoleSession(request).actor)
            return redirect(SECTION, 'operator_totp_reset')
          }),
        { params: IdParams, body: CsrfBody, ...consoleRoute('admin') },
      )
}

/** The one time a one-time password is shown: on the page answering the form (never cached: every console page is no-store). */
function oneTimePasswordPage(request: Request, title: string, name: string, password: string, status: number): Response {
  return consolePage(request, { title, section: SECTION, status }, (
    <>
      <p>
        Give this password to <strong>{name}</strong> over a channel you trust. It works for one sign-in, which must choose a new password, and it is not
        shown again: reset the password if it is lost.
      </p>
      <p class="secret" aria-label="One-time password">
        <code>{password}</code>
      </p>
      <p>
        <a href={SECTION}>Back to the operators</a>
      </p>
    </>
  ))
}
