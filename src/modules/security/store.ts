// What the security module needs from the database, in its own terms (see
// src/db/storage.ts): PINs, their one-time sessions and lockouts, and the
// tamper-evident security-event log.
import type { IntegrityLevel } from './model'

export type SecurityLevel = IntegrityLevel

/** Failures are counted per user, not per session, so minting new sessions never resets them (contract §3). */
export interface PinLock {
  /** Consecutive failures since the last success or lock. */
  failures: number
  /** Locks so far: each lasts twice as long as the one before. */
  locks: number
  lockedUntil: Date | null
}

export interface PinSession {
  id: string
  userId: string
  /** sha256 of the session token; the token itself is never stored. */
  tokenHash: string
  expiresAt: Date
  consumedAt: Date | null
  createdAt: Date
}

/** A security event as recorded, before it is chained. */
export interface SecurityEvent {
  id: string
  userId: string | null
  source: 'client' | 'server'
  kind: string
  level: SecurityLevel
  details: Record<string, unknown>
  occurredAt: Date
  receivedAt: Date
}

/** A link of the chain: each event carries the hash of the one before it. */
export interface ChainedSecurityEvent extends SecurityEvent {
  prevHash: string
  hash: string
}

/** A stored event; `seq` orders the chain and is never reused. */
export interface StoredSecurityEvent extends ChainedSecurityEvent {
  seq: number
}

/** Where a chain ends: its last event's seq and hash. */
export interface ChainLink {
  seq: number
  hash: string
}

/** Where retention cut the chain's old end: the last removed link, and an HMAC over it under the chain key. */
export interface PrunedAnchor extends ChainLink {
  mac: string
}

export interface SecurityStore {
  // ---- PINs ----
  /** The user's PIN hash (argon2id), or null when no PIN is set. */
  pinHash(userId: string): Promise<string | null>
  /** Sets or replaces the user's PIN hash. */
  setPinHash(userId: string, pinHash: string, now: Date): Promise<void>
  /** The user's failure count and lock; null when clean. */
  pinLock(userId: string): Promise<PinLock | null>
  savePinLock(userId: string, lock: PinLock): Promise<void>
  /** A correct PIN forgets the failures and the doubling. */
  clearPinLock(userId: string): Promise<void>

  // ---- PIN sessions ----
  addPinSession(session: PinSession): Promise<void>
  pinSession(id: string): Promise<PinSession | null>
  consumePinSession(id: string, now: Date): Promise<void>
  /** The user's live sessions (neither consumed nor expired at `now`) and the soonest of their expiries. */
  livePinSessions(userId: string, now: Date): Promise<{ count: number; soonestExpiry: Date | null }>
  /** Housekeeping: deletes sessions that expired before `cutoff`; returns how many. */
  prunePinSessionsExpiredBefore(cutoff: Date): Promise<number>

  // ---- account deletion and export (contract §8) ----
  /** Deletes the user's PIN hash, failure count and lock, and PIN sessions (account deletion). */
  erasePin(userId: string): Promise<void>
  /** The security events the user reported (source `client`), oldest first. */
  reportedBy(userId: string): Promise<StoredSecurityEvent[]>

  // ---- the security-event log ----
  //
  // The chain head is state shared by every request and every flush: each
  // flush must chain from the link the previous one left. Here one process
  // writes, one write at a time, so reading it inside the flush's write is
  // enough. With several instances on one database, the head must be read
  // and advanced inside the same transaction under a lock (SELECT ... FOR
  // UPDATE on the head row, or an advisory lock), or two flushes would both
  // chain from the same link: that is the next issue.
  /** The link the next event chains from: the newest stored event; null while the log is empty. Inside a write. */
  chainHead(): Promise<ChainLink | null>
  /** Appends events already chained onto `chainHead()`, in order, and records the last as the head. */
  appendChained(events: readonly ChainedSecurityEvent[]): Promise<ChainLink>
  /** The head the last flush recorded (a log cut at its end no longer reaches it); null when none was. */
  recordedHead(): Promise<ChainLink | null>
  /** Events after `afterSeq`, oldest first, at most `limit`. */
  securityEventsAfter(afterSeq: number, limit: number): Promise<StoredSecurityEvent[]>
  /** Events before `beforeSeq` (all when null), newest first: the console's pages. */
  securityEventsBefore(beforeSeq: number | null, limit: number): Promise<StoredSecurityEvent[]>

  // ---- bounds and retention ----
  /** The user's stored client reports received at or after `since`, and the oldest of their receipt times. */
  clientReportsSince(userId: string, since: Date): Promise<{ count: number; oldest: Date | null }>
  /** The chain's oldest `limit` links, oldest first, with their receipt times (retention decides from them). */
  oldestLinks(limit: number): Promise<(ChainLink & { receivedAt: Date })[]>
  /** Deletes every event up to `anchor.seq` and records the anchor in the head row; how many went. Inside a write. */
  pruneThrough(anchor: PrunedAnchor): Promise<number>
  /** Where retention last cut the chain; null when it never did. */
  prunedAnchor(): Promise<PrunedAnchor | null>
}
