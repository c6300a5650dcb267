// Result integrity (contract §17): the game servers that sign results, the
// signatures they already used, the evidence players attach to disputes, the
// signals a decided staked or prize match raised, and the payouts held for
// an operator because of them (docs/integrity.md).
import { sql } from 'drizzle-orm'
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { amount, bytes, instant, json } from './columns'
import { users } from './auth'
import { games, matches, tournaments } from './games'
import { PAYOUT_HOLD_KINDS, PAYOUT_HOLD_STATUSES, type RaisedSignal } from '../../modules/integrity/store'

export const gameServers = sqliteTable(
  'game_servers',
  {
    id: text('id').primaryKey(),
    gameId: text('game_id')
      .notNull()
      .references(() => games.id),
    name: text('name').notNull(),
    /** The Ed25519 public key, raw 32 bytes as base64url without padding (public: the studio keeps the private key). */
    publicKey: text('public_key').notNull(),
    createdAt: instant('created_at').notNull(),
    /** When the key was last replaced (`…/rotate`); null: never. A signature by the old key fails from then on. */
    rotatedAt: instant('rotated_at'),
    /** When an operator disabled it: its signatures are refused from then on, for good. */
    disabledAt: instant('disabled_at'),
  },
  (table) => [index('game_servers_game').on(table.gameId)],
)

/**
 * Every accepted signature, as its SHA-256, until its ±60 s window is over
 * (then a replay fails on the clock anyway, and housekeeping deletes it):
 * the primary key makes "accepted once" hold across instances.
 */
export const gameServerSignatures = sqliteTable(
  'game_server_signatures',
  {
    signatureHash: text('signature_hash').primaryKey(),
    serverId: text('server_id').notNull(),
    expiresAt: instant('expires_at').notNull(),
  },
  (table) => [index('game_server_signatures_expiry').on(table.expiresAt)],
)

/** A file's bytes, once per content (its SHA-256): two uploads of one file store it once. */
export const evidenceBlobs = sqliteTable('evidence_blobs', {
  sha256: text('sha256').primaryKey(),
  bytes: bytes('bytes').notNull(),
  size: integer('size').notNull(),
  createdAt: instant('created_at').notNull(),
})

export const EVIDENCE_TYPES = ['image/png', 'image/jpeg', 'video/webm', 'text/plain', 'application/json'] as const

/** One file a participant attached to a disputed match. */
export const matchEvidence = sqliteTable(
  'match_evidence',
  {
    id: text('id').primaryKey(),
    matchId: text('match_id')
      .notNull()
      .references(() => matches.id),
    participantId: text('participant_id').notNull(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    sha256: text('sha256')
      .notNull()
      .references(() => evidenceBlobs.sha256),
    type: text('type', { enum: EVIDENCE_TYPES }).notNull(),
    size: integer('size').notNull(),
    createdAt: instant('created_at').notNull(),
  },
  (table) => [
    index('match_evidence_match').on(table.matchId, table.participantId),
    index('match_evidence_user').on(table.userId, table.createdAt),
    index('match_evidence_sha256').on(table.sha256),
    index('match_evidence_created').on(table.createdAt),
  ],
)

// The signals and the holds' kinds and statuses are the integrity module's (modules reach no schema file: docs/architecture.md).
export { INTEGRITY_SIGNALS, PAYOUT_HOLD_KINDS, PAYOUT_HOLD_STATUSES, type IntegritySignal, type RaisedSignal } from '../../modules/integrity/store'

/** The signals a decided staked or prize match raised against its winner: one row per such match. */
export const integrityFlags = sqliteTable(
  'integrity_flags',
  {
    id: text('id').primaryKey(),
    matchId: text('match_id')
      .notNull()
      .references(() => matches.id),
    gameId: text('game_id').notNull(),
    /** The match's tournament (a prize tournament: the winner's prize is held when it finalizes); null for a staked match. */
    tournamentId: text('tournament_id'),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    participantId: text('participant_id').notNull(),
    opponentUserId: text('opponent_user_id').notNull(),
    signals: json<RaisedSignal[]>('signals').notNull(),
    createdAt: instant('created_at').notNull(),
  },
  (table) => [uniqueIndex('integrity_flags_match').on(table.matchId), index('integrity_flags_tournament').on(table.tournamentId, table.participantId)],
)


/**
 * A payout kept in escrow until an operator (finance) releases it (paid as
 * decided) or voids it (stakes back to both players; a prize to the house).
 */
export const payoutHolds = sqliteTable(
  'payout_holds',
  {
    id: text('id').primaryKey(),
    kind: text('kind', { enum: PAYOUT_HOLD_KINDS }).notNull(),
    /** The staked match whose winnings are held; for a prize, the flagged match that held it. */
    matchId: text('match_id')
      .notNull()
      .references(() => matches.id),
    /** A prize's tournament; null for stake winnings. */
    tournamentId: text('tournament_id').references(() => tournaments.id),
    /** A prize's rank; null for stake winnings. */
    rank: integer('rank'),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    participantId: text('participant_id').notNull(),
    /** What the winner is paid on release, minor units: the pot less the rake, or the prize. */
    amount: amount('amount').notNull(),
    asset: text('asset').notNull(),
    signals: json<RaisedSignal[]>('signals').notNull(),
    status: text('status', { enum: PAYOUT_HOLD_STATUSES }).notNull(),
    createdAt: instant('created_at').notNull(),
    decidedAt: instant('decided_at'),
    /** The operator who released or voided it, and why. */
    decidedBy: text('decided_by'),
    reason: text('reason'),
  },
  (table) => [
    uniqueIndex('payout_holds_stake').on(table.matchId).where(sql`${table.kind} = 'stake'`),
    uniqueIndex('payout_holds_prize').on(table.tournamentId, table.rank),
    index('payout_holds_status').on(table.status, table.createdAt),
    index('payout_holds_user').on(table.userId, table.status),
  ],
)
