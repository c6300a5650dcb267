// Claims and session issues go through the group committer: a burst of them
// shares transactions, yet every decision is the one a serial run would make,
// and a refused claim in a batch answers its own 4xx and writes nothing while
// the others of its batch succeed.
import { afterAll, describe, expect, test } from 'bun:test'
import { and, eq, inArray } from 'drizzle-orm'
import { onEngine } from '../helpers/app'
import { createArenaApp, createGame, openSession, playerOf, startedTournament, submit, tournament, type MatchView, type Player } from '../helpers/arena'
import { login, registerUser } from '../helpers/auth'

const ctx = await createArenaApp()
afterAll(() => ctx.close())
const { db, tables: { gameSessions, matchClaims, matches, outboxEvents } } = ctx.peek

/** The group committer's counters: SQLite batches units of work; PostgreSQL runs each in a transaction of its own. */
const commitStats = () => (onEngine('sqlite') ? ctx.sqlite.commits.stats() : null)

/** Registered and logged in a few at a time (password hashing dominates; the hash gate admits only a few at once). */
async function players(count: number): Promise<Player[]> {
  const out: Player[] = []
  const lane = async () => {
    while (out.length < count) {
      const slot = out.length
      out.push(undefined as unknown as Player)
      const user = await registerUser(ctx)
      out[slot] = { userId: user.id, username: user.username, tokens: await login(ctx, user.username) }
    }
  }
  await Promise.all(Array.from({ length: 2 }, lane))
  return out
}

const { game, gameKey } = await createGame(ctx)
const other = await createGame(ctx, 'Other Game')

async function token(res: Response): Promise<string> {
  expect(res.status).toBe(201)
  return ((await res.json()) as { token: string }).token
}

async function errorCode(res: Response): Promise<string> {
  return ((await res.json()) as { error: { code: string } }).error.code
}

/** Winner of a round-1 match in these tests: slot 1 on odd positions, slot 2 on even ones. */
const winnerOf = (m: MatchView) => (m.position % 2 === 1 ? m.slot1ParticipantId! : m.slot2ParticipantId!)

describe('group commit on the claim path', () => {
  test('64 players: all 64 sessions, then all 64 claims of round 1 at once; each match decided once, round 2 running', async () => {
    const people = await players(64)
    const t = await startedTournament(ctx, game.id, people)
    const first = t.matches.filter((m) => m.round === 1)
    expect(first.length).toBe(32)
    const seats = first.flatMap((m) => [
      { match: m, player: playerOf(t, people, m.slot1ParticipantId!) },
      { match: m, player: playerOf(t, people, m.slot2ParticipantId!) },
    ])

    const before = commitStats()
    const tokens = await Promise.all(seats.map(async (s) => token(await openSession(ctx, game.id, gameKey, s.player, s.match.id))))
    const responses = await Promise.all(
      seats.map((s, i) => submit(ctx, game.id, gameKey, s.player, tokens[i]!, { outcome: 'WIN', winnerParticipantId: winnerOf(s.match) })),
    )
    const after = commitStats()
    if (before && after) {
      // 128 requests, fewer transactions: they were grouped.
      expect(after.items - before.items).toBe(128)
      expect(after.commits - before.commits).toBeLessThan(128)
      expect(after.failedBatches).toBe(before.failedBatches)
    }

    expect(responses.map((r) => r.status)).toEqual(Array(64).fill(200))
    const decisions = (await Promise.all(responses.map((r) => r.json()))) as { decision: string; matchId: string; winnerParticipantId?: string; nextMatchId?: string }[]
    for (const m of first) {
      const mine = decisions.filter((d) => d.matchId === m.id)
      expect(mine.map((d) => d.decision).sort()).toEqual(['game_advance', 'pending'])
      expect(mine.find((d) => d.decision === 'game_advance')).toMatchObject({ winnerParticipantId: winnerOf(m), nextMatchId: m.nextMatchId })
    }

    const now = await tournament(ctx, t.id)
    for (const m of first) expect(now.matches.find((x) => x.id === m.id)).toMatchObject({ status: 'decided', winnerParticipantId: winnerOf(m) })
    const second = now.matches.filter((m) => m.round === 2)
    expect(second.length).toBe(16)
    const slots = await db.select({ id: matches.id, nextMatchId: matches.nextMatchId, nextSlot: matches.nextSlot }).from(matches).where(inArray(matches.id, first.map((m) => m.id)))
    for (const m of second) {
      expect(m.status).toBe('running')
      const feeders = first.filter((f) => f.nextMatchId === m.id)
      const slotOf = (f: MatchView) => slots.find((s) => s.id === f.id)!.nextSlot
      expect(m.slot1ParticipantId).toBe(winnerOf(feeders.find((f) => slotOf(f) === 1)!))
      expect(m.slot2ParticipantId).toBe(winnerOf(feeders.find((f) => slotOf(f) === 2)!))
    }
    // Exactly one decision per match: one match.decided per player, one claim per player.
    const decidedEvents = await db.select().from(outboxEvents).where(eq(outboxEvents.type, 'match.decided'))
    for (const m of first) expect(decidedEvents.filter((e) => (e.data as { matchId: string }).matchId === m.id).length).toBe(2)
    const readyEvents = await db.select().from(outboxEvents).where(eq(outboxEvents.type, 'match.ready'))
    for (const m of second) expect(readyEvents.filter((e) => (e.data as { matchId: string }).matchId === m.id).length).toBe(2)
    expect((await db.select().from(matchClaims).where(inArray(matchClaims.matchId, first.map((m) => m.id)))).length).toBe(64)
  }, 60_000)

  test('bad claims in the same burst get their own 4xx and write nothing; the good ones succeed', async () => {
    const people = await players(16)
    const t = await startedTournament(ctx, game.id, people)
    const first = t.matches.filter((m) => m.round === 1)
    const seat = (m: MatchView, slot: 1 | 2): Player => playerOf(t, people, slot === 1 ? m.slot1ParticipantId! : m.slot2ParticipantId!)
    const open = async (p: Player, m: MatchView) => token(await openSession(ctx, game.id, gameKey, p, m.id))
    const win = (m: MatchView) => ({ outcome: 'WIN', winnerParticipantId: winnerOf(m) })

    // Matches 0-3: both players claim, plain. Match 4: slot 1 sends its token twice.
    // Match 5: slot 1 holds two sessions and sends both (slot 2 claims after
    // the burst, so the refusal cannot be match_not_running instead). Match 6: slot 1 uses
    // another game's key. Match 7: slot 2 shows slot 1's token.
    const [m0, m1, m2, m3, m4, m5, m6, m7] = first as [MatchView, MatchView, MatchView, MatchView, MatchView, MatchView, MatchView, MatchView]
    const plain = [m0, m1, m2, m3]
    const plainSeats = plain.flatMap((m) => [seat(m, 1), seat(m, 2)].map((p) => ({ m, p })))
    const plainTokens = await Promise.all(plainSeats.map(({ m, p }) => open(p, m)))
    const reused = await open(seat(m4, 1), m4)
    const m4second = await open(seat(m4, 2), m4)
    const twice = await Promise.all([open(seat(m5, 1), m5), open(seat(m5, 1), m5)])
    const m5second = await open(seat(m5, 2), m5)
    const wrongKey = await open(seat(m6, 1), m6)
    const m6second = await open(seat(m6, 2), m6)
    const victim = await open(seat(m7, 1), m7)

    const before = commitStats()
    const burst = await Promise.all([
      ...plainSeats.map(({ m, p }, i) => submit(ctx, game.id, gameKey, p, plainTokens[i]!, win(m))),
      submit(ctx, game.id, gameKey, seat(m4, 1), reused, win(m4)),
      submit(ctx, game.id, gameKey, seat(m4, 1), reused, win(m4)),
      submit(ctx, game.id, gameKey, seat(m4, 2), m4second, win(m4)),
      submit(ctx, game.id, gameKey, seat(m5, 1), twice[0], win(m5)),
      submit(ctx, game.id, gameKey, seat(m5, 1), twice[1], win(m5)),
      submit(ctx, game.id, gameKey, seat(m6, 1), wrongKey, win(m6)),
      submit(ctx, game.id, other.gameKey, seat(m6, 1), wrongKey, win(m6)),
      submit(ctx, game.id, gameKey, seat(m6, 2), m6second, win(m6)),
      submit(ctx, game.id, gameKey, seat(m7, 2), victim, win(m7)),
    ])
    const after = commitStats()
    if (before && after) expect(after.commits - before.commits).toBeLessThan(burst.length)
    const [plainRes, rest] = [burst.slice(0, 8), burst.slice(8)]
    const [reuseA, reuseB, m4b, twiceA, twiceB, m6good, m6bad, m6b, stolen] = rest as [Response, Response, Response, Response, Response, Response, Response, Response, Response]

    // The good claims: every plain match decided with the right winner.
    expect(plainRes.map((r) => r.status)).toEqual(Array(8).fill(200))
    const plainDecisions = (await Promise.all(plainRes.map((r) => r.json()))) as { decision: string; matchId: string; winnerParticipantId?: string }[]
    for (const m of plain) {
      const mine = plainDecisions.filter((d) => d.matchId === m.id)
      expect(mine.map((d) => d.decision).sort()).toEqual(['game_advance', 'pending'])
    }

    // A token sent twice: one 200, one 401; the match is still decided once.
    expect([reuseA.status, reuseB.status].sort()).toEqual([200, 401])
    expect(await errorCode(reuseA.status === 401 ? reuseA : reuseB)).toBe('session_token_invalid')
    expect(m4b.status).toBe(200)

    // Two sessions of one player: one 200, one 409 already_claimed whose session stays unspent.
    expect([twiceA.status, twiceB.status].sort()).toEqual([200, 409])
    expect(await errorCode(twiceA.status === 409 ? twiceA : twiceB)).toBe('already_claimed')
    const refusedToken = twiceA.status === 409 ? twice[0] : twice[1]
    const hashOf = (t: string) => new Bun.CryptoHasher('sha256').update(t).digest('hex')
    const unspent = (await db.select().from(gameSessions).where(eq(gameSessions.matchId, m5.id))).filter((s) => s.consumedAt === null)
    expect(unspent.map((s) => s.tokenHash).sort()).toEqual([hashOf(refusedToken), hashOf(m5second)].sort())
    expect((await db.select().from(matchClaims).where(eq(matchClaims.matchId, m5.id))).length).toBe(1)
    const m5b = await submit(ctx, game.id, gameKey, seat(m5, 2), m5second, win(m5))
    expect(((await m5b.json()) as { decision: string }).decision).toBe('game_advance')

    // Another game's key: 403, and the token is not spent by it.
    expect(m6bad.status).toBe(403)
    expect(await errorCode(m6bad)).toBe('invalid_game_key')
    expect(m6good.status).toBe(200)
    expect(m6b.status).toBe(200)

    // A token shown with another player's bearer: 401, and its owner can still use it.
    expect(stolen.status).toBe(401)
    expect(await errorCode(stolen)).toBe('session_token_invalid')
    const owner = await submit(ctx, game.id, gameKey, seat(m7, 1), victim, win(m7))
    expect(owner.status).toBe(200)
    expect(((await owner.json()) as { decision: string }).decision).toBe('pending')

    // Decided exactly once each; the stolen-token match only has its owner's claim.
    const now = await tournament(ctx, t.id)
    for (const m of [...plain, m4, m5, m6]) expect(now.matches.find((x) => x.id === m.id)).toMatchObject({ status: 'decided', winnerParticipantId: winnerOf(m) })
    expect(now.matches.find((x) => x.id === m7.id)!.status).toBe('running')
    for (const m of [...plain, m4, m5, m6]) {
      const decided = await db.select().from(outboxEvents).where(and(eq(outboxEvents.type, 'match.decided'), eq(outboxEvents.userId, seat(m, 1).userId)))
      expect(decided.filter((e) => (e.data as { matchId: string }).matchId === m.id).length).toBe(1)
    }
    expect((await db.select().from(matchClaims).where(eq(matchClaims.matchId, m7.id))).length).toBe(1)
  }, 30_000)
})
