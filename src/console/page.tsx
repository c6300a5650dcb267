// What the console's pages share beyond the layout: the signed-in frame of a
// page, the query fields every page accepts (the notice or error a form left),
// times, pagers, and turning a refused form into a redirect with its message.
import { t } from 'elysia'
import type { ComponentChildren } from 'preact'
import { AppError } from '../shared/errors'
import { commandName } from '../shared/invocation'
import type { NamedId } from '../modules/operations/store'
import type { ChainCheck, ChainName } from '../modules/operations/chain-checks'
import { roleAllows } from '../modules/operators/roles'
import { constantTimeEqual } from '../shared/crypto'
import { errorSignature, htmlPage, redirectWithError } from './http'
import { Layout } from './layout'
import { noticeText } from './notices'
import { consoleSession } from './session'

/** What a redirect after a form leaves in the query: every page's query schema includes these (`notice`: a code of notices.ts, shown as its fixed text; anything else shows nothing). */
export const NOTICE_FIELDS = {
  notice: t.Optional(t.String({ maxLength: 300 })),
  error: t.Optional(t.String({ maxLength: 300 })),
  error_sig: t.Optional(t.String({ maxLength: 64 })),
}

/** The signed-in page: the frame with the operator's navigation, the section marked current, the notice (by its code) or error of the last form. */
export function consolePage(
  request: Request,
  props: { title: string; section: string; query?: { notice?: string | undefined; error?: string | undefined; error_sig?: string | undefined }; status?: number },
  children: ComponentChildren,
  /** An error this server rendered itself (a refused form answered in place), not one from the URL. */
  rendered?: { error?: string | null },
): Response {
  const { actor, csrf } = consoleSession(request)
  return htmlPage(
    <Layout title={props.title} operator={actor.operator} csrf={csrf} section={props.section} notice={noticeText(props.query?.notice)} error={rendered?.error ?? signedError(csrf, props.query)}>
      {children}
    </Layout>,
    props.status ?? 200,
  )
}

/** The error a redirect left in the URL, if this session's signature vouches for it (redirectWithError); else none. */
function signedError(csrf: string, query: { error?: string | undefined; error_sig?: string | undefined } | undefined): string | null {
  if (query?.error === undefined || query.error_sig === undefined) return null
  return constantTimeEqual(query.error_sig, errorSignature(csrf, query.error)) ? query.error : null
}

/** An AppError as one line: its message and the fields it names. */
export function errorMessage(error: AppError): string {
  const details = error.details?.map((d) => `${d.path.replace(/^body\//, '')}: ${d.message}`).join('; ')
  return details ? `${error.message} (${details})` : error.message
}

/**
 * Runs a form's action; a refusal by the service (a 4xx AppError: a ban on a
 * deleted user, a code that does not match) goes back to `back` with its
 * message instead of an error page. Anything else (a 503) is the error page.
 */
export async function attempt(request: Request, back: string, action: () => Promise<Response>): Promise<Response> {
  try {
    return await action()
  } catch (error) {
    if (error instanceof AppError && error.status >= 400 && error.status < 500 && error.status !== 401) return redirectWithError(back, errorMessage(error), consoleSession(request).csrf)
    throw error
  }
}

/** A time as the console shows it: UTC to the second, with the exact instant in `datetime`. */
export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span class="muted">—</span>
  return <time datetime={iso}>{`${iso.slice(0, 10)} ${iso.slice(11, 19)}`}</time>
}

/** The links under a paged table: on to the next page (absent on the last) and back to the first. */
export function Pager({ next, first, nextLabel = 'Older', firstLabel = 'Newest' }: { next: string | null; first: string | null; nextLabel?: string; firstLabel?: string }) {
  if (next === null && first === null) return null
  return (
    <nav aria-label="Pages" class="pager">
      {first !== null && <a href={first}>{firstLabel}</a>}
      {next !== null && (
        <a href={next} rel="next">
          {nextLabel}
        </a>
      )}
    </nav>
  )
}

/** A query string from the values that are set. */
export function queryOf(values: Record<string, string | number | null | undefined>): string {
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(values)) if (value !== null && value !== undefined && value !== '') params.set(key, String(value))
  const text = params.toString()
  return text === '' ? '' : `?${text}`
}

/**
 * An id a record names, as an operator knows it: the user's name, the
 * tournament's, the operator's (from `names`, resolved for the whole page at
 * once), linked to its page where the console has one, with the id in small
 * print (and the link's title) to copy. A deleted account reads "deleted
 * account": its username was erased with it. An id the page could not name
 * (a signing key's id, a row since removed) is shown as it is.
 */
export function Named({ id, names, operatorsPage = false }: { id: string | null; names: ReadonlyMap<string, NamedId>; operatorsPage?: boolean }) {
  if (id === null) return <span class="muted">—</span>
  const named = names.get(id)
  if (named === undefined) return <span class="mono">{id}</span>
  const user = (userId: string, username: string, deleted: boolean) => (
    <a href={`/console/users/${userId}`} title={userId}>
      {deleted ? <span class="muted">deleted account</span> : username}
    </a>
  )
  const tournament = (tournamentId: string, name: string) => (
    <a href={`/console/tournaments/${tournamentId}`} title={tournamentId}>
      {name}
    </a>
  )
  const label =
    named.kind === 'user' ? (
      user(id, named.username, named.deleted)
    ) : named.kind === 'tournament' ? (
      tournament(id, named.name)
    ) : named.kind === 'game' ? (
      <a href="/console/games" title={id}>
        {named.name}
      </a>
    ) : named.kind === 'operator' ? (
      operatorsPage ? (
        <a href="/console/operators" title={id}>
          {named.name}
        </a>
      ) : (
        <span title={id}>{named.name}</span>
      )
    ) : named.kind === 'match' ? (
      <>a match of {tournament(named.tournamentId, named.tournamentName)}</>
    ) : named.kind === 'participant' ? (
      <>
        {user(named.userId, named.username, named.deleted)} in {tournament(named.tournamentId, named.tournamentName)}
      </>
    ) : (
      <>a withdrawal by {user(named.userId, named.username, named.deleted)}</>
    )
  return (
    <span class="named">
      {label}
      <small class="mono id">{id}</small>
    </span>
  )
}

/** Whether this request's operator may open the Operators page (admins): where an operator's name links to it. */
export function seesOperators(request: Request): boolean {
  return roleAllows(consoleSession(request).actor.operator.role, 'admin')
}

/**
 * A record's free-form details, whole: short ones inline as they are, longer
 * ones folded (no script: a <details> element) under the names of their
 * fields, pretty-printed and wrapped inside the cell, never cut.
 */
export function Details({ value }: { value: Record<string, unknown> }) {
  const keys = Object.keys(value)
  if (keys.length === 0) return <span class="muted">—</span>
  // One line with a space after each comma and colon (JSON's own newlines are escaped, so only the layout's are replaced): it wraps between fields.
  const text = JSON.stringify(value, null, 1).replace(/\n */g, ' ')
  if (text.length <= 64) return <code class="json">{text}</code>
  return (
    <details class="json">
      <summary>{`${keys.length === 1 ? '1 field' : `${keys.length} fields`}: ${keys.join(', ')}`}</summary>
      <pre class="json">{JSON.stringify(value, null, 2)}</pre>
    </details>
  )
}

/** The command that walks each chain on the server (docs/operators.md). */
const VERIFY_SUBCOMMAND: Record<ChainName, string> = { audit: 'audit verify', security: 'security verify-log' }
export const verifyCommand = (chain: ChainName): string => `${commandName()} ${VERIFY_SUBCOMMAND[chain]}`

/** What an operator does about a broken chain: the command that confirms it and names the record, and where the steps are written. */
export function BrokenChainAdvice({ chain }: { chain: ChainName }) {
  return (
    <span class="advice">
      {'What to do: run '}
      <code>{verifyCommand(chain)}</code>
      {' on the server to confirm it and name the record, then follow “When a chain is broken” in docs/console-ops.md (compare with a backup, find who could write the database).'}
    </span>
  )
}

/** A hash chain's state: verified (how many records, when), broken (where, why, and what to do), or not checked on this page. */
export function ChainState({ label, chain, check, verifyHref }: { label: string; chain: ChainName; check: ChainCheck | null; verifyHref: string }) {
  const result = check?.result
  return (
    <p class="chain">
      <strong>{label}: </strong>
      {check === null || result === undefined ? (
        <span class="muted">not checked on this page (walking the chain reads every record). </span>
      ) : result.ok ? (
        <span class="ok">
          {`verified, ${result.rows} records checked: none edited, removed or reordered (at `}
          <Time iso={check.checkedAt.toISOString()} />
          {' UTC). '}
        </span>
      ) : (
        <>
          <span class="bad">
            {`BROKEN at record ${result.brokenAt}: ${result.reason} (${result.rows} records read, at `}
            <Time iso={check.checkedAt.toISOString()} />
            {' UTC). '}
          </span>
          <BrokenChainAdvice chain={chain} />{' '}
        </>
      )}
      <a href={verifyHref}>Verify now</a>
    </p>
  )
}
