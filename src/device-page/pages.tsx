// The device page's views (contract §13): rendered on the server with Preact
// (every value escaped), plain forms, no script, the console's stylesheet.
import type { ComponentChildren } from 'preact'
import { PageMain } from '../console/layout'

export interface ProviderLink {
  name: string
  label: string
}

export function DeviceLayout({ title, notice, error, children }: { title: string; notice?: string | null; error?: string | null; children: ComponentChildren }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title} · arena`}</title>
        <link rel="stylesheet" href="/console/assets/console.css" />
      </head>
      <body>
        <header class="top">
          <span class="brand">arena</span>
        </header>
        <div class="frame">
          <PageMain title={title} notice={notice} error={error}>
            {children}
          </PageMain>
        </div>
      </body>
    </html>
  )
}

function Csrf({ token }: { token: string }) {
  return <input type="hidden" name="_csrf" value={token} />
}

/** Not signed in: the code (when the link carried one) and the ways to sign in. */
export function SignInView(props: { code: string | null; identifier?: string; error?: string | null; providers: ProviderLink[] }) {
  const back = props.code === null ? '' : `?code=${encodeURIComponent(props.code)}`
  return (
    <DeviceLayout title="Sign in a device" error={props.error ?? null}>
      {props.code !== null ? (
        <p>
          A device is asking to sign in with the code <strong class="mono">{props.code}</strong>. Sign in to approve or deny it.
        </p>
      ) : (
        <p>Sign in, then type the code your TV, console or handheld shows.</p>
      )}
      <form method="post" action="/device/login" class="stack">
        {props.code !== null && <input type="hidden" name="code" value={props.code} />}
        <label>
          Email or username
          <input name="identifier" autocomplete="username" required value={props.identifier ?? ''} />
        </label>
        <label>
          Password
          <input name="password" type="password" autocomplete="current-password" required />
        </label>
        <button type="submit">Sign in</button>
      </form>
      {props.providers.length > 0 && (
        <ul class="providers">
          {props.providers.map((provider) => (
            <li>
              <a href={`/device/signin/${encodeURIComponent(provider.name)}${back}`}>Sign in with {provider.label}</a>
            </li>
          ))}
        </ul>
      )}
    </DeviceLayout>
  )
}

/** Signed in: who, and a form to sign out. */
function SignedInAs({ username, csrf }: { username: string; csrf: string }) {
  return (
    <form method="post" action="/device/logout" class="inline">
      <Csrf token={csrf} />
      Signed in as <strong>{username}</strong> <button type="submit">Sign out</button>
    </form>
  )
}

/** Signed in, no code yet (or the one given waits for nothing): type it. */
export function EnterCodeView(props: { username: string; csrf: string; typed?: string; error?: string | null; status?: number }) {
  return (
    <DeviceLayout title="Sign in a device" error={props.error ?? null}>
      <SignedInAs username={props.username} csrf={props.csrf} />
      <form method="get" action="/device" class="stack">
        <label>
          The code your device shows
          <input name="code" autocomplete="off" autocapitalize="characters" spellcheck={false} required maxLength={16} value={props.typed ?? ''} placeholder="XXXX-XXXX" />
        </label>
        <button type="submit">Continue</button>
      </form>
    </DeviceLayout>
  )
}

/** Signed in, a code waiting: approve or deny it. */
export function ConfirmView(props: { username: string; csrf: string; code: string }) {
  return (
    <DeviceLayout title="Sign in a device">
      <SignedInAs username={props.username} csrf={props.csrf} />
      <p>
        A device is asking to sign in to your account <strong>{props.username}</strong>. Check that it shows this code:
      </p>
      <p class="code">
        <strong class="mono">{props.code}</strong>
      </p>
      <p>Approve it only if you started this on your own device just now. If you did not, deny it.</p>
      <form method="post" action="/device/approve" class="stack">
        <Csrf token={props.csrf} />
        <input type="hidden" name="code" value={props.code} />
        <button type="submit" name="decision" value="approve">
          Approve
        </button>
        <button type="submit" name="decision" value="deny" class="secondary">
          Deny
        </button>
      </form>
    </DeviceLayout>
  )
}

/** The answer given. */
export function DoneView(props: { decision: 'approve' | 'deny' }) {
  return props.decision === 'approve' ? (
    <DeviceLayout title="Device approved" notice="Approved: return to your device. It signs in within a few seconds.">
      <p>You can close this page.</p>
    </DeviceLayout>
  ) : (
    <DeviceLayout title="Device denied" notice="Denied: the device was not signed in.">
      <p>You can close this page. If you did not start this, someone may have tried to get you to approve their device: nothing was given to them.</p>
    </DeviceLayout>
  )
}

export function ErrorView(props: { status: number; message: string }) {
  return (
    <DeviceLayout title={props.status === 403 ? 'Not allowed' : props.status === 404 ? 'Not found' : props.status === 429 ? 'Too many tries' : 'Something went wrong'} error={props.message}>
      <p>
        <a href="/device">Back to the device page</a>
      </p>
    </DeviceLayout>
  )
}
