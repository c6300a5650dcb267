// Challenges (contract §16): a player names an opponent (and a stake); the
// opponent accepts or declines before it expires. Acceptance makes the match
// at once, running, with no ready check: both stakes go into its escrow in
// the acceptance's unit of work. The rake is the game's `challengeRake`. A
// challenge is not rated (ratings come from tournaments and rated queues).
//
// Bounds: a player has at most MAX_OPEN_CHALLENGES open at once; a challenge
// lives at most a day; closed ones are pruned with the event retention.
import type { Storage, Transaction } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { toIso } from '../../shared/clock'
import { AppError } from '../../shared/errors'
import { newId } from '../../shared/ids'
import { userIdByRef } from '../auth/user-ref'
import type { Challenge, CreateChallengeBody } from './model'
import { createStandaloneMatch } from './service'
import { assertCanPay, canPay, formatStake, parseStake } from './stakes'
import type { ChallengeRecord } from './store'

export const MAX_OPEN_CHALLENGES = 20
export const DEFAULT_CHALLENGE_EXPIRY_S = 300
/** The most challenges a player's list shows. */
export const CHALLENGES_LISTED = 100

export interface ChallengesServiceDeps {
  storage: Storage
  clock: Clock
}

const noSuchChallenge = () => new AppError('not_found', 'No such challenge')

export class ChallengesService {
  constructor(private readonly deps: ChallengesServiceDeps) {}

  /** Challenges `opponent` (a username or a user id) in the game. 422 insufficient_funds when the challenger cannot pay the stake now. */
  async create(userId: string, gameId: string, body: CreateChallengeBody): Promise<{ challenge: Challenge }> {
    const stake = body.stake == null ? null : parseStake(body.stake, 'body/stake')
    const opponentId = await userIdByRef(this.deps.storage, body.opponent)
    if (opponentId === null) throw new AppError('not_found', 'No such opponent')
    if (opponentId === userId) throw new AppError('validation_failed', 'Request failed validation', { details: [{ path: 'body/opponent', message: 'You cannot challenge yourself' }] })
    return this.deps.storage.write(async (tx) => {
      if (!(await tx.games.gameExists(gameId))) throw new AppError('not_found', 'No such game')
      const opponent = await tx.auth.userById(opponentId)
      if (!opponent || opponent.deletedAt !== null) throw new AppError('not_found', 'No such opponent')
      const now = this.deps.clock.now()
      // Expired ones are not open, swept or not.
      if ((await tx.matchmaking.countOpenChallenges(userId, now)) >= MAX_OPEN_CHALLENGES) {
        throw new AppError('conflict', `A player has at most ${MAX_OPEN_CHALLENGES} challenges open at once`)
      }
      if (stake !== null) await assertCanPay(tx, userId, stake)
      const challenge: ChallengeRecord = {
        id: newId('challenge'),
        gameId,
        challengerId: userId,
        opponentId,
        stake: stake === null ? null : stake.toString(),
        status: 'open',
        expiresAt: new Date(now.getTime() + (body.expiresInS ?? DEFAULT_CHALLENGE_EXPIRY_S) * 1000),
        matchId: null,
        createdAt: now,
        closedAt: null,
      }
      await tx.matchmaking.insertChallenge(challenge)
      const view = await challengeView(tx, challenge, now)
      await tx.events.append(
        {
          userId: opponentId,
          topic: 'status',
          type: 'challenge.received',
          data: { challengeId: challenge.id, gameId, challengerId: userId, challengerUsername: view.challenger.username, stake: view.stake, expiresAt: view.expiresAt },
        },
        now,
      )
      return { challenge: view }
    })
  }

  /**
   * The opponent accepts: the match is made at once, running (`match.ready`
   * to both), both stakes in its escrow. 422 insufficient_funds when the
   * opponent cannot pay; 409 challenge_unfunded when the challenger no longer
   * can (the challenge is then cancelled, both told).
   */
  async accept(challengeId: string, userId: string): Promise<{ challenge: Challenge }> {
    const unfunded = await this.deps.storage.write(async (tx) => {
      const { challenge, now } = await this.openFor(tx, challengeId, userId, 'opponent')
      const stake = challenge.stake === null ? null : BigInt(challenge.stake)
      if (stake !== null) {
        await assertCanPay(tx, userId, stake)
        if (!(await canPay(tx, challenge.challengerId, stake))) {
          await this.close(tx, challenge, 'cancelled', now)
          return true
        }
      }
      const game = (await tx.games.game(challenge.gameId))!
      const match = await createStandaloneMatch(tx, now, {
        gameId: challenge.gameId,
        kind: 'challenge',
        userIds: [challenge.challengerId, challenge.opponentId],
        stake,
        terms: { challengeId: challenge.id, rake: game.challengeRake, rated: false, drawsAreResults: false },
        readyBy: null,
      })
      await tx.matchmaking.closeChallenge(challenge.id, 'accepted', now, match.id)
      await tx.events.append({ userId: challenge.challengerId, topic: 'status', type: 'challenge.accepted', data: { challengeId: challenge.id, gameId: challenge.gameId, matchId: match.id } }, now)
      return { challenge: await challengeView(tx, { ...challenge, status: 'accepted', matchId: match.id, closedAt: now }, now) }
    })
    // The cancellation commits; the refusal is answered after it.
    if (unfunded === true) throw new AppError('challenge_unfunded', 'The challenger no longer holds the stake: the challenge is cancelled')
    return unfunded
  }

  /** The opponent declines (the challenger is told). */
  async decline(challengeId: string, userId: string): Promise<{ challenge: Challenge }> {
    return this.deps.storage.write(async (tx) => {
      const { challenge, now } = await this.openFor(tx, challengeId, userId, 'opponent')
      await this.close(tx, challenge, 'declined', now)
      return { challenge: await challengeView(tx, { ...challenge, status: 'declined', closedAt: now }, now) }
    })
  }

  /** The challenger withdraws it (the opponent is told). */
  async cancel(challengeId: string, userId: string): Promise<{ challenge: Challenge }> {
    return this.deps.storage.write(async (tx) => {
      const { challenge, now } = await this.openFor(tx, challengeId, userId, 'challenger')
      await this.close(tx, challenge, 'cancelled', now, 'withdrawn')
      return { challenge: await challengeView(tx, { ...challenge, status: 'cancelled', closedAt: now }, now) }
    })
  }

  /** One challenge, to either of its two players (404 to anyone else). */
  async get(challengeId: string, userId: string): Promise<{ challenge: Challenge }> {
    const read = this.deps.storage.read
    const challenge = await read.matchmaking.challengeById(challengeId)
    if (!challenge || (challenge.challengerId !== userId && challenge.opponentId !== userId)) throw noSuchChallenge()
    return { challenge: await challengeView(read, challenge, this.deps.clock.now()) }
  }

  /** The caller's challenges, made and received, newest first (open ones only with `openOnly`). */
  async mine(userId: string, openOnly: boolean): Promise<{ challenges: Challenge[] }> {
    const read = this.deps.storage.read
    const now = this.deps.clock.now()
    const rows = await read.matchmaking.challengesOf(userId, openOnly, CHALLENGES_LISTED)
    const views = await Promise.all(rows.map((c) => challengeView(read, c, now)))
    return { challenges: openOnly ? views.filter((c) => c.status === 'open') : views }
  }

  /** Open challenges of every game, oldest first (the console). */
  async open(limit = 200): Promise<Challenge[]> {
    const read = this.deps.storage.read
    const now = this.deps.clock.now()
    return Promise.all((await read.matchmaking.openChallenges(limit)).map((c) => challengeView(read, c, now)))
  }

  /** Marks open challenges past their expiry `expired` (both players told); answers how many. The expiry holds without it (an expired challenge is refused and shown expired). */
  async expireDue(limit = 500): Promise<number> {
    // A read first: the matcher's loop asks every second, and mostly nothing is due.
    if ((await this.deps.storage.read.matchmaking.expiredChallenges(this.deps.clock.now(), 1)).length === 0) return 0
    return this.deps.storage.write(async (tx) => {
      const now = this.deps.clock.now()
      const due = await tx.matchmaking.expiredChallenges(now, limit)
      // Each closes only if still open (an acceptance may have won the race).
      for (const challenge of due) await this.close(tx, challenge, 'expired', now)
      return due.length
    })
  }

  /** The open challenge `challengeId`, for its `side` only (404 otherwise); 409 challenge_closed once closed or expired. */
  private async openFor(tx: Transaction, challengeId: string, userId: string, side: 'opponent' | 'challenger'): Promise<{ challenge: ChallengeRecord; now: Date }> {
    const challenge = await tx.matchmaking.challengeById(challengeId)
    const mine = challenge && (side === 'opponent' ? challenge.opponentId : challenge.challengerId) === userId
    if (!challenge || !mine) {
      // The other side sees it, but may not do this to it.
      if (challenge && (challenge.challengerId === userId || challenge.opponentId === userId)) throw new AppError('forbidden', `Only the ${side} may do this`)
      throw noSuchChallenge()
    }
    const now = this.deps.clock.now()
    if (challenge.status !== 'open') throw new AppError('challenge_closed', `The challenge is ${challenge.status}`)
    if (challenge.expiresAt.getTime() <= now.getTime()) {
      throw new AppError('challenge_closed', 'The challenge is expired')
    }
    return { challenge, now }
  }

  /** Closes an open challenge without a match and tells the other side (both, for an expiry or a cancellation for want of funds). */
  private async close(tx: Transaction, challenge: ChallengeRecord, status: 'declined' | 'expired' | 'cancelled', now: Date, why: 'withdrawn' | 'challenger_unfunded' = 'challenger_unfunded'): Promise<void> {
    if (!(await tx.matchmaking.closeChallenge(challenge.id, status, now))) return
    const data = { challengeId: challenge.id, gameId: challenge.gameId }
    if (status === 'declined') {
      await tx.events.append({ userId: challenge.challengerId, topic: 'status', type: 'challenge.declined', data }, now)
    } else if (status === 'expired') {
      for (const userId of [challenge.challengerId, challenge.opponentId]) await tx.events.append({ userId, topic: 'status', type: 'challenge.expired', data }, now)
    } else {
      const told = why === 'withdrawn' ? [challenge.opponentId] : [challenge.challengerId, challenge.opponentId]
      for (const userId of told) await tx.events.append({ userId, topic: 'status', type: 'challenge.cancelled', data: { ...data, reason: why } }, now)
    }
  }
}

/** A challenge as the API shows it: an open one past its expiry reads `expired`. */
async function challengeView(stores: Pick<Transaction, 'auth'>, challenge: ChallengeRecord, now: Date): Promise<Challenge> {
  const challenger = await stores.auth.userById(challenge.challengerId)
  const opponent = await stores.auth.userById(challenge.opponentId)
  const expired = challenge.status === 'open' && challenge.expiresAt.getTime() <= now.getTime()
  return {
    id: challenge.id,
    gameId: challenge.gameId,
    challenger: { userId: challenge.challengerId, username: challenger?.username ?? '' },
    opponent: { userId: challenge.opponentId, username: opponent?.username ?? '' },
    stake: challenge.stake === null ? null : formatStake(challenge.stake),
    status: expired ? 'expired' : challenge.status,
    expiresAt: toIso(challenge.expiresAt),
    matchId: challenge.matchId,
    createdAt: toIso(challenge.createdAt),
    closedAt: challenge.closedAt === null ? (expired ? toIso(challenge.expiresAt) : null) : toIso(challenge.closedAt),
  }
}
