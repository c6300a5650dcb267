// The frame of every console page: the navigation (only what the operator's
// role may open), the notice a form left, and the page's own content.
import type { ComponentChildren } from 'preact'
import type { OperatorIdentity } from '../modules/audit/log'
import { roleAllows, type OperatorRole } from '../modules/operators/roles'

/** The sections, in the navigation's order, with the role each needs to open. */
export const SECTIONS: { path: string; label: string; role: OperatorRole }[] = [
  { path: '/console', label: 'Dashboard', role: 'viewer' },
  { path: '/console/users', label: 'Users', role: 'viewer' },
  { path: '/console/tournaments', label: 'Tournaments', role: 'viewer' },
  { path: '/console/disputes', label: 'Disputes', role: 'viewer' },
  { path: '/console/matchmaking', label: 'Matchmaking', role: 'viewer' },
  { path: '/console/withdrawals', label: 'Withdrawals', role: 'viewer' },
  { path: '/console/payouts', label: 'Held payouts', role: 'viewer' },
  { path: '/console/security', label: 'Security events', role: 'viewer' },
  { path: '/console/games', label: 'Games & keys', role: 'viewer' },
  { path: '/console/audit', label: 'Audit log', role: 'viewer' },
  { path: '/console/webhooks', label: 'Webhooks', role: 'admin' },
  { path: '/console/operators', label: 'Operators', role: 'admin' },
]

export interface LayoutProps {
  title: string
  /** Null on the sign-in page. */
  operator: OperatorIdentity | null
  /** The session's CSRF token, for the sign-out form. */
  csrf?: string
  /** The current section's path, marked in the navigation. */
  section?: string
  notice?: string | null
  error?: string | null
  children: ComponentChildren
}

export function Layout({ title, operator, csrf, section, notice, error, children }: LayoutProps) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title} · arena console`}</title>
        <link rel="stylesheet" href="/console/assets/console.css" />
      </head>
      <body>
        <a class="skip" href="#main">
          Skip to content
        </a>
        <header class="top">
          <span class="brand">arena console</span>
          {operator && (
            <div class="who">
              <a href="/console/account" aria-current={section === '/console/account' ? 'page' : undefined}>
                {operator.name} <span class="role">({operator.role})</span>
              </a>
              <form method="post" action="/console/logout" class="inline">
                <input type="hidden" name="_csrf" value={csrf} />
                <button type="submit">Sign out</button>
              </form>
            </div>
          )}
        </header>
        <div class="frame">
          {operator && <Sections role={operator.role} section={section} />}
          <PageMain title={title} notice={notice} error={error}>
            {children}
          </PageMain>
        </div>
      </body>
    </html>
  )
}

/** A page's main column: its title, the notice or error the last action left, then the page. The console's and the device page's. */
export function PageMain({ title, notice, error, children }: { title: string; notice?: string | null | undefined; error?: string | null | undefined; children: ComponentChildren }) {
  return (
    <main id="main">
      <h1>{title}</h1>
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {children}
    </main>
  )
}

/**
 * The navigation, twice: a sidebar on a wide screen, and on a narrow one (a
 * phone) a "Menu" disclosure above the page, closed until tapped. No script:
 * the stylesheet shows one and hides the other (display: none, so a screen
 * reader meets only the one shown), and a `<details>` opens by itself.
 */
function Sections({ role, section }: { role: OperatorRole; section: string | undefined }) {
  const open = SECTIONS.filter((s) => roleAllows(role, s.role))
  const links = () => (
    <ul>
      {open.map((s) => (
        <li>
          <a href={s.path} aria-current={s.path === section ? 'page' : undefined}>
            {s.label}
          </a>
        </li>
      ))}
    </ul>
  )
  const current = SECTIONS.find((s) => s.path === section)
  return (
    <>
      <nav aria-label="Sections" class="sidebar">
        {links()}
      </nav>
      <details class="menu">
        <summary>
          Menu{current && <span class="muted">{` · ${current.label}`}</span>}
        </summary>
        <nav aria-label="Sections">{links()}</nav>
      </details>
    </>
  )
}

/** The hidden field every form carries. */
export function Csrf({ token }: { token: string }) {
  return <input type="hidden" name="_csrf" value={token} />
}
