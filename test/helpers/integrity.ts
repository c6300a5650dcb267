// Integrity signals and held payouts through HTTP (docs/integrity.md): a
// raked game, a staked win between two players, the holds an operator lists
// and decides, the ledger references written. Shared by test/integrity/*.
import { expect } from 'bun:test'
import { postJson, req, type Handler, type TestApp } from './app'
import { admin, createGame, type Player } from './arena'
import { adminPatch, agree, answerChallenge, challenge, matchOf, rawSqlOf, type Challenge } from './matchmaking'
import type { PayoutHold } from '../../src/modules/integrity/model'

/** A game whose challenges take a 10 % rake. */
export async function rakedGame(ctx: Handler, name: string) {
  const made = await createGame(ctx, name)
  expect((await adminPatch(ctx, `/api/v1/admin/games/${made.game.id}`, { challengeRake: '0.1' })).status).toBe(200)
  return made
}

/** `from` challenges `to` for `stake` and `to` accepts: the running match. */
export async function stakedMatch(ctx: Handler, game: { id: string }, from: Player, to: Player, stake: string) {
  const res = await challenge(ctx, game.id, from, { opponent: to.username, stake })
  expect(res.status).toBe(201)
  const { challenge: made } = (await res.json()) as { challenge: Challenge }
  const accepted = await answerChallenge(ctx, made.id, 'accept', to)
  expect(accepted.status).toBe(200)
  const matchId = ((await accepted.json()) as { challenge: Challenge }).challenge.matchId!
  return matchOf(ctx, matchId, from)
}

/** `winner` challenges `loser` for `stake`, `loser` accepts, both claim `winner` won: the match id. */
export async function stakedWin(ctx: Handler, game: { id: string }, gameKey: string, winner: Player, loser: Player, stake: string) {
  const match = await stakedMatch(ctx, game, winner, loser, stake)
  const decision = await agree(ctx, game.id, gameKey, match, [winner, loser], winner)
  expect(decision.decision).toBe('game_advance')
  return match.id
}

export async function holdsOf(ctx: Handler, status = 'held', headers: Record<string, string> = admin): Promise<PayoutHold[]> {
  const res = await ctx.handle(req(`/api/v1/admin/payouts?status=${status}&limit=100`, { headers }))
  expect(res.status).toBe(200)
  return ((await res.json()) as { payouts: PayoutHold[] }).payouts
}

export async function holdOfMatch(ctx: Handler, matchId: string): Promise<PayoutHold | undefined> {
  for (const status of ['held', 'released', 'voided']) {
    const found = (await holdsOf(ctx, status)).find((h) => h.matchId === matchId)
    if (found) return found
  }
  return undefined
}

export function decide(ctx: Handler, id: string, how: 'release' | 'void', headers: Record<string, string> = admin, reason = 'reviewed the replays') {
  return ctx.handle(postJson(`/api/v1/admin/payouts/${id}/${how}`, { reason }, headers))
}

/** The ledger references written under `prefix` (one row each). */
export async function references(ctx: TestApp, prefix: string): Promise<string[]> {
  const rows = await rawSqlOf(ctx)(`SELECT reference FROM ledger_transactions WHERE reference LIKE '${prefix}%' ORDER BY reference`)
  return rows.map((r) => String(r.reference))
}

