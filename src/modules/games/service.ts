// Games, their keys, and tournaments (contract §2 and §6). Knows nothing of HTTP.
import type { Statement } from 'bun:sqlite'
import { asc, eq, inArray, or } from 'drizzle-orm'
import type { Db, Executor } from '../../db/sqlite/connection'
import { games, matches, participants, tournaments, users } from '../../db/schema'
import type { Clock } from '../../shared/clock'
import { toIso } from '../../shared/clock'
import { constantTimeEqual, randomToken, sha256Hex } from '../../shared/crypto'
import { AppError } from '../../shared/errors'
import { newId } from '../../shared/ids'
import { appendEvent } from '../events/outbox'
import { notifyReady } from './match-events'
import { planSingleElimination } from './bracket'
import type { SecurityEventInput } from '../security/event-log'
import type { CreateTournamentBody, Match, Tournament } from './model'

type GameRow = typeof games.$inferSelect
type MatchRow = typeof matches.$inferSelect

const GAME_KEY_PREFIX = 'agk_'

function newGameKey(): string {
  return GAME_KEY_PREFIX + randomToken(32)
}

export function toMatch(row: MatchRow): Match {
  return {
    id: row.id,
    round: row.round,
    position: row.position,
    status: row.status,
    slot1ParticipantId: row.slot1ParticipantId,
    slot2ParticipantId: row.slot2ParticipantId,
    winnerParticipantId: row.winnerParticipantId,
    nextMatchId: row.nextMatchId,
  }
}

/** The tournament object of contract §6, or null. */
export function loadTournament(db: Executor, id: string): Tournament | null {
  const row = db.select().from(tournaments).where(eq(tournaments.id, id)).get()
  if (!row) return null
  const people = db
    .select({ id: participants.id, userId: participants.userId, seed: participants.seed })
    .from(participants)
    .where(eq(participants.tournamentId, id))
    .orderBy(asc(participants.seed))
    .all()
  const bracket = db
    .select()
    .from(matches)
    .where(eq(matches.tournamentId, id))
    .orderBy(asc(matches.round), asc(matches.position))
    .all()
  return {
    id: row.id,
    gameId: row.gameId,
    name: row.name,
    format: row.format,
    status: row.status,
    participants: people,
    matches: bracket.map(toMatch),
    winnerParticipantId: row.winnerParticipantId,
  }
}

/** Users of a tournament, for addressing status events to each of them. */
export function participantUserIds(db: Executor, tournamentId: string): string[] {
  return db
    .select({ userId: participants.userId })
    .from(participants)
    .where(eq(participants.tournamentId, tournamentId))
    .all()
    .map((row) => row.userId)
}

/** Bad game keys for one game within a minute that count as a burst worth a security event. */
export const BAD_KEY_BURST = 5

export class GamesService {
  /** Bad-key counts per game in the current minute; a burst is reported once per minute. */
  private readonly badKeys = new Map<string, { windowStart: number; count: number }>()

  /** The key check's lookup, compiled once: it runs on every game-SDK call, where building it cost more than running it. */
  private readonly keyHashOf: Statement<{ keyHash: string }, [{ id: string }]>

  constructor(private readonly deps: { db: Db; clock: Clock; onSecurityEvent?: (event: SecurityEventInput) => void }) {
    this.keyHashOf = deps.db.$client.prepare<{ keyHash: string }, { id: string }>('SELECT key_hash AS keyHash FROM games WHERE id = $id')
  }

  private noteBadKey(gameId: string): void {
    const now = this.deps.clock.now().getTime()
    const entry = this.badKeys.get(gameId)
    const current = entry && now - entry.windowStart < 60_000 ? entry : { windowStart: now, count: 0 }
    current.count++
    this.badKeys.set(gameId, current)
    if (current.count === BAD_KEY_BURST) {
      this.deps.onSecurityEvent?.({ userId: null, source: 'server', kind: 'INVALID_GAME_KEY_BURST', level: 'WARN', details: { gameId, failures: current.count, windowS: 60 } })
    }
  }

  createGame(name: string) {
    const now = this.deps.clock.now()
    const gameKey = newGameKey()
    const row: GameRow = { id: newId('game'), name, keyHash: sha256Hex(gameKey), keyRotatedAt: now, createdAt: now }
    this.deps.db.insert(games).values(row).run()
    return { game: { id: row.id, name: row.name, createdAt: toIso(row.createdAt) }, gameKey }
  }

  /** Issues a new key; the old one stops working at once. */
  rotateKey(gameId: string) {
    const gameKey = newGameKey()
    const updated = this.deps.db
      .update(games)
      .set({ keyHash: sha256Hex(gameKey), keyRotatedAt: this.deps.clock.now() })
      .where(eq(games.id, gameId))
      .returning({ id: games.id })
      .all()
    if (updated.length === 0) throw new AppError('not_found', 'No such game')
    return { gameKey }
  }

  /**
   * The x-game-key check of every /game-sdk/{gameId} call. An unknown game and
   * a wrong key are the same 403, compared in constant time.
   */
  verifyGameKey(gameId: string, presented: string | null): void {
    const game = this.keyHashOf.get({ id: gameId })
    const presentedHash = sha256Hex(presented ?? '')
    const ok = constantTimeEqual(presentedHash, game?.keyHash ?? sha256Hex(`no-game:${gameId}`))
    if (!game || !presented || !ok) {
      this.noteBadKey(gameId)
      throw new AppError('invalid_game_key', 'Missing or invalid x-game-key for this game')
    }
  }

  createTournament(input: CreateTournamentBody): Tournament {
    const { db, clock } = this.deps
    const game = db.select({ id: games.id }).from(games).where(eq(games.id, input.gameId)).get()
    if (!game) throw new AppError('not_found', 'No such game')
    if (new Set(input.participants.map((p) => p.toLowerCase())).size !== input.participants.length) {
      throw new AppError('validation_failed', 'Request failed validation', {
        details: [{ path: 'body/participants', message: 'Each participant may appear once' }],
      })
    }
    const keys = input.participants.map((p) => p.toLowerCase())
    const found = db
      .select({ id: users.id, usernameKey: users.usernameKey })
      .from(users)
      .where(or(inArray(users.id, input.participants), inArray(users.usernameKey, keys)))
      .all()
    const resolved: string[] = []
    const missing: string[] = []
    for (const ref of input.participants) {
      const user = found.find((u) => u.id === ref || u.usernameKey === ref.toLowerCase())
      if (user) resolved.push(user.id)
      else missing.push(ref)
    }
    if (missing.length > 0 || new Set(resolved).size !== resolved.length) {
      throw new AppError('validation_failed', 'Request failed validation', {
        details:
          missing.length > 0
            ? missing.slice(0, 20).map((ref) => ({ path: 'body/participants', message: `No user ${JSON.stringify(ref)}` }))
            : [{ path: 'body/participants', message: 'A user is listed twice (by id and by username)' }],
      })
    }
    const id = newId('tournament')
    db.transaction(
      (tx) => {
        tx.insert(tournaments)
          .values({ id, gameId: game.id, name: input.name, format: 'single_elimination', status: 'draft', createdAt: clock.now() })
          .run()
        tx.insert(participants)
          .values(resolved.map((userId, index) => ({ id: newId('participant'), tournamentId: id, userId, seed: index + 1 })))
          .run()
      },
      { behavior: 'immediate' },
    )
    return loadTournament(db, id)!
  }

  /**
   * Builds the bracket, resolves byes, and opens every match whose two slots
   * are filled. One transaction: a half-built bracket never exists.
   */
  startTournament(id: string): Tournament {
    const { db, clock } = this.deps
    db.transaction(
      (tx) => {
        const tournament = tx.select().from(tournaments).where(eq(tournaments.id, id)).get()
        if (!tournament) throw new AppError('not_found', 'No such tournament')
        if (tournament.status !== 'draft') throw new AppError('conflict', `Tournament is ${tournament.status}, not draft`)
        const seeded = tx
          .select({ id: participants.id, seed: participants.seed })
          .from(participants)
          .where(eq(participants.tournamentId, id))
          .orderBy(asc(participants.seed))
          .all()
        const plan = planSingleElimination(seeded.length)
        const now = clock.now()
        const idOf = new Map<string, string>()
        for (const m of plan.matches) idOf.set(`${m.round}:${m.position}`, newId('match'))
        const rows: MatchRow[] = plan.matches.map((m) => ({
          id: idOf.get(`${m.round}:${m.position}`)!,
          tournamentId: id,
          round: m.round,
          position: m.position,
          status: 'waiting',
          slot1ParticipantId: m.slot1Seed === null ? null : seeded[m.slot1Seed - 1]!.id,
          slot2ParticipantId: m.slot2Seed === null ? null : seeded[m.slot2Seed - 1]!.id,
          winnerParticipantId: null,
          nextMatchId: m.next ? idOf.get(`${m.next.round}:${m.next.position}`)! : null,
          nextSlot: m.next ? m.next.slot : null,
          claimRound: 1,
          decidedAt: null,
        }))
        const byId = new Map(rows.map((row) => [row.id, row]))
        // Byes: the lone participant advances before anyone plays.
        for (const [index, m] of plan.matches.entries()) {
          if (!m.bye) continue
          const row = rows[index]!
          const winner = row.slot1ParticipantId ?? row.slot2ParticipantId
          row.status = 'decided'
          row.winnerParticipantId = winner
          row.decidedAt = now
          const next = row.nextMatchId ? byId.get(row.nextMatchId) : undefined
          if (next) {
            if (row.nextSlot === 1) next.slot1ParticipantId = winner
            else next.slot2ParticipantId = winner
          }
        }
        for (const row of rows) {
          if (row.status === 'waiting' && row.slot1ParticipantId && row.slot2ParticipantId) row.status = 'running'
        }
        // Insert in chunks: SQLite limits bound variables per statement.
        for (let i = 0; i < rows.length; i += 50) tx.insert(matches).values(rows.slice(i, i + 50)).run()
        tx.update(tournaments).set({ status: 'running', startedAt: now }).where(eq(tournaments.id, id)).run()
        for (const userId of participantUserIds(tx, id)) {
          appendEvent(tx, clock, { userId, topic: 'status', type: 'tournament.started', data: { tournamentId: id } })
        }
        const userOf = new Map(
          tx.select({ id: participants.id, userId: participants.userId }).from(participants).where(eq(participants.tournamentId, id)).all().map((p) => [p.id, p.userId]),
        )
        for (const row of rows) {
          if (row.status === 'decided' && row.winnerParticipantId) {
            appendEvent(tx, clock, {
              userId: userOf.get(row.winnerParticipantId)!,
              topic: 'status',
              type: 'match.decided',
              data: { tournamentId: id, matchId: row.id, winnerParticipantId: row.winnerParticipantId, reason: 'bye' },
            })
          }
          if (row.status === 'running') notifyReady(tx, clock, row)
        }
      },
      { behavior: 'immediate' },
    )
    return loadTournament(db, id)!
  }

  getTournament(id: string): Tournament {
    const tournament = loadTournament(this.deps.db, id)
    if (!tournament) throw new AppError('not_found', 'No such tournament')
    return tournament
  }
}
