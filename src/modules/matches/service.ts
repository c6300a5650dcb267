// Match sessions and result claims (contract §2); the bracket moves a claim
// causes go through applyDecision (games/tournament-operations.ts).
// A claim is one unit of work: consume the session token, record the claim,
// decide, move the winner. Claims (and session issues) are each one
// storage.write: on SQLite each runs in its own savepoint of a shared
// IMMEDIATE transaction (group commit) and is answered once that transaction
// has committed, so concurrent claims share one fsync. Units of work run one
// after another, so two racing claims still produce exactly one decision and
// one bracket move.
import { UniqueViolationError } from '../../db/errors'
import type { Storage, Transaction } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { toIso } from '../../shared/clock'
import { randomToken, sha256Hex } from '../../shared/crypto'
import { AppError } from '../../shared/errors'
import { assertStandingMayAct } from '../auth/standing'
import { newId } from '../../shared/ids'
import { engineOf, type FormatName } from '../games/formats/engines'
import type { GameKeys } from '../games/game-keys'
import { invalidSignature, parseSignatureHeader, SIGNATURE_WINDOW_S, signatureValid, signedText } from '../games/game-servers'
import { applyDecision } from '../games/tournament-operations'
import type { IntegrityPolicy } from '../integrity/signals'
import type { MatchRecord } from '../games/store'
import { decide, type Claim } from './arbiter'
import type { DecisionResponse } from './model'
import type { NewClaim } from './store'

/**
 * Open (unconsumed, unexpired) game sessions one account may hold for one
 * game. Issuing one more supersedes the oldest: it is deleted, and its token
 * answers 401 session_token_invalid as a used one does. A game client that
 * lost a token simply asks again, and never waits (docs/operations.md, "How
 * the database's growth is bounded").
 */
export const MAX_OPEN_GAME_SESSIONS = 5

export type ClaimInput =
  | { outcome: 'WIN'; winnerParticipantId: string; score?: Record<string, unknown> }
  | { outcome: 'DRAW'; score?: Record<string, unknown> }

/** What a game server reports (POST /game-servers/{gameId}/results). */
export type ServerResultInput = { matchId: string; score?: Record<string, unknown> } & ({ outcome: 'WIN'; winnerParticipantId: string } | { outcome: 'DRAW' })

export interface MatchesServiceDeps {
  storage: Storage
  clock: Clock
  /** The x-game-key check, on the key hash each unit of work reads with the rest. */
  gameKeys: GameKeys
  gameSessionTtlS: number
  /** The integrity signals a decided staked or prize win is reviewed by (docs/integrity.md). */
  integrity: IntegrityPolicy
}

function sessionTokenInvalid(): AppError {
  return new AppError('session_token_invalid', 'Missing, used, expired or foreign x-session-token')
}

function alreadyClaimed(): AppError {
  return new AppError('already_claimed', 'You already claimed a result in this round of claims')
}

/** Tournaments whose format a service remembers; past this it forgets them all and reads again. */
const REMEMBERED_FORMATS = 10_000

export class MatchesService {
  /**
   * The format of each tournament a claim touched. A tournament's format
   * never changes, and reading it on every claim cost as much as reading the
   * match, so it is read once.
   */
  private readonly formats = new Map<string, FormatName>()

  constructor(private readonly deps: MatchesServiceDeps) {}

  /** Whether an agreed draw decides `match`: its format's rule in a tournament, its terms without one (contract §16). */
  private async drawIsResult(tx: Transaction, match: MatchRecord): Promise<boolean> {
    if (match.tournamentId === null) return match.terms?.drawsAreResults === true
    let format = this.formats.get(match.tournamentId)
    if (format === undefined) {
      format = (await tx.games.formatOf(match.tournamentId))!
      if (this.formats.size >= REMEMBERED_FORMATS) this.formats.clear()
      this.formats.set(match.tournamentId, format)
    }
    return engineOf(format).drawsAreResults
  }

  async issueSession(input: { userId: string; gameId: string; gameKey: string | null; matchId: string }) {
    // Answered once the session row is durable; a refusal writes nothing.
    return this.deps.storage.write(async (tx) => {
      // Every read the checks below need, at once (one statement on SQLite).
      const context = await tx.matches.issueContext(input.gameId, input.matchId, input.userId)
      this.deps.gameKeys.check(input.gameId, input.gameKey, context.keyHash)
      const { match } = context
      if (!match) throw new AppError('not_found', 'No such match')
      if (context.gameId !== input.gameId) throw new AppError('invalid_game_key', 'This match belongs to another game')
      if (context.seat === null) throw new AppError('not_a_participant', 'You are not a player of this match')
      const seat = { participantId: context.seat, slot: context.seat === match.slot1ParticipantId ? (1 as const) : (2 as const) }
      if (match.status !== 'running') throw new AppError('match_not_running', `Match is ${match.status}`)
      // A session that could only ever be refused is not handed out.
      if (context.claimed) throw alreadyClaimed()

      const token = randomToken(32)
      const now = this.deps.clock.now()
      const expiresAt = new Date(now.getTime() + this.deps.gameSessionTtlS * 1000)
      const sessionId = newId('gameSession')
      // The account's bound for this game: the oldest open sessions beyond it are superseded.
      const open = await tx.matches.openSessionIds(input.userId, input.gameId, now)
      await tx.matches.deleteSessions(open.slice(0, Math.max(0, open.length - (MAX_OPEN_GAME_SESSIONS - 1))))
      await tx.matches.insertSession({
        id: sessionId,
        tokenHash: sha256Hex(token),
        gameId: input.gameId,
        matchId: match.id,
        participantId: seat.participantId,
        userId: input.userId,
        claimRound: match.claimRound,
        expiresAt,
        createdAt: now,
      })
      return {
        sessionId,
        token,
        expiresAt: toIso(expiresAt),
        context: { tournamentId: match.tournamentId, matchId: match.id, participantId: seat.participantId, slot: seat.slot },
      }
      // Decides on the match and the seat only; a session issued as the match is decided is refused at its claim.
    }, { rowLocks: true })
  }

  async submitResult(input: { userId: string; gameId: string; gameKey: string | null; sessionToken: string | null; claim: ClaimInput }): Promise<DecisionResponse> {
    const { clock } = this.deps
    // A refusal thrown in here rolls back this claim only: it spends nothing.
    return this.deps.storage.write(async (tx) => {
      const now = clock.now()
      // Every read the checks below need, at once (one statement on SQLite).
      const context = await tx.matches.claimContext(input.gameId, input.userId, input.sessionToken ? sha256Hex(input.sessionToken) : '')
      this.deps.gameKeys.check(input.gameId, input.gameKey, context.keyHash)
      // The game's servers report its results (contract §17): a player's claim is refused before anything is spent.
      if (context.results === 'server') throw new AppError('server_results_only', 'This game\'s results are reported by its game servers; player claims are refused')
      if (!input.sessionToken) throw sessionTokenInvalid()
      // A game session outlives nothing: a user banned (or deleted) since the
      // bearer was checked claims nothing, and the token is not spent.
      assertStandingMayAct(context.standing, now)
      const { session, match } = context
      // Another user's token is refused without being spent: its owner can still use it.
      if (!session || session.userId !== input.userId || session.gameId !== input.gameId) throw sessionTokenInvalid()
      if (session.consumedAt !== null || session.expiresAt.getTime() <= now.getTime()) throw sessionTokenInvalid()

      // Gone: a correction paired the Swiss round again (and deleted its sessions) while this claim waited.
      if (!match) throw sessionTokenInvalid()
      if (match.status !== 'running') throw new AppError('match_not_running', `Match is ${match.status}`)
      if (context.claims.some((c) => c.participantId === session.participantId)) throw alreadyClaimed()
      // Issued before a replay: the players must fetch new sessions (contract §2).
      if (session.claimRound !== match.claimRound) throw sessionTokenInvalid()

      // The token is spent by this call whatever the decision.
      await tx.matches.consumeSession(session.id, now)
      const mine: NewClaim = {
        matchId: match.id,
        claimRound: match.claimRound,
        participantId: session.participantId,
        outcome: input.claim.outcome,
        winnerParticipantId: input.claim.outcome === 'WIN' ? input.claim.winnerParticipantId : null,
        score: input.claim.score ?? null,
        gameSessionId: session.id,
        createdAt: now,
      }
      await insertClaim(tx, mine)

      // The round's claims as read (the match was read after its lock on PostgreSQL) and this one.
      const claims: Claim[] = [...context.claims, mine].map((c) =>
        c.outcome === 'WIN'
          ? { participantId: c.participantId, outcome: 'WIN', winnerParticipantId: c.winnerParticipantId! }
          : { participantId: c.participantId, outcome: 'DRAW' },
      )
      const decision = decide(
        { slot1ParticipantId: match.slot1ParticipantId!, slot2ParticipantId: match.slot2ParticipantId!, drawIsResult: await this.drawIsResult(tx, match) },
        claims,
      )
      return applyDecision(tx, now, match, decision, this.deps)
      // The session and the match are read locked (claims of one match take
      // turns on the match's row); everything the decision writes is that match,
      // its tournament and the next match, each by an UPDATE that locks its row.
    }, { rowLocks: true })
  }

  /**
   * A game server's result (contract §17), its x-arena-signature verified
   * over the exact request (`signed`: the header, the method, the path as
   * sent and the body's bytes) and decided at once: one unit of work that
   * first records the signature (its primary key refuses a second use, on
   * any instance: of two racing, one decides and the other is refused), then
   * reads the server, the game and the match (locked on PostgreSQL, as a
   * claim reads it) and applies the decision as a claim's would be
   * (reason `server_result`). A WIN decides; a DRAW decides where a draw is a
   * result, and is played again elsewhere (`replay`, reason `server_draw`).
   * A disputed match is decided too: the server knows better than the two
   * claims that disagreed (docs/decisions.md).
   */
  async submitServerResult(input: { gameId: string; signature: string | null; method: string; path: string; body: Uint8Array; result: ServerResultInput }): Promise<DecisionResponse> {
    const header = parseSignatureHeader(input.signature)
    if (header === null) throw invalidSignature()
    const now = this.deps.clock.now()
    if (Math.abs(now.getTime() / 1000 - header.timestamp) > SIGNATURE_WINDOW_S) throw invalidSignature(`x-arena-signature timestamp outside ±${SIGNATURE_WINDOW_S} s of the server's clock`)
    const text = signedText(header.timestamp, input.method, input.path, input.body)
    return this.deps.storage.write(async (tx) => {
      const server = await tx.games.gameServer(header.serverId)
      // One answer for every way it fails: nothing tells which server ids exist.
      if (!server || server.disabledAt !== null || server.gameId !== input.gameId || !signatureValid(server.publicKey, text, header.signature)) throw invalidSignature()
      try {
        // Kept past its window (housekeeping deletes it then): a replay inside the window is refused here, one after it by the clock.
        await tx.games.insertServerSignature({ signatureHash: sha256Hex(header.signature), serverId: server.id, expiresAt: new Date((header.timestamp + SIGNATURE_WINDOW_S) * 1000) })
      } catch (error) {
        if (error instanceof UniqueViolationError) throw new AppError('signature_reused', 'This x-arena-signature was accepted already; sign each request anew')
        throw error
      }
      const game = await tx.games.game(input.gameId)
      if (game?.results === 'claims') throw new AppError('server_results_disabled', 'This game takes its players\' claims only; set its results to server or either')
      const match = await tx.matches.byId(input.result.matchId)
      if (!match || match.gameId !== input.gameId) throw new AppError('not_found', 'No such match in this game')
      if (match.status !== 'running' && match.status !== 'disputed') throw new AppError('match_not_running', `Match is ${match.status}`)
      const { result } = input
      if (result.outcome === 'WIN') {
        if (result.winnerParticipantId !== match.slot1ParticipantId && result.winnerParticipantId !== match.slot2ParticipantId) {
          throw new AppError('validation_failed', 'Request failed validation', { details: [{ path: 'body/winnerParticipantId', message: 'Not a participant of this match' }] })
        }
        return applyDecision(tx, now, match, { decision: 'game_advance', reason: 'server_result', outcome: 'WIN', winnerParticipantId: result.winnerParticipantId }, this.deps)
      }
      if (await this.drawIsResult(tx, match)) return applyDecision(tx, now, match, { decision: 'game_advance', reason: 'server_result', outcome: 'DRAW' }, this.deps)
      // A replay opens a new round of claims of a running match; a disputed one waits for an operator.
      if (match.status === 'disputed') throw new AppError('match_not_running', 'Match is disputed: a draw to be played again cannot reopen it; an operator resolves it')
      return applyDecision(tx, now, match, { decision: 'replay', reason: 'server_draw' }, this.deps)
    }, { rowLocks: true })
  }

  /**
   * Every match the user was seated in, whatever its state (the account
   * export): `result` is `won` or `lost` once decided (a bye is won), null
   * before.
   */
  async playedBy(userId: string) {
    const played = await this.deps.storage.read.matches.playedBy(userId)
    return played.map(({ match, tournamentName, gameId, participantId }) => ({
      ...placeOf(match, tournamentName, gameId),
      status: match.status,
      participantId,
      opponentParticipantId: (match.slot1ParticipantId === participantId ? match.slot2ParticipantId : match.slot1ParticipantId) ?? null,
      winnerParticipantId: match.winnerParticipantId,
      result: resultFor(match, participantId),
      decidedAt: match.decidedAt === null ? null : toIso(match.decidedAt),
    }))
  }

  /** The caller's matches that are not decided yet, in tournaments still running. */
  async myMatches(userId: string) {
    const open = await this.deps.storage.read.matches.openMatchesOf(userId)
    return open.map(({ match, tournamentName, gameId, participantId, slot, opponent }) => ({
      ...placeOf(match, tournamentName, gameId),
      status: match.status as 'waiting' | 'running' | 'disputed',
      participantId,
      slot,
      opponent,
    }))
  }
}

async function insertClaim(tx: Transaction, claim: NewClaim): Promise<void> {
  try {
    await tx.matches.insertClaim(claim)
  } catch (error) {
    // The check before it answers this; the primary key is the backstop for a race.
    if (error instanceof UniqueViolationError) throw alreadyClaimed()
    throw error
  }
}

/** A decided match from one player's side: a bye is won, a draw drawn; null before it is decided. */
function resultFor(match: MatchRecord, participantId: string): 'won' | 'lost' | 'drawn' | null {
  if (match.status !== 'decided') return null
  if (match.outcome === 'DRAW') return 'drawn'
  return match.winnerParticipantId === participantId ? 'won' : 'lost'
}

/** Where a match is, as the match views show it. */
function placeOf(match: Pick<MatchRecord, 'id' | 'kind' | 'tournamentId' | 'bracket' | 'round' | 'position'>, tournamentName: string | null, gameId: string) {
  return { matchId: match.id, kind: match.kind, tournamentId: match.tournamentId, tournamentName, gameId, bracket: match.bracket, round: match.round, position: match.position }
}
