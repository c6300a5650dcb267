// The claim and session-issue paths run statements prepared once per
// connection (src/db/sqlite/stores/matches.ts) instead of query-builder
// chains. What that must not change: they run inside the group committer's
// transaction (so a refused item writes nothing), the rows they write read
// back through Drizzle as Drizzle's own writes do (epoch-ms integers, JSON
// text), and the events they append still wake waiting polls after commit.
import { afterAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { gameSessions, jobs, matchClaims, matches, outboxEvents, participants, tournaments } from '../../src/db/schema'
import type { OutboxEvent } from '../../src/modules/events/store'
import { req } from '../helpers/app'
import { testOnEngine } from '../helpers/engine'
import { claim, createArenaApp, createGame, openSession, players, playerOf, startedTournament, submit, type Player } from '../helpers/arena'

const ctx = await createArenaApp()
afterAll(() => ctx.close())

const { game, gameKey } = await createGame(ctx)

async function twoPlayerCup() {
  const people = await players(ctx, 2)
  const t = await startedTournament(ctx, game.id, people)
  const final = t.matches[0]!
  return { t, final, p1: playerOf(t, people, final.slot1ParticipantId!), p2: playerOf(t, people, final.slot2ParticipantId!) }
}

describe('prepared statements on the claim path', () => {
  // The first two look at SQLite itself (its transaction, its storage classes); the wake-up holds on both engines.
  testOnEngine('sqlite', 'run inside the group committer\'s transaction: a thrown item writes nothing, a committed one is durable', async () => {
    const sqlite = ctx.db.sqlite
    // A type of its own, so that the rows it finds are this test's: not a catalogued event, hence the cast.
    const event = (marker: string) => ({ userId: null, topic: 'status', type: 'test.prepared', data: { marker } }) as unknown as OutboxEvent
    let inTransaction = false
    const kept = ctx.services.storage.write((tx) => {
      inTransaction = sqlite.inTransaction
      return tx.events.append(event('kept'), ctx.clock.now())
    })
    const dropped = ctx.services.storage.write(async (tx) => {
      await tx.events.append(event('dropped'), ctx.clock.now())
      throw new Error('refused')
    })
    const keptId = await kept
    await expect(dropped).rejects.toThrow('refused')
    expect(inTransaction).toBe(true)
    const rows = ctx.db.db.select().from(outboxEvents).where(eq(outboxEvents.type, 'test.prepared')).all()
    expect(rows.map((r) => [r.id, r.data])).toEqual([[keptId, { marker: 'kept' }]])
  })

  testOnEngine('sqlite', 'rows read back through Drizzle as Drizzle writes them: epoch-ms times, JSON text', async () => {
    const { t, final, p1, p2 } = await twoPlayerCup()
    const winner = final.slot2ParticipantId!
    const score = { p1: 1, p2: 3, rounds: [{ w: 'p2' }] }
    expect((await claim(ctx, game.id, gameKey, p1, final.id, { outcome: 'WIN', winnerParticipantId: winner, score })).decision).toBe('pending')
    ctx.clock.advance(5000)
    const decidedAt = ctx.clock.now()
    expect((await claim(ctx, game.id, gameKey, p2, final.id, { outcome: 'WIN', winnerParticipantId: winner })).decision).toBe('game_advance_pending_finalization')

    const raw = ctx.db.sqlite
    const claimRows = raw.query('SELECT score, created_at FROM match_claims WHERE match_id = ? ORDER BY created_at').all(final.id) as { score: string | null; created_at: number }[]
    expect(claimRows).toEqual([
      { score: JSON.stringify(score), created_at: decidedAt.getTime() - 5000 },
      { score: null, created_at: decidedAt.getTime() },
    ])
    const viaDrizzle = ctx.db.db.select().from(matchClaims).where(eq(matchClaims.matchId, final.id)).all()
    expect(viaDrizzle.map((c) => c.score)).toContainEqual(score)
    expect(viaDrizzle.every((c) => c.createdAt instanceof Date)).toBe(true)

    const sessions = ctx.db.db.select().from(gameSessions).where(eq(gameSessions.matchId, final.id)).all()
    expect(sessions).toHaveLength(2)
    for (const s of sessions) {
      expect(s.consumedAt).toBeInstanceOf(Date)
      expect(s.expiresAt.getTime() - s.createdAt.getTime()).toBe(ctx.config.gameSessionTtlS * 1000)
    }
    expect(ctx.db.db.select().from(matches).where(eq(matches.id, final.id)).get()!.decidedAt).toEqual(decidedAt)
    // The decision path's compiled reads map rows as Drizzle does: the tournament (times, JSON options), its participants, its bracket.
    const stores = ctx.services.storage.read.games
    expect(await stores.tournament(t.id)).toEqual(ctx.db.db.select().from(tournaments).where(eq(tournaments.id, t.id)).get()!)
    expect(await stores.participantsOf(t.id)).toEqual(
      ctx.db.db.select().from(participants).where(eq(participants.tournamentId, t.id)).all().map(({ tournamentId: _, ...p }) => p).sort((a, b) => a.seed - b.seed),
    )

    const job = ctx.db.db.select().from(jobs).all().find((j) => (j.payload as { tournamentId?: string }).tournamentId === t.id)!
    expect(job).toMatchObject({ kind: 'finalize_tournament', payload: { tournamentId: t.id }, attempts: 0, runAfter: decidedAt, createdAt: decidedAt, updatedAt: decidedAt })
    expect(raw.query('SELECT typeof(payload) AS p, typeof(run_after) AS r FROM jobs WHERE id = ?').get(job.id)).toEqual({ p: 'text', r: 'integer' })

    const events = ctx.db.db.select().from(outboxEvents).where(eq(outboxEvents.userId, p1.userId)).all().filter((e) => e.topic === 'status')
    expect(events.map((e) => [e.type, e.data, e.createdAt.getTime()])).toEqual([
      ['tournament.started', { tournamentId: t.id }, events[0]!.createdAt.getTime()],
      ['match.ready', { tournamentId: t.id, matchId: final.id, round: 1 }, events[1]!.createdAt.getTime()],
      ['match.decided', { tournamentId: t.id, matchId: final.id, winnerParticipantId: winner, outcome: 'WIN' }, decidedAt.getTime()],
      ['tournament.finalizing', { tournamentId: t.id, winnerParticipantId: winner }, decidedAt.getTime()],
      // Rated in the decision's unit of work, once the bracket has moved (ratings/rate.ts).
      ['rating.updated', expect.objectContaining({ gameId: game.id, matchId: final.id, reason: 'match' }), decidedAt.getTime()],
    ])
  })

  test('a waiting poll wakes when the opponent\'s claim decides the match', async () => {
    const { final, p1, p2 } = await twoPlayerCup()
    const poll = async (p: Player, query: string) => {
      const res = await ctx.handle(req(`/api/v1/events${query}`, { headers: { authorization: `Bearer ${p.tokens.accessToken}` } }))
      return (await res.json()) as { events: { type: string }[]; cursor: string }
    }
    const token1 = ((await (await openSession(ctx, game.id, gameKey, p1, final.id)).json()) as { token: string }).token
    const token2 = ((await (await openSession(ctx, game.id, gameKey, p2, final.id)).json()) as { token: string }).token
    expect((await submit(ctx, game.id, gameKey, p1, token1, { outcome: 'DRAW' })).status).toBe(200)
    const now = await poll(p1, '')
    const waiting = poll(p1, `?after=${now.cursor}&wait=10`)
    await Bun.sleep(50)
    const claimed = performance.now()
    expect((await submit(ctx, game.id, gameKey, p2, token2, { outcome: 'DRAW' })).status).toBe(200)
    const body = await waiting
    expect(body.events.map((e) => e.type)).toEqual(['match.replay'])
    expect(performance.now() - claimed).toBeLessThan(500)
  })
})
