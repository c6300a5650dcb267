// What the console's pages share beyond the layout: the signed-in frame of a
// page, the query fields every page accepts (the notice or error a form left),
// times, pagers, and turning a refused form into a redirect with its message.
import { t } from 'elysia'
import type { ComponentChildren } from 'preact'
import { AppError } from '../shared/errors'
import { isId } from '../shared/ids'
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

/** An id an entry names: a link when the console has a page for it (a user), else the id as text. */
export function Target({ id }: { id: string | null }) {
  if (id === null) return <span class="muted">—</span>
  if (isId('user', id)) return <a href={`/console/users/${id}`} class="mono">{id}</a>
  return <span class="mono">{id}</span>
}

/** A record's free-form details, folded (no script: a <details> element). */
export function Details({ value }: { value: Record<string, unknown> }) {
  const text = JSON.stringify(value)
  if (text === '{}') return <span class="muted">—</span>
  if (text.length <= 60) return <code>{text}</code>
  return (
    <details>
      <summary>
        <code>{`${text.slice(0, 48)}…`}</code>
      </summary>
      <pre class="mono">{JSON.stringify(value, null, 2)}</pre>
    </details>
  )
}

/** A hash chain's state: verified (how many records), broken (where and why), or not checked on this page. */
export function ChainState({ label, result, verifyHref }: { label: string; result: { ok: true; rows: number } | { ok: false; rows: number; brokenAt: number; reason: string } | null; verifyHref: string }) {
  return (
    <p class="chain">
      <strong>{label}: </strong>
      {result === null ? (
        <span class="muted">not checked on this page (walking the chain reads every record). </span>
      ) : result.ok ? (
        <span class="ok">intact, {result.rows} records checked. </span>
      ) : (
        <span class="bad">{`BROKEN at record ${result.brokenAt}: ${result.reason} (${result.rows} records read). `}</span>
      )}
      <a href={verifyHref}>Verify now</a>
    </p>
  )
}
