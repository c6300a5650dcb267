// The device page's own short sign-in (contract §13): who the player is while
// they approve a device, and nothing more. No account session is opened (the
// device gets one, once, when it polls); the page keeps a signed, short-lived
// cookie instead, so nothing is stored for it:
//
//   <user id>.<expiry, ms>.<HMAC-SHA-256 under the server's key>
//
// The HMAC also covers the account's current password hash, so a password
// change or reset ends every page sign-in made with the old one; a ban or a
// deletion is seen at once because the account is read again on each use.
// The cookie is HttpOnly, SameSite=Lax (the player may arrive from a link or a
// QR code: the GET must still know them; every form is POSTed from the page
// itself), Path=/device, Secure over HTTPS. Each form carries a CSRF token,
// an HMAC of the cookie's value, checked on every POST.
import { constantTimeEqual } from '../shared/crypto'
import type { Clock } from '../shared/clock'
import type { Storage } from '../db/storage'
import { banInForce, type UserAccount } from '../modules/auth/store'

export const DEVICE_PAGE_PREFIX = '/device'
export const PAGE_COOKIE = 'arena_device_page'
/** Long enough to sign in, read the code off the screen and answer; short enough that a browser left signed in is soon worth nothing. */
export const PAGE_SESSION_TTL_MS = 15 * 60_000

const TICKET = /^(usr_[0-9A-Za-z]{1,64})\.([0-9]{13})\.([0-9a-f]{64})$/

export interface PageSessionDeps {
  storage: Storage
  clock: Clock
  /** A server secret (the chain key, as the console's CSRF tokens use); never leaves the server. */
  key: string
}

/** A signed-in player on the page: the account, and the CSRF token its forms carry. */
export interface PageSession {
  user: UserAccount
  csrf: string
}

export class PageSessions {
  constructor(private readonly deps: PageSessionDeps) {}

  /** The cookie value for a player who just proved who they are. */
  ticketFor(user: Pick<UserAccount, 'id' | 'passwordHash'>): string {
    const claims = `${user.id}.${this.deps.clock.now().getTime() + PAGE_SESSION_TTL_MS}`
    return `${claims}.${this.mac(claims, user.passwordHash)}`
  }

  /** The signed-in player of this cookie value; null when it is forged, expired, or its account may no longer sign in. */
  async open(ticket: string | null): Promise<PageSession | null> {
    const parts = ticket === null ? null : TICKET.exec(ticket)
    if (ticket === null || parts === null) return null
    const [, userId, expiresText] = parts as unknown as [string, string, string, string]
    const now = this.deps.clock.now()
    if (Number(expiresText) <= now.getTime()) return null
    const user = await this.deps.storage.read.auth.userById(userId)
    if (user === null || user.deletedAt !== null || banInForce(user.ban, now)) return null
    if (!constantTimeEqual(parts[3]!, this.mac(`${userId}.${expiresText}`, user.passwordHash))) return null
    return { user, csrf: this.csrfFor(ticket) }
  }

  csrfFor(ticket: string): string {
    return new Bun.CryptoHasher('sha256', this.deps.key).update(`device-page-csrf:${ticket}`).digest('hex')
  }

  csrfMatches(ticket: string, given: unknown): boolean {
    return typeof given === 'string' && constantTimeEqual(given, this.csrfFor(ticket))
  }

  private mac(claims: string, passwordHash: string | null): string {
    return new Bun.CryptoHasher('sha256', this.deps.key).update(`device-page:${claims}:${passwordHash ?? ''}`).digest('hex')
  }
}

export function pageCookie(ticket: string, options: { secure: boolean }): string {
  return [`${PAGE_COOKIE}=${ticket}`, `Path=${DEVICE_PAGE_PREFIX}`, `Max-Age=${ticket === '' ? 0 : PAGE_SESSION_TTL_MS / 1000}`, 'HttpOnly', 'SameSite=Lax', ...(options.secure ? ['Secure'] : [])].join('; ')
}

/** The page's cookie value from the request, if any (its shape only: PageSessions.open checks it). */
export function pageTicket(request: Request): string | null {
  const header = request.headers.get('cookie')
  if (header === null) return null
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq !== -1 && part.slice(0, eq).trim() === PAGE_COOKIE) {
      const value = part.slice(eq + 1).trim()
      return TICKET.test(value) ? value : null
    }
  }
  return null
}
