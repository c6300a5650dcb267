// The sign-in page: name and password; on a one-time password (a new
// operator, a reset) the fields to choose a new one; the authenticator code
// when the operator enrolled one.
import { Layout } from '../layout'

export function SignInPage(props: { next: string; notice?: string | null; error?: string | null; name?: string; changePassword?: boolean; askCode?: boolean }) {
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
        {props.changePassword && (
          <label>
            New password (8 to 128 characters: the one you were given works once)
            <input name="newPassword" type="password" autocomplete="new-password" minlength={8} maxlength={128} required />
          </label>
        )}
        <label>
          Authenticator code {props.askCode ? '' : '(if you set one up)'}
          <input name="totp" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" required={props.askCode ?? false} />
        </label>
        <button type="submit">Sign in</button>
      </form>
    </Layout>
  )
}
