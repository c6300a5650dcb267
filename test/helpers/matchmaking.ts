// Matchmaking through HTTP (contract §16): queues, tickets, the matcher, the
// ready check, challenges, and the money they move. Shared by the tests in
// test/matchmaking.
import { expect } from 'bun:test'
import { checkLedger } from '../../src/modules/wallet/ledger'
import type { Challenge, MatchView, Queue, Ticket } from '../../src/modules/matchmaking/model'
import type { DecisionResponse } from '../../src/modules/matches/model'
import { postJson, req, type Handler, type TestApp } from './app'
import { admin, claim, type Player } from './arena'
import { creditSurely } from './accounts'
import { eventsOf } from './account'

export type { Challenge, MatchView, Queue, Ticket }

const bearer = (p: Player) => ({ authorization: `Bearer ${p.tokens.accessToken}` })

/** A queue of the game; the settings the test does not give are a wide window, a 30 s ready check, unrated, unstaked. */
export async function createQueue(ctx: Handler, gameId: string, settings: Record<string, unknown> = {}): Promise<Queue> {
  const body = { name: 'ranked', rated: false, window: { initial: 100, widenPerSecond: 10, max: 400 }, readyCheckS: 30, ...settings }
  const res = await ctx.handle(postJson(`/api/v1/admin/games/${gameId}/queues`, body, admin))
  expect(res.status).toBe(201)
  return ((await res.json()) as { queue: Queue }).queue
}

/** Joins the queue; the raw answer (201 with the ticket, or a refusal). */
export function joinQueue(ctx: Handler, gameId: string, queue: string, player: Player): Promise<Response> {
  return ctx.handle(postJson(`/api/v1/games/${gameId}/queues/${queue}/tickets`, {}, bearer(player)))
}

export async function joined(ctx: Handler, gameId: string, queue: string, player: Player): Promise<Ticket> {
  const res = await joinQueue(ctx, gameId, queue, player)
  expect(res.status).toBe(201)
  return ((await res.json()) as { ticket: Ticket }).ticket
}

export function leaveQueue(ctx: Handler, gameId: string, queue: string, player: Player): Promise<Response> {
  return ctx.handle(req(`/api/v1/games/${gameId}/queues/${queue}/tickets/current`, { method: 'DELETE', headers: bearer(player) }))
}

export function ready(ctx: Handler, matchId: string, player: Player): Promise<Response> {
  return ctx.handle(postJson(`/api/v1/matches/${matchId}/ready`, {}, bearer(player)))
}

export async function matchOf(ctx: Handler, matchId: string, player?: Player): Promise<MatchView> {
  const res = await ctx.handle(req(player ? `/api/v1/matches/${matchId}` : `/api/v1/admin/matches/${matchId}`, { headers: player ? bearer(player) : admin }))
  expect(res.status).toBe(200)
  return ((await res.json()) as { match: MatchView }).match
}

/** The wallet balance of a player, as they see it. */
export async function balanceOf(ctx: Handler, player: Player): Promise<string> {
  const res = await ctx.handle(req('/api/v1/wallet', { headers: bearer(player) }))
  expect(res.status).toBe(200)
  return ((await res.json()) as { balance: string }).balance
}

/** Credits each player `amount` (an operator credit). */
export async function fund(ctx: Handler, people: readonly Player[], amount: string): Promise<void> {
  for (const p of people) expect(await creditSurely(ctx, p.userId, `fund-${p.userId}-${crypto.randomUUID()}`, amount)).toBe(200)
}

/** The seat of `player` in the match (its participant id). */
export function seatOf(match: MatchView, player: Player): string {
  return match.players.find((p) => p.userId === player.userId)!.participantId
}

/** Both players claim the same result (a winner, or null: a draw); the second claim's decision. */
export async function agree(ctx: Handler, gameId: string, gameKey: string, match: MatchView, people: readonly Player[], winner: Player | null): Promise<DecisionResponse> {
  const [a, b] = match.players.map((seat) => people.find((p) => p.userId === seat.userId)!)
  const body = winner === null ? { outcome: 'DRAW' } : { outcome: 'WIN', winnerParticipantId: seatOf(match, winner) }
  expect((await claim(ctx, gameId, gameKey, a!, match.id, body)).decision).toBe('pending')
  return claim(ctx, gameId, gameKey, b!, match.id, body)
}

/** `arena ledger check` holds: every settled match's escrow is zero, every balance its postings' sum. */
export async function expectLedgerSound(ctx: TestApp): Promise<void> {
  const report = await checkLedger(ctx.storage.read.wallet)
  expect(report.problems).toEqual([])
  expect(report.ok).toBe(true)
}

export async function challenge(ctx: Handler, gameId: string, from: Player, body: Record<string, unknown>): Promise<Response> {
  return ctx.handle(postJson(`/api/v1/games/${gameId}/challenges`, body, bearer(from)))
}

export function answerChallenge(ctx: Handler, id: string, how: 'accept' | 'decline' | 'cancel', player: Player): Promise<Response> {
  return ctx.handle(postJson(`/api/v1/challenges/${id}/${how}`, {}, bearer(player)))
}

/** An operator's PATCH of `path` (a game's or a queue's settings): the raw answer. */
export function adminPatch(ctx: Handler, path: string, body: unknown): Promise<Response> {
  return ctx.handle(req(path, { method: 'PATCH', headers: { 'content-type': 'application/json', ...admin }, body: JSON.stringify(body) }))
}

/** An operator's DELETE of `path` (closing a queue): the raw answer. */
export function adminDelete(ctx: Handler, path: string): Promise<Response> {
  return ctx.handle(req(path, { method: 'DELETE', headers: admin }))
}

/** The error code of a refusal. */
export async function errorCode(res: Response): Promise<string> {
  return ((await res.json()) as { error: { code: string } }).error.code
}

/** Both players join the queue and one matcher tick pairs them: the match found (waiting for the ready check), or running once both confirmed it (`readied`). */
export async function pairedMatch(ctx: TestApp, gameId: string, queue: string, pair: readonly [Player, Player], readied = false): Promise<MatchView> {
  for (const p of pair) await joined(ctx, gameId, queue, p)
  expect(await ctx.services.matchmaking.matchTick()).toBe(1)
  const found = (await eventsOf(ctx, pair[0].userId, 'match.found')).at(-1) as { data: { matchId: string } }
  if (readied) for (const p of pair) expect((await ready(ctx, found.data.matchId, p)).status).toBe(200)
  return matchOf(ctx, found.data.matchId)
}
