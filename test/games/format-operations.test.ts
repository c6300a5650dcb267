// Contract §9 on the formats beyond single elimination, through HTTP: draws as
// results, live standings, disqualification in round robin and Swiss,
// corrections that re-pair a Swiss round (and are too late once a re-paired
// match has a claim), the double-elimination grand-final reset, the
// third-place match, and a deadline's no_show in round robin.
import { afterAll, describe, expect, test } from 'bun:test'
import { and, asc, eq } from 'drizzle-orm'
import { postJson } from '../helpers/app'
import type { Decision, Match, Tournament } from '../../packages/sdk/src/types'
import { admin, claim, createArenaApp, createGame, openSession, playerOf, players, submit, type Player } from '../helpers/arena'

const ctx = await createArenaApp()
afterAll(() => ctx.close())
const { db, tables: { outboxEvents } } = ctx.peek

async function started(format: string, count: number, options?: Record<string, unknown>) {
  const { game, gameKey } = await createGame(ctx)
  const people = await players(ctx, count)
  const created = await ctx.handle(postJson('/api/v1/admin/tournaments', { gameId: game.id, name: 'Cup', format, participants: people.map((p) => p.userId), ...(options ? { options } : {}) }, admin))
  expect(created.status).toBe(201)
  const { tournament: t } = (await created.json()) as { tournament: Tournament }
  const res = await ctx.handle(postJson(`/api/v1/admin/tournaments/${t.id}/start`, {}, admin))
  expect(res.status).toBe(200)
  const view = ((await res.json()) as { tournament: Tournament }).tournament
  return { gameId: game.id, gameKey, people, t: view, seat: (seed: number) => view.participants.find((p) => p.seed === seed)!.id }
}

async function read(id: string): Promise<Tournament> {
  const res = await ctx.handle(new Request(`http://localhost/api/v1/admin/tournaments/${id}`, { headers: admin }))
  expect(res.status).toBe(200)
  return ((await res.json()) as { tournament: Tournament }).tournament
}

type Setup = Awaited<ReturnType<typeof started>>

/** Both players of running match `m` claim `result` (a participant id, or 'DRAW'); the second claim's decision. */
async function play(s: Setup, t: Tournament, m: Match, result: string): Promise<Decision> {
  const body = result === 'DRAW' ? { outcome: 'DRAW' } : { outcome: 'WIN', winnerParticipantId: result }
  const first = await claim(ctx, s.gameId, s.gameKey, playerOf(t, s.people, m.slot1ParticipantId!), m.id, body)
  expect(first.decision).toBe('pending')
  return (await claim(ctx, s.gameId, s.gameKey, playerOf(t, s.people, m.slot2ParticipantId!), m.id, body)) as Decision
}

const between = (t: Tournament, a: string, b: string) =>
  t.matches.find((m) => m.status === 'running' && [m.slot1ParticipantId, m.slot2ParticipantId].sort().join() === [a, b].sort().join())!

async function eventsOf(player: Player, type: string) {
  const rows = await db.select().from(outboxEvents).where(and(eq(outboxEvents.userId, player.userId), eq(outboxEvents.type, type))).orderBy(asc(outboxEvents.seq))
  return rows.map((r) => r.data as Record<string, unknown>)
}

const correct = (matchId: string, winnerParticipantId: string) => ctx.handle(postJson(`/api/v1/admin/matches/${matchId}/correct`, { winnerParticipantId, reason: 'entered wrongly' }, admin))
const disqualify = (t: Tournament, participantId: string) => ctx.handle(postJson(`/api/v1/admin/tournaments/${t.id}/participants/${participantId}/disqualify`, { reason: 'cheating' }, admin))

describe('round robin', () => {
  test('a mutual draw is a result (game_advance, outcome DRAW); standings are live; the last result finalizes', async () => {
    const s = await started('round_robin', 3)
    const [p1, p2, p3] = [s.seat(1), s.seat(2), s.seat(3)]
    let t = s.t
    // Three players: every match is playable at once (one rests each round).
    expect(t.matches.map((m) => [m.bracket, m.status])).toEqual([['round_robin', 'running'], ['round_robin', 'running'], ['round_robin', 'running']])
    expect(t.standings.map((r) => r.participantId)).toEqual([p1, p2, p3])
    const draw = await play(s, t, between(t, p1, p2), 'DRAW')
    expect(draw).toMatchObject({ decision: 'game_advance', reason: 'claims_agree', outcome: 'DRAW' })
    expect(draw.winnerParticipantId).toBeUndefined()
    t = await read(t.id)
    const drawn = t.matches.find((m) => m.outcome === 'DRAW')!
    expect(drawn).toMatchObject({ status: 'decided', winnerParticipantId: null })
    for (const p of [p1, p2]) expect(await eventsOf(playerOf(t, s.people, p), 'match.decided')).toEqual([{ tournamentId: t.id, matchId: drawn.id, winnerParticipantId: null, outcome: 'DRAW' }])
    expect(t.standings.find((r) => r.participantId === p1)).toEqual({ participantId: p1, rank: 1, wins: 0, draws: 1, losses: 0, points: 1 })
    expect((await play(s, t, between(t, p2, p3), p3)).decision).toBe('game_advance')
    t = await read(t.id)
    expect(t.standings.map((r) => [r.participantId, r.points])).toEqual([[p3, 3], [p1, 1], [p2, 1]])
    const last = await play(s, t, between(t, p1, p3), p1)
    expect(last).toMatchObject({ decision: 'game_advance_pending_finalization', outcome: 'WIN', winnerParticipantId: p1 })
    // p1 4 points; p3 3; p2 1.
    await ctx.runJobs()
    t = await read(t.id)
    expect(t.status).toBe('completed')
    expect(t.winnerParticipantId).toBe(p1)
    expect(t.standings.map((r) => [r.participantId, r.rank, r.wins, r.draws, r.losses, r.points])).toEqual([
      [p1, 1, 1, 1, 0, 4],
      [p3, 2, 1, 0, 1, 3],
      [p2, 3, 0, 1, 1, 1],
    ])
  })

  test('an agreed draw in single elimination is still a replay', async () => {
    const s = await started('single_elimination', 2)
    const d = await play(s, s.t, s.t.matches[0]!, 'DRAW')
    expect(d).toMatchObject({ decision: 'replay', reason: 'mutual_draw' })
  })

  test('disqualification: every remaining match of the player is a walkover at once, played ones stand; twice is 409', async () => {
    const s = await started('round_robin', 4)
    const [p1, p2, p3, p4] = [1, 2, 3, 4].map(s.seat) as [string, string, string, string]
    let t = s.t
    const played = between(t, p1, p4)
    await play(s, t, played, p4)
    const res = await disqualify(t, p4)
    expect(res.status).toBe(200)
    t = await read(t.id)
    expect(t.participants.find((p) => p.id === p4)!.disqualifiedAt).not.toBeNull()
    const theirs = t.matches.filter((m) => m.slot1ParticipantId === p4 || m.slot2ParticipantId === p4)
    expect(theirs).toHaveLength(3)
    expect(theirs.every((m) => m.status === 'decided')).toBe(true)
    // The match p4 won stays theirs; the two others go to the opponents.
    expect(theirs.find((m) => m.id === played.id)!.winnerParticipantId).toBe(p4)
    expect(theirs.filter((m) => m.id !== played.id).map((m) => m.winnerParticipantId).sort()).toEqual([p2, p3].sort())
    const p2Events = await eventsOf(playerOf(t, s.people, p2), 'match.decided')
    expect(p2Events).toContainEqual(expect.objectContaining({ winnerParticipantId: p2, reason: 'disqualified' }))
    expect((await disqualify(t, p4)).status).toBe(409)
    expect(t.standings.find((r) => r.participantId === p4)).toMatchObject({ wins: 1, losses: 2 })
  })

  test('a deadline with one claim: the claimant wins (no_show), even when the claim was a draw', async () => {
    const s = await started('round_robin', 2, { matchDeadlineS: 60 })
    const m = s.t.matches[0]!
    const one = await claim(ctx, s.gameId, s.gameKey, playerOf(s.t, s.people, m.slot2ParticipantId!), m.id, { outcome: 'DRAW' })
    expect(one.decision).toBe('pending')
    ctx.clock.advance(61_000)
    await ctx.runJobs()
    const t = await read(s.t.id)
    expect(t.matches[0]).toMatchObject({ status: 'decided', outcome: 'WIN', winnerParticipantId: m.slot2ParticipantId })
    // The settle job's decision was the last: the finalize job (run in the same pass) completed it.
    expect(t.status).toBe('completed')
    expect(t.winnerParticipantId).toBe(m.slot2ParticipantId)
  })
})

describe('swiss', () => {
  test('the next round is paired once a round is complete; a correction in time pairs it again; too late once a new match has a claim', async () => {
    const s = await started('swiss', 4, { rounds: 2 })
    const [p1, p2, p3, p4] = [1, 2, 3, 4].map(s.seat) as [string, string, string, string]
    let t = s.t
    // Round 1: the top half meets the bottom half.
    const m13 = between(t, p1, p3)
    const m24 = between(t, p2, p4)
    expect([m13.bracket, m24.bracket]).toEqual(['swiss', 'swiss'])
    await play(s, t, m13, p1)
    expect((await read(t.id)).matches).toHaveLength(2)
    await play(s, t, m24, p2)
    t = await read(t.id)
    // Round 2 by points then seed: p1 v p2, p3 v p4.
    const round2 = t.matches.filter((m) => m.round === 2)
    expect(round2.map((m) => [m.slot1ParticipantId, m.slot2ParticipantId, m.status])).toEqual([[p1, p2, 'running'], [p3, p4, 'running']])
    // A session for a round-2 match, issued before the correction, dies with the match.
    const stale = (await (await openSession(ctx, s.gameId, s.gameKey, playerOf(t, s.people, p1), round2[0]!.id)).json()) as { token: string }

    // p3 really beat p1: round 2 is paired again on the corrected points (p2 v p3, p1 v p4).
    const fixed = await correct(m13.id, p3)
    expect(fixed.status).toBe(200)
    t = await read(t.id)
    const again = t.matches.filter((m) => m.round === 2)
    expect(again.map((m) => [m.slot1ParticipantId, m.slot2ParticipantId])).toEqual([[p2, p3], [p1, p4]])
    expect(again.some((m) => round2.some((old) => old.id === m.id))).toBe(false)
    const refused = await submit(ctx, s.gameId, s.gameKey, playerOf(t, s.people, p1), stale.token, { outcome: 'WIN', winnerParticipantId: p1 })
    expect(refused.status).toBe(401)
    for (const p of [p1, p3]) {
      expect(await eventsOf(playerOf(t, s.people, p), 'match.corrected')).toEqual([{ tournamentId: t.id, matchId: m13.id, winnerParticipantId: p3, previousWinnerParticipantId: p1, reason: 'entered wrongly' }])
    }

    // A claim in the re-paired round: correcting round 1 again is too late, and changes nothing.
    await claim(ctx, s.gameId, s.gameKey, playerOf(t, s.people, p2), again[0]!.id, { outcome: 'WIN', winnerParticipantId: p2 })
    const late = await correct(m24.id, p4)
    expect(late.status).toBe(409)
    expect(((await late.json()) as { error: { code: string } }).error.code).toBe('correction_too_late')
    expect((await read(t.id)).matches).toEqual(t.matches)
  })

  test('a disqualified player forfeits the current match and is paired no more; an odd count gets a bye', async () => {
    const s = await started('swiss', 5, { rounds: 2 })
    let t = s.t
    // Five players: the lowest seed has the round-1 bye (decided at once, a win).
    const bye = t.matches.find((m) => m.slot2ParticipantId === null || m.slot1ParticipantId === null)!
    expect(bye).toMatchObject({ status: 'decided', outcome: 'WIN', winnerParticipantId: s.seat(5) })
    const out = s.seat(1)
    expect((await disqualify(t, out)).status).toBe(200)
    t = await read(t.id)
    const forfeited = t.matches.find((m) => m.round === 1 && (m.slot1ParticipantId === out || m.slot2ParticipantId === out))!
    expect(forfeited.status).toBe('decided')
    expect(forfeited.winnerParticipantId).not.toBe(out)
    for (const m of t.matches.filter((x) => x.round === 1 && x.status === 'running')) await play(s, t, m, m.slot1ParticipantId!)
    t = await read(t.id)
    const round2 = t.matches.filter((m) => m.round === 2)
    expect(round2.length).toBe(2)
    expect(round2.some((m) => m.slot1ParticipantId === out || m.slot2ParticipantId === out)).toBe(false)
  })
})

describe('double elimination', () => {
  test('4 players, grand final with reset: the losers-bracket champion wins the first, a second is created and decides', async () => {
    const s = await started('double_elimination', 4)
    const [p1, p2, p3, p4] = [1, 2, 3, 4].map(s.seat) as [string, string, string, string]
    let t = s.t
    expect(new Set(t.matches.map((m) => m.bracket))).toEqual(new Set(['winners', 'losers', 'grand_final']))
    // A winners-bracket loser goes to the losers bracket.
    const w1 = between(t, p1, p4)
    expect(w1.loserNextMatchId).not.toBeNull()
    await play(s, t, w1, p1)
    await play(s, t, between(t, p2, p3), p2)
    t = await read(t.id)
    expect(t.matches.find((m) => m.id === w1.loserNextMatchId)!.slot1ParticipantId ?? t.matches.find((m) => m.id === w1.loserNextMatchId)!.slot2ParticipantId).toBeTruthy()
    await play(s, t, between(t, p1, p2), p1) // winners final: p2 drops
    t = await read(t.id)
    await play(s, t, between(t, p3, p4), p3) // losers round 1
    t = await read(t.id)
    await play(s, t, between(t, p2, p3), p2) // losers final
    t = await read(t.id)
    const gf1 = t.matches.find((m) => m.bracket === 'grand_final' && m.status === 'running')!
    const d1 = await play(s, t, gf1, p2) // the losers-bracket champion wins: a reset
    expect(d1.decision).toBe('game_advance')
    t = await read(t.id)
    const gf2 = t.matches.find((m) => m.bracket === 'grand_final' && m.status === 'running')!
    expect(gf2.round).toBe(2)
    const d2 = await play(s, t, gf2, p1)
    expect(d2.decision).toBe('game_advance_pending_finalization')
    await ctx.runJobs()
    t = await read(t.id)
    expect(t.status).toBe('completed')
    expect(t.standings.map((r) => r.participantId)).toEqual([p1, p2, p3, p4])
    expect(t.winnerParticipantId).toBe(p1)
  })
})

describe('single elimination with a third-place match', () => {
  test('the semi-final losers play for third; the standings put its winner third', async () => {
    const s = await started('single_elimination', 4, { thirdPlaceMatch: true })
    const [p1, p2, p3, p4] = [1, 2, 3, 4].map(s.seat) as [string, string, string, string]
    let t = s.t
    const third = t.matches.find((m) => m.bracket === 'third_place')!
    expect(third.status).toBe('waiting')
    await play(s, t, between(t, p1, p4), p1)
    await play(s, t, between(t, p2, p3), p2)
    t = await read(t.id)
    expect(t.matches.find((m) => m.id === third.id)!.status).toBe('running')
    expect((await play(s, t, between(t, p1, p2), p2)).decision).toBe('game_advance')
    t = await read(t.id)
    expect((await play(s, t, between(t, p3, p4), p4)).decision).toBe('game_advance_pending_finalization')
    await ctx.runJobs()
    t = await read(t.id)
    expect(t.standings.map((r) => r.participantId)).toEqual([p2, p1, p4, p3])
  })
})

describe('corrections into a disputed match', () => {
  test('a fed match disputed for want of claims takes the corrected player and runs again, with a new deadline, both told', async () => {
    const s = await started('single_elimination', 4, { matchDeadlineS: 60 })
    const [p1, p2, p3, p4] = [1, 2, 3, 4].map(s.seat) as [string, string, string, string]
    let t = s.t
    const semi = between(t, p1, p4)
    await play(s, t, semi, p1)
    await play(s, t, between(t, p2, p3), p2)
    t = await read(t.id)
    const final = between(t, p1, p2)
    ctx.clock.advance(61_000)
    await ctx.runJobs()
    t = await read(t.id)
    expect(t.matches.find((m) => m.id === final.id)!.status).toBe('disputed')
    const readyBefore = (await eventsOf(playerOf(t, s.people, p2), 'match.ready')).length
    expect((await correct(semi.id, p4)).status).toBe(200)
    t = await read(t.id)
    const moved = t.matches.find((m) => m.id === final.id)! as Match & { deadline: string | null }
    expect(moved.status).toBe('running')
    expect([moved.slot1ParticipantId, moved.slot2ParticipantId].sort()).toEqual([p2, p4].sort())
    expect(moved.deadline).toBe(new Date(ctx.clock.now().getTime() + 60_000).toISOString())
    expect((await eventsOf(playerOf(t, s.people, p2), 'match.ready')).length).toBe(readyBefore + 1)
    expect(await eventsOf(playerOf(t, s.people, p4), 'match.ready')).toContainEqual({ tournamentId: t.id, matchId: final.id, round: final.round })
    // It plays on: the corrected pair decides it.
    expect((await play(s, t, moved, p4)).decision).toBe('game_advance_pending_finalization')
  })
})
