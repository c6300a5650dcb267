// Socket tickets (contract §14). A browser's WebSocket cannot send an
// Authorization header, and a bearer must never travel in a URL (it would
// sit in proxy and server logs for its whole lifetime). So a client trades
// its bearer for a ticket, POST /events/socket-ticket, and puts the ticket
// in the socket's URL: 256 random bits, stored only as its SHA-256, bound to
// the session that minted it, spent by the first upgrade that presents it
// (the DELETE … RETURNING decides, on either engine and across instances)
// and worthless after 30 s. A session that ends takes its tickets with it
// (ON DELETE CASCADE for a deleted account; a revoked session fails the
// check at spend).
import type { Storage } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { randomToken, sha256Hex } from '../../shared/crypto'
import { isLive } from '../auth/service'
import { TICKET_TTL_S } from './protocol'

/** Whom a spent ticket lets in. */
export interface TicketHolder {
  userId: string
  sessionId: string
}

export class SocketTickets {
  constructor(private readonly deps: { storage: Storage; clock: Clock }) {}

  /** A new ticket for the caller's session; the session's expired ones are swept on the way. */
  async mint(holder: TicketHolder): Promise<{ ticket: string; expiresIn: number }> {
    const { storage, clock } = this.deps
    const ticket = randomToken(32)
    const now = clock.now()
    await storage.write(async (tx) => {
      await tx.events.pruneSocketTickets(now, holder.sessionId)
      await tx.events.createSocketTicket({
        ticketHash: sha256Hex(ticket),
        sessionId: holder.sessionId,
        userId: holder.userId,
        expiresAt: new Date(now.getTime() + TICKET_TTL_S * 1000),
      })
    })
    return { ticket, expiresIn: TICKET_TTL_S }
  }

  /**
   * Spends a ticket: its holder when it was minted, is unspent and unexpired
   * and its session is still live; otherwise null. Spent either way: a
   * ticket presented twice opens at most one socket.
   */
  async spend(ticket: string): Promise<TicketHolder | null> {
    const { storage, clock } = this.deps
    // The lookup is by the ticket's digest: no comparison of secret text.
    const spent = await storage.write((tx) => tx.events.spendSocketTicket(sha256Hex(ticket)))
    const now = clock.now()
    if (spent === null || spent.expiresAt.getTime() <= now.getTime()) return null
    return (await this.sessionLive(spent.sessionId)) ? { userId: spent.userId, sessionId: spent.sessionId } : null
  }

  /** Of these sessions, the live ones: one query for every socket's ping tick. */
  async liveSessions(sessionIds: readonly string[]): Promise<Set<string>> {
    return new Set(await this.deps.storage.read.auth.liveSessionIds(sessionIds, this.deps.clock.now()))
  }

  /** Whether the session is neither revoked nor expired (at open, and at a subscribe with a cursor). */
  async sessionLive(sessionId: string): Promise<boolean> {
    const session = await this.deps.storage.read.auth.session(sessionId)
    return session !== null && isLive(session, this.deps.clock.now())
  }
}
