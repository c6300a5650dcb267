// Matchmaking (`arena.queues`, `arena.matches`, `arena.challenges`): join a
// game's queue and be paired with a player of similar rating, confirm the
// match found before its ready check ends, or challenge a named player, with
// an optional stake held in escrow from both until the match is settled.
// Refusals are ApiError with the server's code: 409 `ticket_open` (already
// waiting in a queue of the game), `ready_check_over`, `match_not_waiting`,
// `challenge_closed`, `challenge_unfunded` (the challenger no longer has the
// stake: the challenge is cancelled); 422 `insufficient_funds` (the stake is
// not in the wallet); 403 `forbidden` (answering a challenge that is not
// yours to answer); 404 `not_found` (an unknown game, queue, match or
// challenge, or one of other players).
import type { Auth } from './auth.js'
import type { CreateChallengeBody } from './requests.js'
import { readJson } from './transport.js'
import type { Call } from './transport.js'
import type { Challenge, Evidence, EvidenceType, MatchView, Queue, Ticket } from './types.js'

export interface QueuesClient {
  /** The game's open queues. */
  list(gameId: string): Promise<Queue[]>
  /** Joins the queue: the new open ticket. A staked queue needs the stake in the wallet (it is taken when a match is found). */
  join(gameId: string, name: string): Promise<Ticket>
  /** The signed-in player's open ticket in the queue, with its window now; 404 when there is none (matched, left or cancelled: see `matches` and the events). */
  current(gameId: string, name: string): Promise<Ticket>
  /** Leaves the queue: the ticket, closed (`left`). */
  leave(gameId: string, name: string): Promise<Ticket>
}

export interface MatchesClient {
  /** A match the signed-in player plays in: its kind, stake, players (with the participant ids claims name), status and decision. */
  get(matchId: string): Promise<MatchView>
  /** Confirms a match a queue found (`match.found`) before its `readyBy`; once both players have, it runs (`match.ready`). Again answers the same. */
  ready(matchId: string): Promise<MatchView>
  /**
   * Attaches a file to a disputed match the signed-in player plays in, for
   * the operator who resolves it: at most 1 MiB, its bytes of `type`; at most
   * 5 per player and match, 30 per account a day. Refusals: 409
   * `match_not_disputed`, `evidence_limit`; 403 `not_a_participant`; 413
   * `payload_too_large`; 415 `unsupported_media_type`; 422
   * `evidence_type_mismatch` (the bytes are not `type`); 429 `rate_limited`.
   */
  attachEvidence(matchId: string, bytes: Uint8Array, type: EvidenceType): Promise<Evidence>
}

export interface ChallengeOptions {
  /** The player challenged: a username or a user id. */
  opponent: string
  /** What each player puts in (a decimal string); absent: no stake. */
  stake?: string
  /** Seconds the challenge stays open, 30 to 86 400; default 300. */
  expiresInS?: number
}

export interface ChallengesClient {
  /** Challenges a player in the game; with a stake, the challenger must have it now (it is taken when the challenge is accepted). */
  create(gameId: string, options: ChallengeOptions): Promise<Challenge>
  /** A challenge the signed-in player made or received. */
  get(id: string): Promise<Challenge>
  /** The signed-in player's challenges, made and received, newest first (at most 100); `status: 'open'` for open ones only. */
  mine(options?: { status?: 'open' | 'all' }): Promise<Challenge[]>
  /** Accepts a challenge received: the match is made at once and runs (`challenge.matchId`), both stakes in escrow. */
  accept(id: string): Promise<Challenge>
  /** Declines a challenge received. */
  decline(id: string): Promise<Challenge>
  /** Withdraws a challenge made, while it is open. */
  cancel(id: string): Promise<Challenge>
}

type Send = <T>(call: Call) => Promise<T>

function sender(auth: Auth): Send {
  return async <T>(call: Call) => readJson<T>(await auth.send(call))
}

const gamePath = (gameId: string) => `/api/v1/games/${encodeURIComponent(gameId)}`
const ticketPath = (gameId: string, name: string) => `${gamePath(gameId)}/queues/${encodeURIComponent(name)}/tickets`

export function queuesClient(auth: Auth): QueuesClient {
  const send = sender(auth)
  const ticket = async (call: Call) => (await send<{ ticket: Ticket }>(call)).ticket
  return {
    list: async (gameId) => (await send<{ queues: Queue[] }>({ method: 'GET', path: `${gamePath(gameId)}/queues` })).queues,
    join: (gameId, name) => ticket({ method: 'POST', path: ticketPath(gameId, name) }),
    current: (gameId, name) => ticket({ method: 'GET', path: `${ticketPath(gameId, name)}/current` }),
    leave: (gameId, name) => ticket({ method: 'DELETE', path: `${ticketPath(gameId, name)}/current` }),
  }
}

export function matchesClient(auth: Auth): MatchesClient {
  const send = sender(auth)
  const path = (id: string) => `/api/v1/matches/${encodeURIComponent(id)}`
  return {
    get: async (id) => (await send<{ match: MatchView }>({ method: 'GET', path: path(id) })).match,
    ready: async (id) => (await send<{ match: MatchView }>({ method: 'POST', path: `${path(id)}/ready` })).match,
    attachEvidence: async (id, bytes, type) => (await send<{ evidence: Evidence }>({ method: 'POST', path: `${path(id)}/evidence`, raw: { bytes, contentType: type } })).evidence,
  }
}

export function challengesClient(auth: Auth): ChallengesClient {
  const send = sender(auth)
  const challenge = async (call: Call) => (await send<{ challenge: Challenge }>(call)).challenge
  const path = (id: string) => `/api/v1/challenges/${encodeURIComponent(id)}`
  return {
    create: (gameId, options) => {
      const body: CreateChallengeBody = { opponent: options.opponent, ...(options.stake !== undefined ? { stake: options.stake } : {}), ...(options.expiresInS !== undefined ? { expiresInS: options.expiresInS } : {}) }
      return challenge({ method: 'POST', path: `${gamePath(gameId)}/challenges`, body })
    },
    get: (id) => challenge({ method: 'GET', path: path(id) }),
    mine: async (options = {}) => (await send<{ challenges: Challenge[] }>({ method: 'GET', path: '/api/v1/me/challenges', query: { status: options.status } })).challenges,
    accept: (id) => challenge({ method: 'POST', path: `${path(id)}/accept` }),
    decline: (id) => challenge({ method: 'POST', path: `${path(id)}/decline` }),
    cancel: (id) => challenge({ method: 'POST', path: `${path(id)}/cancel` }),
  }
}
