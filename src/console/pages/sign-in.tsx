// The sign-in page: name and password, and the authenticator code when the
// operator enrolled one. After a one-time password (a new operator, a reset)
// the next page is the choose-your-password step: a normal step of the first
// sign-in, not an error, bound to the proven one-time password by a ticket
// in a cookie (OperatorSessions.beginSignIn).
import { PASSWORD_LENGTH } from '../../modules/auth/passwords'
import { Csrf, Layout } from '../layout'

export function SignInPage(props: { next: string; notice?: string | null; error?: string | null; name?: string; askCode?: boolean }) {
  return (
    <Layout title="Sign in" operator={null} notice={props.notice ?? null} error={props.error ?? null}>
      <form method="post" action="/console/login" class="stack">
        <input type="hidden" name="next" value={props.next} />
        <label>
          Operator name
          <input name="name" autocomplete="username" required value={props.name ?? ''} />
        </label>
        <label>
          Password
          <input name="password" type="password" autocomplete="current-password" required />
        </label>
        <label>
          Authenticator code {props.askCode ? '' : '(if you set one up)'}
          <input name="totp" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" required={props.askCode ?? false} />
        </label>
        <button type="submit">Sign in</button>
      </form>
    </Layout>
  )
}

/** What was wrong with the last try at the step, said beside the field it is about. */
export type PasswordProblem = { field: 'newPassword' | 'confirmPassword'; message: string }

/** The rule of a new password, as the server holds it (assertPasswordLength). */
export const PASSWORD_RULE = `${PASSWORD_LENGTH.min} to ${PASSWORD_LENGTH.max} characters`

/**
 * The choose-your-password step. Its form carries the step's own CSRF token
 * (an HMAC of the ticket); the passwords are never written back into the
 * page, so a retry types both again.
 */
export function ChoosePasswordPage(props: { name: string; next: string; csrf: string; expiresAt: Date; problem?: PasswordProblem | null }) {
  const problem = props.problem ?? null
  const until = props.expiresAt.toISOString().slice(11, 16)
  const described = (field: PasswordProblem['field'], own: string) => [own, problem?.field === field ? `${field}-problem` : null].filter(Boolean).join(' ')
  const Problem = ({ field }: { field: PasswordProblem['field'] }) =>
    problem?.field === field ? (
      <span class="field-problem" id={`${field}-problem`}>
        {problem.message}
      </span>
    ) : null
  return (
    <Layout title="Choose your password" operator={null}>
      <p class="step-intro">
        The one-time password for <strong>{props.name}</strong> worked. It opens the console only once, so choose the password you will sign in with from now on: {PASSWORD_RULE}.
      </p>
      <form method="post" action="/console/login/password" class="stack">
        <Csrf token={props.csrf} />
        <input type="hidden" name="next" value={props.next} />
        <label>
          Operator name
          <input name="name" autocomplete="username" value={props.name} readonly />
        </label>
        {/* Each field's hint and problem sit beside its label, not in it: the field is named by its label alone and described by them; the field a problem is about has the focus, so a screen reader says it first. */}
        <div class="field">
          <label for="newPassword">New password</label>
          <input id="newPassword" name="newPassword" type="password" autocomplete="new-password" required autofocus={problem?.field !== 'confirmPassword'} aria-describedby={described('newPassword', 'password-rule')} aria-invalid={problem?.field === 'newPassword' ? 'true' : undefined} />
          <span class="hint" id="password-rule">
            {PASSWORD_RULE}: letters, digits, spaces and symbols all count. A few words you will remember make a good one.
          </span>
          <Problem field="newPassword" />
        </div>
        <div class="field">
          <label for="confirmPassword">Type it again</label>
          <input id="confirmPassword" name="confirmPassword" type="password" autocomplete="new-password" required autofocus={problem?.field === 'confirmPassword'} aria-describedby={described('confirmPassword', 'confirm-hint')} aria-invalid={problem?.field === 'confirmPassword' ? 'true' : undefined} />
          <span class="hint" id="confirm-hint">
            The same password, to be sure it is the one you meant.
          </span>
          <Problem field="confirmPassword" />
        </div>
        <button type="submit">Set password and sign in</button>
      </form>
      <p class="muted">
        This step stays open until {until} UTC. After that, or if you leave it, sign in again with the one-time password.
      </p>
    </Layout>
  )
}
