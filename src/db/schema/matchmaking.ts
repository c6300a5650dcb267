// Matchmaking (contract §16): a game's queues, the tickets players wait in
// them with, and challenges to a named opponent. The matches they make are
// `matches` rows without a tournament (games.ts: `kind`, `stake`, `terms`).
import { sql } from 'drizzle-orm'
import { index, integer, real, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { amount, flag, instant } from './columns'
import { users } from './auth'
import { games, matches } from './games'

export const queues = sqliteTable(
  'queues',
  {
    id: text('id').primaryKey(),
    gameId: text('game_id')
      .notNull()
      .references(() => games.id),
    /** Unique per game among open queues: the players' routes name a queue by it. */
    name: text('name').notNull(),
    rated: flag('rated').notNull(),
    /** What each player puts in, minor units; null: no stake. */
    stake: amount('stake'),
    /** The house's share of the pot, a decimal fraction as written (`"0.05"`). */
    rake: text('rake').notNull().default('0'),
    windowInitial: real('window_initial').notNull(),
    windowWidenPerSecond: real('window_widen_per_second').notNull(),
    windowMax: real('window_max').notNull(),
    readyCheckS: integer('ready_check_s').notNull(),
    matchDeadlineS: integer('match_deadline_s'),
    rematchCooldownS: integer('rematch_cooldown_s').notNull().default(0),
    draws: text('draws', { enum: ['replay', 'result'] }).notNull().default('replay'),
    createdAt: instant('created_at').notNull(),
    updatedAt: instant('updated_at').notNull(),
    /** When an operator closed it: it takes no ticket, its open tickets were cancelled, its name is free again. */
    closedAt: instant('closed_at'),
  },
  (table) => [uniqueIndex('queues_game_name').on(table.gameId, table.name).where(sql`${table.closedAt} IS NULL`)],
)

export const TICKET_STATUSES = ['open', 'matched', 'cancelled'] as const
export const TICKET_CLOSE_REASONS = ['left', 'matched', 'ready_timeout', 'insufficient_funds', 'queue_closed', 'account_closed'] as const

export const tickets = sqliteTable(
  'tickets',
  {
    id: text('id').primaryKey(),
    queueId: text('queue_id')
      .notNull()
      .references(() => queues.id),
    gameId: text('game_id')
      .notNull()
      .references(() => games.id),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    /** The player's rating display when they joined: where their window is centred. */
    display: real('display').notNull(),
    /** The ticket's place in line and the start of its window's widening; kept when an opponent failed the ready check. */
    waitingSince: instant('waiting_since').notNull(),
    status: text('status', { enum: TICKET_STATUSES }).notNull(),
    /** The match it made (the last one, after a failed ready check). */
    matchId: text('match_id').references(() => matches.id),
    createdAt: instant('created_at').notNull(),
    closedAt: instant('closed_at'),
    closeReason: text('close_reason', { enum: TICKET_CLOSE_REASONS }),
  },
  (table) => [
    // One open ticket per player and game (409 ticket_open); the matcher reads a queue's open tickets.
    uniqueIndex('tickets_open_user_game').on(table.userId, table.gameId).where(sql`${table.status} = 'open'`),
    index('tickets_open_queue').on(table.queueId, table.waitingSince).where(sql`${table.status} = 'open'`),
    index('tickets_match').on(table.matchId),
    index('tickets_closed').on(table.closedAt),
  ],
)

export const CHALLENGE_STATUSES = ['open', 'accepted', 'declined', 'expired', 'cancelled'] as const

export const challenges = sqliteTable(
  'challenges',
  {
    id: text('id').primaryKey(),
    gameId: text('game_id')
      .notNull()
      .references(() => games.id),
    challengerId: text('challenger_id')
      .notNull()
      .references(() => users.id),
    opponentId: text('opponent_id')
      .notNull()
      .references(() => users.id),
    /** What each player puts in, minor units; null: no stake. */
    stake: amount('stake'),
    status: text('status', { enum: CHALLENGE_STATUSES }).notNull(),
    expiresAt: instant('expires_at').notNull(),
    matchId: text('match_id').references(() => matches.id),
    createdAt: instant('created_at').notNull(),
    closedAt: instant('closed_at'),
  },
  (table) => [
    index('challenges_open_challenger').on(table.challengerId).where(sql`${table.status} = 'open'`),
    index('challenges_opponent').on(table.opponentId, table.createdAt),
    index('challenges_open_expiry').on(table.expiresAt).where(sql`${table.status} = 'open'`),
    index('challenges_closed').on(table.closedAt),
  ],
)
