// The SQL of the session-issue and result-claim paths, compiled once per
// service. A CPU profile of a claim showed about half its CPU in Drizzle
// BUILDING the ~15 queries it runs (the compiled statements were already
// cached by text), so these paths skip the query builder: each statement here
// is prepared once and run with parameters.
//
// The statements run on `db`'s one bun:sqlite connection, so inside whatever
// transaction is open there (the group committer's, or db.transaction's).
// Rows are mapped by hand to what Drizzle would give or write: timestamp_ms
// columns are epoch-ms integers, JSON columns JSON text.
import type { Db } from '../../db/sqlite/connection'
import type { matches } from '../../db/schema'

export type MatchRow = typeof matches.$inferSelect

/** A game session as the claim path needs it; times in epoch ms. */
export interface SessionRow {
  id: string
  gameId: string
  matchId: string
  participantId: string
  userId: string
  claimRound: number
  expiresAtMs: number
  consumedAtMs: number | null
}

export interface ClaimRow {
  participantId: string
  outcome: 'WIN' | 'DRAW'
  winnerParticipantId: string | null
}

export interface NewGameSession {
  id: string
  tokenHash: string
  gameId: string
  matchId: string
  participantId: string
  userId: string
  claimRound: number
  expiresAt: Date
  createdAt: Date
}

export interface NewClaim {
  matchId: string
  claimRound: number
  participantId: string
  outcome: 'WIN' | 'DRAW'
  winnerParticipantId: string | null
  score: Record<string, unknown> | null
  gameSessionId: string
  createdAt: Date
}

type RawMatch = Omit<MatchRow, 'decidedAt'> & { decidedAt: number | null }

function matchColumns(table: string): string {
  return [
    'id',
    'tournament_id AS tournamentId',
    'round',
    'position',
    'status',
    'slot1_participant_id AS slot1ParticipantId',
    'slot2_participant_id AS slot2ParticipantId',
    'winner_participant_id AS winnerParticipantId',
    'next_match_id AS nextMatchId',
    'next_slot AS nextSlot',
    'claim_round AS claimRound',
    'decided_at AS decidedAt',
  ]
    .map((column) => `${table}.${column}`)
    .join(', ')
}

function toMatchRow(raw: RawMatch): MatchRow {
  return { ...raw, decidedAt: raw.decidedAt === null ? null : new Date(raw.decidedAt) }
}

export type MatchQueries = ReturnType<typeof prepareMatchQueries>

export function prepareMatchQueries(db: Db) {
  const sqlite = db.$client
  type Id = { id: string }

  const matchWithGame = sqlite.prepare<RawMatch & { gameId: string }, Id>(
    `SELECT ${matchColumns('m')}, t.game_id AS gameId FROM matches m JOIN tournaments t ON t.id = m.tournament_id WHERE m.id = $id`,
  )
  const matchById = sqlite.prepare<RawMatch, Id>(`SELECT ${matchColumns('matches')} FROM matches WHERE id = $id`)
  const seat = sqlite.prepare<Id, { a: string; b: string; userId: string }>('SELECT id FROM participants WHERE id IN ($a, $b) AND user_id = $userId')
  const claimOf = sqlite.prepare<{ participantId: string }, { matchId: string; claimRound: number; participantId: string }>(
    'SELECT participant_id AS participantId FROM match_claims WHERE match_id = $matchId AND claim_round = $claimRound AND participant_id = $participantId',
  )
  const claimsOfRound = sqlite.prepare<ClaimRow, { matchId: string; claimRound: number }>(
    'SELECT participant_id AS participantId, outcome, winner_participant_id AS winnerParticipantId FROM match_claims WHERE match_id = $matchId AND claim_round = $claimRound',
  )
  const insertClaim = sqlite.prepare<unknown, Omit<NewClaim, 'score' | 'createdAt'> & { score: string | null; createdAt: number }>(
    `INSERT INTO match_claims (match_id, claim_round, participant_id, outcome, winner_participant_id, score, game_session_id, created_at)
     VALUES ($matchId, $claimRound, $participantId, $outcome, $winnerParticipantId, $score, $gameSessionId, $createdAt)`,
  )
  const sessionByTokenHash = sqlite.prepare<SessionRow, { tokenHash: string }>(
    `SELECT id, game_id AS gameId, match_id AS matchId, participant_id AS participantId, user_id AS userId, claim_round AS claimRound,
            expires_at AS expiresAtMs, consumed_at AS consumedAtMs
     FROM game_sessions WHERE token_hash = $tokenHash`,
  )
  const insertSession = sqlite.prepare<unknown, Omit<NewGameSession, 'expiresAt' | 'createdAt'> & { expiresAt: number; createdAt: number }>(
    `INSERT INTO game_sessions (id, token_hash, game_id, match_id, participant_id, user_id, claim_round, expires_at, consumed_at, created_at)
     VALUES ($id, $tokenHash, $gameId, $matchId, $participantId, $userId, $claimRound, $expiresAt, NULL, $createdAt)`,
  )
  const consumeSession = sqlite.prepare<unknown, { id: string; now: number }>('UPDATE game_sessions SET consumed_at = $now WHERE id = $id')
  const setClaimRound = sqlite.prepare<unknown, { id: string; claimRound: number }>('UPDATE matches SET claim_round = $claimRound WHERE id = $id')
  const markDisputed = sqlite.prepare<unknown, Id>(`UPDATE matches SET status = 'disputed' WHERE id = $id`)
  const markDecided = sqlite.prepare<unknown, { id: string; winner: string; now: number }>(
    `UPDATE matches SET status = 'decided', winner_participant_id = $winner, decided_at = $now WHERE id = $id`,
  )
  const setSlot1 = sqlite.prepare<unknown, { id: string; winner: string }>('UPDATE matches SET slot1_participant_id = $winner WHERE id = $id')
  const setSlot2 = sqlite.prepare<unknown, { id: string; winner: string }>('UPDATE matches SET slot2_participant_id = $winner WHERE id = $id')
  // The next match opens once both of its players are known.
  const openIfReady = sqlite.prepare<RawMatch, Id>(
    `UPDATE matches SET status = 'running'
     WHERE id = $id AND status = 'waiting' AND slot1_participant_id IS NOT NULL AND slot2_participant_id IS NOT NULL
     RETURNING ${matchColumns('matches')}`,
  )
  const markFinalizing = sqlite.prepare<unknown, { id: string; winner: string }>(
    `UPDATE tournaments SET status = 'finalizing', winner_participant_id = $winner WHERE id = $id`,
  )
  const usersOfTournament = sqlite.prepare<{ userId: string }, { tournamentId: string }>(
    'SELECT user_id AS userId FROM participants WHERE tournament_id = $tournamentId',
  )

  return {
    matchWithGame(id: string): { match: MatchRow; gameId: string } | null {
      const raw = matchWithGame.get({ id })
      if (!raw) return null
      const { gameId, ...match } = raw
      return { match: toMatchRow(match), gameId }
    },
    match(id: string): MatchRow | null {
      const raw = matchById.get({ id })
      return raw ? toMatchRow(raw) : null
    },
    /** The participant of `userId` among the given ones (one or two ids), or null. */
    seatOf(ids: readonly string[], userId: string): string | null {
      return seat.get({ a: ids[0]!, b: ids[1] ?? ids[0]!, userId })?.id ?? null
    },
    hasClaimed(matchId: string, claimRound: number, participantId: string): boolean {
      return claimOf.get({ matchId, claimRound, participantId }) !== null
    },
    claimsOfRound(matchId: string, claimRound: number): ClaimRow[] {
      return claimsOfRound.all({ matchId, claimRound })
    },
    insertClaim(claim: NewClaim): void {
      insertClaim.run({ ...claim, score: claim.score === null ? null : JSON.stringify(claim.score), createdAt: claim.createdAt.getTime() })
    },
    sessionByTokenHash(tokenHash: string): SessionRow | null {
      return sessionByTokenHash.get({ tokenHash })
    },
    insertSession(session: NewGameSession): void {
      insertSession.run({ ...session, expiresAt: session.expiresAt.getTime(), createdAt: session.createdAt.getTime() })
    },
    consumeSession(id: string, now: Date): void {
      consumeSession.run({ id, now: now.getTime() })
    },
    setClaimRound(id: string, claimRound: number): void {
      setClaimRound.run({ id, claimRound })
    },
    markDisputed(id: string): void {
      markDisputed.run({ id })
    },
    markDecided(id: string, winner: string, now: Date): void {
      markDecided.run({ id, winner, now: now.getTime() })
    },
    setSlot(id: string, slot: number | null, winner: string): void {
      // As before: any next_slot other than 1 fills slot 2.
      ;(slot === 1 ? setSlot1 : setSlot2).run({ id, winner })
    },
    /** Opens `id` if it waits and both of its slots are filled; the opened rows. */
    openIfReady(id: string): MatchRow[] {
      return openIfReady.all({ id }).map(toMatchRow)
    },
    markFinalizing(tournamentId: string, winner: string): void {
      markFinalizing.run({ id: tournamentId, winner })
    },
    participantUserIds(tournamentId: string): string[] {
      return usersOfTournament.all({ tournamentId }).map((row) => row.userId)
    },
  }
}
