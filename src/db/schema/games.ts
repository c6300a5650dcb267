import { sql } from 'drizzle-orm'
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { amount, instant, json } from './columns'
import { users } from './auth'
import { MATCH_KINDS, type MatchTerms, type TournamentOptions } from '../../modules/games/store'
import { BRACKETS, FORMAT_NAMES } from '../../modules/games/formats/engines'

export const GAME_RESULT_MODES = ['claims', 'server', 'either'] as const

export const games = sqliteTable('games', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  /** SHA-256 of the current game key; the key itself is shown once and never stored. */
  keyHash: text('key_hash').notNull(),
  keyRotatedAt: instant('key_rotated_at').notNull(),
  createdAt: instant('created_at').notNull(),
  /** Glicko-2's system constant τ for this game's ratings (contract §15): how fast volatility moves. */
  ratingTau: real('rating_tau').notNull().default(0.5),
  /** Each whole period this long without a rated match grows a player's deviation (computed on read). */
  ratingInactivityPeriodS: integer('rating_inactivity_period_s').notNull().default(604800),
  /** The house's share of a challenge's pot (contract §16), a decimal fraction 0 ≤ r ≤ 0.5 as written (`"0.05"`). */
  challengeRake: text('challenge_rake').notNull().default('0'),
  /** Who reports results (contract §17): `claims` (the players), `server` (a signed game server only) or `either`. */
  results: text('results', { enum: GAME_RESULT_MODES }).notNull().default('claims'),
})

export const TOURNAMENT_STATUSES = ['draft', 'registration', 'running', 'finalizing', 'completed', 'cancelled'] as const
export const SEEDINGS = ['registration', 'random', 'rating'] as const
export const MATCH_STATUSES = ['waiting', 'running', 'disputed', 'decided', 'cancelled'] as const
// The formats' and their brackets' names come from the formats' registry. As
// a text column's `enum` they type the column and write no SQL: a new format
// needs no migration.
export { BRACKETS, FORMAT_NAMES } from '../../modules/games/formats/engines'

export const tournaments = sqliteTable(
  'tournaments',
  {
    id: text('id').primaryKey(),
    gameId: text('game_id')
      .notNull()
      .references(() => games.id),
    name: text('name').notNull(),
    format: text('format', { enum: FORMAT_NAMES }).notNull(),
    status: text('status', { enum: TOURNAMENT_STATUSES }).notNull(),
    winnerParticipantId: text('winner_participant_id'),
    createdAt: instant('created_at').notNull(),
    startedAt: instant('started_at'),
    completedAt: instant('completed_at'),
    // Registration (contract §9): null for a tournament created with its participants.
    registrationClosesAt: instant('registration_closes_at'),
    maxPlayers: integer('max_players'),
    checkInOpensAt: instant('check_in_opens_at'),
    checkInClosesAt: instant('check_in_closes_at'),
    startsAt: instant('starts_at'),
    seeding: text('seeding', { enum: SEEDINGS }),
    /** The random seed a `random` seeding shuffles with (hex), drawn at creation; shown once started. */
    seed: text('seed'),
    /** Joins so far (never lowered by a leave): the next registrant's number, and the row every join locks. */
    registrationSeq: integer('registration_seq').notNull().default(0),
    /** The creation options (contract §9) as given, e.g. `{ "matchDeadlineS": 600 }`; null: none. */
    options: json<TournamentOptions>('options'),
  },
  (table) => [index('tournaments_game').on(table.gameId), index('tournaments_status').on(table.status, table.id)],
)

export const participants = sqliteTable(
  'participants',
  {
    id: text('id').primaryKey(),
    /** Null for the two seats of a match without a tournament (a queue's or a challenge's, contract §16). */
    tournamentId: text('tournament_id').references(() => tournaments.id),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    /** 1 = top seed; the order the operator listed the players in. While registration is open, the registrant's number (joins in order, with gaps where one left); renumbered 1..n at start. */
    seed: integer('seed').notNull(),
    /** When the player joined by registration; null for an operator-listed participant. */
    registeredAt: instant('registered_at'),
    checkedInAt: instant('checked_in_at'),
    /** When an operator disqualified them (contract §9): every later match of theirs is a walkover. */
    disqualifiedAt: instant('disqualified_at'),
  },
  (table) => [
    uniqueIndex('participants_tournament_user').on(table.tournamentId, table.userId),
    uniqueIndex('participants_tournament_seed').on(table.tournamentId, table.seed),
    index('participants_user').on(table.userId),
    // Whether a tournament has a disqualified player, asked at every decision (games/progress.ts): without it, every participant's row is read.
    index('participants_disqualified').on(table.tournamentId).where(sql`${table.disqualifiedAt} IS NOT NULL`),
  ],
)

export const matches = sqliteTable(
  'matches',
  {
    id: text('id').primaryKey(),
    /** Null for a match without a tournament (`kind` queue or challenge). */
    tournamentId: text('tournament_id').references(() => tournaments.id),
    /** The game it is played in: its tournament's, or its queue's or challenge's. */
    gameId: text('game_id')
      .notNull()
      .references(() => games.id),
    kind: text('kind', { enum: MATCH_KINDS }).notNull().default('tournament'),
    round: integer('round').notNull(),
    position: integer('position').notNull(),
    status: text('status', { enum: MATCH_STATUSES }).notNull(),
    slot1ParticipantId: text('slot1_participant_id'),
    slot2ParticipantId: text('slot2_participant_id'),
    winnerParticipantId: text('winner_participant_id'),
    nextMatchId: text('next_match_id'),
    nextSlot: integer('next_slot'),
    /** Which round of claims is open; a replay starts the next one. */
    claimRound: integer('claim_round').notNull().default(1),
    decidedAt: instant('decided_at'),
    /** When a running match is settled by the deadline job; null without a deadline (contract §9). */
    deadline: instant('deadline'),
    /** Which part of the tournament (contract §9): with round and position, the match's place (the format engine's key). */
    bracket: text('bracket', { enum: BRACKETS }).notNull().default('winners'),
    /** `WIN` or `DRAW` (round robin and Swiss) once decided; null before. */
    outcome: text('outcome', { enum: ['WIN', 'DRAW'] }),
    /** How it was decided: `played` (claims or an operator), `bye`, or `walkover` (no-show, disqualification); null before. */
    decidedBy: text('decided_by', { enum: ['played', 'bye', 'walkover'] }),
    /** Where the loser goes (double elimination's losers bracket, the third-place match); null elsewhere. */
    loserNextMatchId: text('loser_next_match_id'),
    loserNextSlot: integer('loser_next_slot'),
    /** When it was made; null for matches made before matchmaking (the rematch cooldown reads it). */
    createdAt: instant('created_at'),
    /** What each player put in (contract §16), minor units; null: no stake. Paid out, refunded or held with the decision. */
    stake: amount('stake'),
    /** A queue's or a challenge's match: what it was made with; null for a tournament's. */
    terms: json<MatchTerms>('terms'),
    /** The ready check's end (a queue's match waits for both players' POST /ready until then); null once both are ready, or without one. */
    readyBy: instant('ready_by'),
    slot1ReadyAt: instant('slot1_ready_at'),
    slot2ReadyAt: instant('slot2_ready_at'),
  },
  (table) => [
    uniqueIndex('matches_tournament_place').on(table.tournamentId, table.bracket, table.round, table.position),
    // The matches that feed nothing (a final, a grand final, a third-place match): every decision of an elimination reads them.
    index('matches_terminal').on(table.tournamentId).where(sql`${table.nextMatchId} IS NULL`),
    index('matches_slot1').on(table.slot1ParticipantId),
    index('matches_slot2').on(table.slot2ParticipantId),
    // A game's matches without a tournament, newest last: the matcher's rematch cooldown, the console's stakes held.
    index('matches_game_standalone').on(table.gameId, table.createdAt).where(sql`${table.kind} <> 'tournament'`),
  ],
)

// Single-use match sessions: the token is shown once, stored as a hash, bound
// to one user, one participant, one match and one game, and consumed by the
// result submission whatever its decision.
export const gameSessions = sqliteTable(
  'game_sessions',
  {
    id: text('id').primaryKey(),
    tokenHash: text('token_hash').notNull().unique(),
    gameId: text('game_id')
      .notNull()
      .references(() => games.id),
    matchId: text('match_id')
      .notNull()
      .references(() => matches.id),
    participantId: text('participant_id')
      .notNull()
      .references(() => participants.id),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    /** The round of claims it was issued for: a replay makes older sessions worthless. */
    claimRound: integer('claim_round').notNull(),
    expiresAt: instant('expires_at').notNull(),
    consumedAt: instant('consumed_at'),
    createdAt: instant('created_at').notNull(),
  },
  // (user, game): a user's open sessions for a game are counted on every issue.
  (table) => [index('game_sessions_match').on(table.matchId), index('game_sessions_user_game').on(table.userId, table.gameId)],
)

// One claim per participant per round of claims. The claim path checks first
// and answers 409 already_claimed; the primary key is the backstop.
export const matchClaims = sqliteTable(
  'match_claims',
  {
    matchId: text('match_id')
      .notNull()
      .references(() => matches.id),
    claimRound: integer('claim_round').notNull(),
    participantId: text('participant_id')
      .notNull()
      .references(() => participants.id),
    outcome: text('outcome', { enum: ['WIN', 'DRAW'] }).notNull(),
    winnerParticipantId: text('winner_participant_id'),
    score: json<Record<string, unknown>>('score'),
    gameSessionId: text('game_session_id').notNull(),
    createdAt: instant('created_at').notNull(),
  },
  (table) => [primaryKey({ columns: [table.matchId, table.claimRound, table.participantId] })],
)

// Durable background work (tournament finalization, ...). A worker in the
// server runs each queued job in one transaction with marking it done, so a
// job interrupted by a crash is still queued after restart.
export const jobs = sqliteTable(
  'jobs',
  {
    id: text('id').primaryKey(),
    kind: text('kind').notNull(),
    payload: json<Record<string, unknown>>('payload').notNull(),
    status: text('status', { enum: ['queued', 'done', 'failed'] }).notNull(),
    attempts: integer('attempts').notNull().default(0),
    runAfter: instant('run_after').notNull(),
    lastError: text('last_error'),
    createdAt: instant('created_at').notNull(),
    updatedAt: instant('updated_at').notNull(),
  },
  (table) => [index('jobs_status_run_after').on(table.status, table.runAfter)],
)
