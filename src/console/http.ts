// What every console response shares: HTML rendered on the server (Preact's
// renderer escapes every value it is given), the headers that keep the pages
// to themselves, redirects after a form, and the session cookie.
import type { VNode } from 'preact'
import { render } from 'preact-render-to-string'
import { KNOWN_PLACES } from '../modules/auth/known-places'

import type { NoticeCode } from './notices'

export const SESSION_COOKIE = 'arena_console'
export const CONSOLE_PREFIX = '/console'

/**
 * No script anywhere (every page works with forms and links alone), so the
 * policy allows none; styles and images only from the console itself (the
 * bracket is inline SVG). Never cached, never framed, no referrer leaves it:
 * `same-origin`, not `no-referrer`, because under `no-referrer` a browser
 * sends `Origin: null` with every form, and the Origin check (index.tsx)
 * would refuse the console's own forms.
 */
export const PAGE_HEADERS: Record<string, string> = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
}

export function htmlPage(page: VNode, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(`<!doctype html>${render(page)}`, { status, headers: { ...PAGE_HEADERS, ...headers } })
}

/**
 * 303 to a console path after a form (post/redirect/get), with the code of a
 * notice the next page shows (its fixed text is in notices.ts: the URL never
 * carries a sentence). Only console paths: a `next` taken from a query never
 * sends anyone elsewhere.
 */
export function redirect(to: string, notice?: NoticeCode, headers: Record<string, string> = {}): Response {
  return new Response(null, { status: 303, headers: { location: withParam(to, 'notice', notice), 'cache-control': 'no-store', ...headers } })
}

/** A console path (anything else: the console's home) with `name=value` added to its query, before any #fragment. */
function withParam(to: string, name: string, value: string | undefined): string {
  const target = isConsolePath(to) ? to : CONSOLE_PREFIX
  if (value === undefined) return target
  const hash = target.indexOf('#')
  const [path, fragment] = hash === -1 ? [target, ''] : [target.slice(0, hash), target.slice(hash)]
  return `${path}${path.includes('?') ? '&' : '?'}${name}=${encodeURIComponent(value)}${fragment}`
}

/**
 * 303 back to a console page after a form the service refused, with its
 * message (the page shows it as an error). The message is the service's own
 * text (it names values: a date, a field), so it travels in the URL, signed
 * with the operator's session (`key`: its CSRF token, which no other page or
 * person knows): a link someone else made, with words of their own, shows no
 * error (errorSignature, checked by the page).
 */
export function redirectWithError(to: string, message: string, key: string): Response {
  const text = message.slice(0, 300)
  return new Response(null, { status: 303, headers: { location: withParam(withParam(to, 'error', text), 'error_sig', errorSignature(key, text)), 'cache-control': 'no-store' } })
}

/** The signature of an error message for one session (HMAC-SHA-256 under its CSRF token). */
export function errorSignature(key: string, message: string): string {
  return new Bun.CryptoHasher('sha256', key).update(`console-error:${message}`).digest('hex')
}

export function isConsolePath(path: string): boolean {
  // Printable ASCII only: a control character (CR, LF) or a non-ASCII one cannot go into a Location header.
  if (!/^[\x21-\x7e]*$/.test(path)) return false
  // No `..` segment (plain or percent-encoded): the browser would resolve it out of /console.
  if (/\/(\.|%2e){2}(\/|\?|#|$)/i.test(path)) return false
  return (path === CONSOLE_PREFIX || path.startsWith(`${CONSOLE_PREFIX}/`) || path.startsWith(`${CONSOLE_PREFIX}?`)) && !path.includes('//') && !path.includes('\\')
}

/** The session cookie: HttpOnly, SameSite=Strict, only under /console; Secure when the console is reached over HTTPS. */
export function sessionCookie(token: string, options: { secure: boolean; maxAgeS: number }): string {
  return [`${SESSION_COOKIE}=${token}`, `Path=${CONSOLE_PREFIX}`, `Max-Age=${options.maxAgeS}`, 'HttpOnly', 'SameSite=Strict', ...(options.secure ? ['Secure'] : [])].join('; ')
}

/** Whether the browser reached us over HTTPS: the URL's scheme, or behind a trusted proxy its X-Forwarded-Proto (the right-most entry, our proxy's). */
export function overHttps(request: Request, trustProxy: boolean): boolean {
  if (request.url.startsWith('https:')) return true
  return trustProxy && request.headers.get('x-forwarded-proto')?.split(',').at(-1)?.trim().toLowerCase() === 'https'
}

export function clearedSessionCookie(secure: boolean): string {
  return sessionCookie('', { secure, maxAgeS: 0 })
}

/** The session token from the request's cookie, if any. */
export function sessionToken(request: Request): string | null {
  return cookieToken(request, SESSION_COOKIE)
}

/**
 * The browser's device token (../modules/auth/known-places.ts): set at each
 * sign-in, kept for as long as a known place is remembered, sent back with
 * the next sign-in so that failures on the name elsewhere do not block it.
 * HttpOnly and SameSite=Strict like the session's, sent only to the sign-in form.
 */
const DEVICE_COOKIE = 'arena_device'

export function deviceCookie(token: string, options: { secure: boolean }): string {
  const maxAgeS = Math.floor(KNOWN_PLACES.ttlMs / 1000)
  // Only the sign-in form needs it.
  return [`${DEVICE_COOKIE}=${token}`, `Path=${CONSOLE_PREFIX}/login`, `Max-Age=${maxAgeS}`, 'HttpOnly', 'SameSite=Strict', ...(options.secure ? ['Secure'] : [])].join('; ')
}

/** The device token from the request's cookie, if any. */
export function deviceToken(request: Request): string | null {
  return cookieToken(request, DEVICE_COOKIE)
}

/**
 * The first sign-in's choose-your-password step (OperatorSessions.beginSignIn):
 * its ticket, signed by the server, kept by the browser for the step's life
 * and sent only to the sign-in pages, never in a URL or the page itself.
 * HttpOnly and SameSite=Strict like the session's.
 */
const PASSWORD_STEP_COOKIE = 'arena_password_step'

export function passwordStepCookie(ticket: string, options: { secure: boolean; maxAgeS: number }): string {
  return [`${PASSWORD_STEP_COOKIE}=${ticket}`, `Path=${CONSOLE_PREFIX}/login`, `Max-Age=${options.maxAgeS}`, 'HttpOnly', 'SameSite=Strict', ...(options.secure ? ['Secure'] : [])].join('; ')
}

export function clearedPasswordStepCookie(secure: boolean): string {
  return passwordStepCookie('', { secure, maxAgeS: 0 })
}

/** The step ticket from the request's cookie, if any (the service checks it). */
export function passwordStepTicket(request: Request): string | null {
  return cookieToken(request, PASSWORD_STEP_COOKIE, /^[A-Za-z0-9_.-]{16,256}$/)
}

function cookieToken(request: Request, name: string, shape = /^[A-Za-z0-9_-]{16,128}$/): string | null {
  const header = request.headers.get('cookie')
  if (header === null) return null
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq !== -1 && part.slice(0, eq).trim() === name) {
      const value = part.slice(eq + 1).trim()
      return shape.test(value) ? value : null
    }
  }
  return null
}

/** The path of a request URL, without parsing the whole URL. */
export function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  if (start === -1) return '/'
  const query = url.indexOf('?', start)
  return query === -1 ? url.slice(start) : url.slice(start, query)
}
