// Games, their keys, and tournaments (contract §2 and §6). Knows nothing of HTTP.
import type { Storage, Transaction } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { toIso } from '../../shared/clock'
import { constantTimeEqual, randomToken, sha256Hex } from '../../shared/crypto'
import { AppError } from '../../shared/errors'
import { newId } from '../../shared/ids'
import type { SecurityEventInput } from '../security/event-log'
import { formatOf } from './formats'
import { deadlineFrom, scheduleSettle } from './deadlines'
import { notifyReady } from './match-events'
import type { CreateTournamentBody, Match, Tournament } from './model'
import type { GamesStore, MatchRecord } from './store'

const GAME_KEY_PREFIX = 'agk_'

function newGameKey(): string {
  return GAME_KEY_PREFIX + randomToken(32)
}

export function toMatch(row: MatchRecord): Match {
  return {
    id: row.id,
    round: row.round,
    position: row.position,
    status: row.status,
    slot1ParticipantId: row.slot1ParticipantId,
    slot2ParticipantId: row.slot2ParticipantId,
    winnerParticipantId: row.winnerParticipantId,
    nextMatchId: row.nextMatchId,
    deadline: row.deadline ? toIso(row.deadline) : null,
  }
}

/** The tournament object of contract §6, or null. */
export async function loadTournament(games: GamesStore, id: string): Promise<Tournament | null> {
  const row = await games.tournament(id)
  if (!row) return null
  const people = await games.participantsOf(id)
  const bracket = await games.bracketOf(id)
  return {
    id: row.id,
    gameId: row.gameId,
    name: row.name,
    format: row.format,
    status: row.status,
    participants: people,
    matches: bracket.map(toMatch),
    winnerParticipantId: row.winnerParticipantId,
    options: row.options ?? {},
  }
}

/**
 * The seam for entry-fee refunds (contract §9, §10): tournaments take no entry
 * fees yet. When they do, the refunds of a cancelled tournament are posted
 * here, in the cancel's unit of work, so a cancel and its refunds commit
 * together.
 */
async function refundEntryFees(_tx: Transaction, _tournamentId: string): Promise<void> {}

/** Bad game keys for one game within a minute that count as a burst worth a security event. */
export const BAD_KEY_BURST = 5

export interface GamesServiceDeps {
  storage: Storage
  clock: Clock
  onSecurityEvent?: (event: SecurityEventInput) => void
}

export class GamesService {
  /** Bad-key counts per game in the current minute; a burst is reported once per minute. */
  private readonly badKeys = new Map<string, { windowStart: number; count: number }>()

  constructor(private readonly deps: GamesServiceDeps) {}

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

  async createGame(name: string) {
    const now = this.deps.clock.now()
    const gameKey = newGameKey()
    const game = { id: newId('game'), name, keyHash: sha256Hex(gameKey), keyRotatedAt: now, createdAt: now }
    await this.deps.storage.write((tx) => tx.games.insertGame(game))
    return { game: { id: game.id, name: game.name, createdAt: toIso(game.createdAt) }, gameKey }
  }

  /** Issues a new key; the old one stops working at once. */
  async rotateKey(gameId: string) {
    const gameKey = newGameKey()
    const replaced = await this.deps.storage.write((tx) => tx.games.replaceKeyHash(gameId, sha256Hex(gameKey), this.deps.clock.now()))
    if (!replaced) throw new AppError('not_found', 'No such game')
    return { gameKey }
  }

  /**
   * The x-game-key check of every /game-sdk/{gameId} call. An unknown game and
   * a wrong key are the same 403, compared in constant time. The session and
   * claim paths check it inside their unit of work (`games` = `tx.games`): a
   * read on the read connection right after a commit finds that connection's
   * page cache invalidated by the commit, and cost a sixth of a session issue.
   */
  async verifyGameKey(gameId: string, presented: string | null, games: GamesStore = this.deps.storage.read.games): Promise<void> {
    const keyHash = await games.keyHashOf(gameId)
    const presentedHash = sha256Hex(presented ?? '')
    const ok = constantTimeEqual(presentedHash, keyHash ?? sha256Hex(`no-game:${gameId}`))
    if (keyHash === null || !presented || !ok) {
      this.noteBadKey(gameId)
      throw new AppError('invalid_game_key', 'Missing or invalid x-game-key for this game')
    }
  }

  async createTournament(input: CreateTournamentBody): Promise<Tournament> {
    const { storage, clock } = this.deps
    if (!(await storage.read.games.gameExists(input.gameId))) throw new AppError('not_found', 'No such game')
    if (new Set(input.participants.map((p) => p.toLowerCase())).size !== input.participants.length) {
      throw new AppError('validation_failed', 'Request failed validation', {
        details: [{ path: 'body/participants', message: 'Each participant may appear once' }],
      })
    }
    const keys = input.participants.map((p) => p.toLowerCase())
    const found = await storage.read.games.findUsers(input.participants, keys)
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
    return storage.write(async (tx) => {
      await tx.games.insertTournament(
        { id, gameId: input.gameId, name: input.name, format: input.format, status: 'draft', createdAt: clock.now(), options: input.options ?? null },
        resolved.map((userId, index) => ({ id: newId('participant'), tournamentId: id, userId, seed: index + 1 })),
      )
      return (await loadTournament(tx.games, id))!
    })
  }

  /**
   * Builds the bracket, resolves byes, and opens every match whose two slots
   * are filled. One unit of work: a half-built bracket never exists.
   */
  startTournament(id: string): Promise<Tournament> {
    return this.deps.storage.write(async (tx) => {
      const tournament = await tx.games.tournament(id)
      if (!tournament) throw new AppError('not_found', 'No such tournament')
      if (tournament.status !== 'draft') throw new AppError('conflict', `Tournament is ${tournament.status}, not draft`)
      const seeded = await tx.games.participantsOf(id)
      const now = this.deps.clock.now()
      const rows = formatOf(tournament.format).plan(id, seeded, now)
      const deadline = deadlineFrom(now, tournament.options?.matchDeadlineS)
      for (const row of rows) row.deadline = row.status === 'running' ? deadline : null
      await tx.games.insertBracket(rows)
      for (const row of rows) if (row.status === 'running') await scheduleSettle(tx, row.id, deadline, now)
      await tx.games.markRunning(id, now)
      await this.announceStart(tx, id, seeded, rows, now)
      return (await loadTournament(tx.games, id))!
    })
  }

  /** The started tournament's status events: to everyone, to each bye's winner, to the players of each open match. */
  private async announceStart(tx: Transaction, id: string, seeded: readonly { id: string; userId: string }[], rows: readonly MatchRecord[], now: Date): Promise<void> {
    for (const userId of await tx.games.participantUserIds(id)) {
      await tx.events.append({ userId, topic: 'status', type: 'tournament.started', data: { tournamentId: id } }, now)
    }
    const userOf = new Map(seeded.map((p) => [p.id, p.userId]))
    for (const row of rows) {
      if (row.status === 'decided' && row.winnerParticipantId) {
        await tx.events.append(
          {
            userId: userOf.get(row.winnerParticipantId)!,
            topic: 'status',
            type: 'match.decided',
            data: { tournamentId: id, matchId: row.id, winnerParticipantId: row.winnerParticipantId, reason: 'bye' },
          },
          now,
        )
      }
      if (row.status === 'running') await notifyReady(tx, now, row)
    }
  }

  /**
   * Operator cancel (contract §9): status `cancelled`, every undecided match
   * `cancelled` (a game session issued for one is refused at its claim:
   * 409 match_not_running), `tournament.cancelled` with the reason to every
   * participant. A tournament whose winner is known (finalizing, completed)
   * or already cancelled: 409. One unit of work.
   */
  cancelTournament(id: string, reason: string): Promise<Tournament> {
    return this.deps.storage.write(async (tx) => {
      const tournament = await tx.games.tournament(id)
      if (!tournament) throw new AppError('not_found', 'No such tournament')
      if (tournament.status === 'finalizing' || tournament.status === 'completed' || tournament.status === 'cancelled') {
        throw new AppError('conflict', `Tournament is ${tournament.status}; it cannot be cancelled`)
      }
      const now = this.deps.clock.now()
      const cancelledMatches = await tx.matches.cancelOpenMatches(id)
      await tx.games.markCancelled(id, now)
      await refundEntryFees(tx, id)
      for (const userId of await tx.games.participantUserIds(id)) {
        await tx.events.append({ userId, topic: 'status', type: 'tournament.cancelled', data: { tournamentId: id, reason } }, now)
      }
      tx.afterCommit(() =>
        this.deps.onSecurityEvent?.({ userId: null, source: 'server', kind: 'TOURNAMENT_CANCELLED', level: 'WARN', details: { tournamentId: id, reason, cancelledMatches } }),
      )
      return (await loadTournament(tx.games, id))!
    })
  }

  async getTournament(id: string): Promise<Tournament> {
    const tournament = await loadTournament(this.deps.storage.read.games, id)
    if (!tournament) throw new AppError('not_found', 'No such tournament')
    return tournament
  }
}
