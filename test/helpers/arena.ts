// A game with players and a started tournament, built through the real
// operator and player routes.
import { afterAll, expect } from 'bun:test'
import { rmSync } from 'node:fs'
import { createTestApp, postJson, req, tempDir, type Handler, type TestApp } from './app'
import { login, registerUser, type Tokens } from './auth'
import type { Match as MatchView, Tournament as TournamentView } from '../../src/modules/games/model'
import type { DecisionResponse } from '../../src/modules/matches/model'

export const ADMIN_TOKEN = 'test-admin-token-of-at-least-32-chars!!'
export const admin = { 'x-admin-token': ADMIN_TOKEN }

/**
 * Two instances on one database: two apps on one data dir (two SQLite
 * connections to one file, or two PostgreSQL pools to one database), closed
 * with their data dir after the file's tests.
 */
export async function twoInstances(env: Record<string, string> = {}): Promise<{ one: TestApp; two: TestApp }> {
  const dataDir = tempDir()
  const one = await createArenaApp(env, { dataDir })
  const two = await createArenaApp(env, { dataDir })
  afterAll(async () => {
    await one.close()
    await two.close()
    rmSync(dataDir, { recursive: true, force: true })
  })
  return { one, two }
}

export async function createArenaApp(env: Record<string, string> = {}, options: Omit<Parameters<typeof createTestApp>[0] & {}, 'env'> = {}): Promise<TestApp> {
  return await createTestApp({ ...options, env: { ARENA_ADMIN_TOKEN: ADMIN_TOKEN, ...env } })
}

export interface Player {
  userId: string
  username: string
  tokens: Tokens
}

/**
 * A tournament and its matches as the routes answer them: the server's
 * models, so a test reads no field the answer lacks.
 */
export type { Match as MatchView, Tournament as TournamentView } from '../../src/modules/games/model'

export async function createGame(ctx: Handler, name = 'Arena Duel') {
  const res = await ctx.handle(postJson('/api/v1/admin/games', { name }, admin))
  expect(res.status).toBe(201)
  return (await res.json()) as { game: { id: string; name: string }; gameKey: string }
}

export async function players(ctx: Handler, count: number): Promise<Player[]> {
  const out: Player[] = []
  for (let i = 0; i < count; i++) {
    const user = await registerUser(ctx)
    out.push({ userId: user.id, username: user.username, tokens: await login(ctx, user.username) })
  }
  return out
}

/** A tournament of `people` (seeded in that order), created and started by the operator: single elimination unless told. */
export async function startedTournament(ctx: Handler, gameId: string, people: Pick<Player, 'userId'>[], how: { format?: string; options?: Record<string, unknown> } = {}): Promise<TournamentView> {
  const created = await ctx.handle(
    postJson(
      '/api/v1/admin/tournaments',
      { gameId, name: 'Cup', format: how.format ?? 'single_elimination', participants: people.map((p) => p.userId), ...(how.options ? { options: how.options } : {}) },
      admin,
    ),
  )
  expect(created.status).toBe(201)
  const { tournament } = (await created.json()) as { tournament: TournamentView }
  const started = await ctx.handle(postJson(`/api/v1/admin/tournaments/${tournament.id}/start`, {}, admin))
  expect(started.status).toBe(200)
  return ((await started.json()) as { tournament: TournamentView }).tournament
}

export async function tournament(ctx: Handler, id: string): Promise<TournamentView> {
  const res = await ctx.handle(req(`/api/v1/admin/tournaments/${id}`, { headers: admin }))
  expect(res.status).toBe(200)
  return ((await res.json()) as { tournament: TournamentView }).tournament
}

/** The player sitting in a participant slot. */
export function playerOf(t: TournamentView, people: Player[], participantId: string): Player {
  const userId = t.participants.find((p) => p.id === participantId)!.userId
  return people.find((p) => p.userId === userId)!
}

export function openSession(ctx: Handler, gameId: string, gameKey: string, player: Player, matchId: string) {
  return ctx.handle(
    postJson(`/api/v1/game-sdk/${gameId}/sessions`, { matchId }, { authorization: `Bearer ${player.tokens.accessToken}`, 'x-game-key': gameKey }),
  )
}

export function submit(ctx: Handler, gameId: string, gameKey: string, player: Player, token: string | null, claim: unknown) {
  const headers: Record<string, string> = { authorization: `Bearer ${player.tokens.accessToken}`, 'x-game-key': gameKey }
  if (token !== null) headers['x-session-token'] = token
  return ctx.handle(postJson(`/api/v1/game-sdk/${gameId}/results`, claim, headers))
}

/** Opens a session and submits one claim; returns the decision body. */
export async function claim(ctx: Handler, gameId: string, gameKey: string, player: Player, matchId: string, body: unknown) {
  const session = await openSession(ctx, gameId, gameKey, player, matchId)
  expect(session.status).toBe(201)
  const { token } = (await session.json()) as { token: string }
  const res = await submit(ctx, gameId, gameKey, player, token, body)
  expect(res.status).toBe(200)
  return (await res.json()) as DecisionResponse
}

/** Both players of a running match agree that `winner` won (null: a draw, where the format has them). */
export async function playOut(ctx: Handler, gameId: string, gameKey: string, t: TournamentView, people: Player[], match: MatchView, winner: string | null) {
  const a = playerOf(t, people, match.slot1ParticipantId!)
  const b = playerOf(t, people, match.slot2ParticipantId!)
  const body = winner === null ? { outcome: 'DRAW' } : { outcome: 'WIN', winnerParticipantId: winner }
  const first = await claim(ctx, gameId, gameKey, a, match.id, body)
  expect(first.decision).toBe('pending')
  return claim(ctx, gameId, gameKey, b, match.id, body)
}

/**
 * A game whose players have rated matches: a single elimination of `count`
 * players (4 by default) played out, the better seed winning each match.
 */
export async function playedCup(ctx: Handler, gameName: string, count = 4) {
  const { game, gameKey } = await createGame(ctx, gameName)
  const people = await players(ctx, count)
  const started = await startedTournament(ctx, game.id, people)
  for (;;) {
    const now = await tournament(ctx, started.id)
    const running = now.matches.filter((m) => m.status === 'running')
    if (running.length === 0) return { game, gameKey, people, tournament: now }
    for (const match of running) {
      const seedOf = (pid: string) => now.participants.find((p) => p.id === pid)!.seed
      const winner = seedOf(match.slot1ParticipantId!) < seedOf(match.slot2ParticipantId!) ? match.slot1ParticipantId! : match.slot2ParticipantId!
      await playOut(ctx, game.id, gameKey, now, people, match, winner)
    }
  }
}
