// The step between a button that cannot be taken back and what it does
// (issue 34: Cancel and Disqualify acted on one click). No script, so the
// step is a page: the button on the list or detail page is a GET form that
// only opens `<action path>` (read-only: it changes nothing, and needs no
// CSRF token), and that page says what will happen to whom, with the names
// and numbers of this case, and holds the real form, posted to the same path
// with the CSRF field and any reason. One mis-click opens a page; only a
// second, deliberate press on a differently worded button acts.
//
// Used for every action that cannot be undone from the console, or that
// locks someone out: cancel a tournament, disqualify a player, approve or
// reject a withdrawal, ban a user or unlink one of its identities, disable an
// operator, reset its password or turn off its authenticator, rotate a game's key,
// schedule a season (its fields come with the GET and ride in the real form). Actions that are undone by
// the opposite button (lift a ban, enable, set a role, correct a result) act
// at once.
import type { ComponentChildren } from 'preact'
import { Csrf } from './layout'
import { consolePage } from './page'
import { consoleSession } from './session'

/** The button that opens the confirmation page of `href` (a GET: nothing is done by pressing it). */
export function ConfirmButton({ href, label, ariaLabel, kind = 'danger' }: { href: string; label: string; ariaLabel?: string; kind?: 'danger' | 'secondary' }) {
  return (
    <form method="get" action={href} class="inline">
      <button type="submit" class={kind} aria-label={ariaLabel}>
        {`${label}…`}
      </button>
    </form>
  )
}

export interface Confirmation {
  /** The page's heading: the question, naming the thing ("Cancel Winter Double?"). */
  title: string
  section: string
  /** What pressing the button does, one consequence an item, with this case's names and numbers. */
  consequences: ComponentChildren[]
  /** Where the real form posts (the same path the page was opened at). */
  action: string
  /** The button that acts, worded as the act ("Cancel the tournament"). */
  submit: string
  /** Where "Back" leads, changing nothing. */
  back: string
  /** Fields the action takes (a reason), inside the real form. */
  fields?: ComponentChildren
  /** The query the page was opened with: the error of a refused attempt, signed for this session. */
  query?: { notice?: string; error?: string; error_sig?: string }
}

/** The confirmation page: what will happen, the real form (CSRF, the action's fields, the button), and a way back. */
export function confirmPage(request: Request, c: Confirmation): Response {
  const { csrf } = consoleSession(request)
  return consolePage(request, { title: c.title, section: c.section, query: c.query }, (
    <section class="confirm" aria-labelledby="confirm-what">
      <h2 id="confirm-what">What happens</h2>
      <ul>
        {c.consequences.map((item) => (
          <li>{item}</li>
        ))}
      </ul>
      <form method="post" action={c.action} class="stack">
        <Csrf token={csrf} />
        {c.fields}
        <div class="confirm-buttons">
          <button type="submit" class="danger">
            {c.submit}
          </button>
          <a href={c.back}>Back, change nothing</a>
        </div>
      </form>
    </section>
  ))
}
