// Contract §9 on a running tournament, through HTTP: match deadlines and their
// settle job (injected clock), disqualification, cancel and corrections.
import { afterAll, describe, expect, test } from 'bun:test'
import { and, asc, eq } from 'drizzle-orm'
import { postJson } from '../helpers/app'
import { admin, claim, createArenaApp, createGame, openSession, playerOf, players, playOut, submit, tournament, type MatchView, type Player, type TournamentView } from '../helpers/arena'

const ctx = await createArenaApp()
afterAll(() => ctx.close())
const { db, tables: { outboxEvents, securityEvents } } = ctx.peek

/** The security log's server entries of `kind` (the operator's audit trail) whose details name `id` as their tournament. */
async function audited(kind: string, tournamentId: string) {
  await ctx.services.securityLog.flush()
  const rows = await db.select().from(securityEvents).where(and(eq(securityEvents.kind, kind), eq(securityEvents.source, 'server')))
  return rows.filter((r) => (r.details as { tournamentId?: string }).tournamentId === tournamentId).map((r) => ({ userId: r.userId, level: r.level, details: r.details }))
}

type DeadlineMatch = MatchView & { deadline: string | null }

async function runningTournament(count: number, options?: Record<string, unknown>) {
  const { game, gameKey } = await createGame(ctx)
  const people = await players(ctx, count)
  const created = await ctx.handle(
    postJson('/api/v1/admin/tournaments', { gameId: game.id, name: 'Cup', format: 'single_elimination', participants: people.map((p) => p.userId), ...(options ? { options } : {}) }, admin),
  )
  expect(created.status).toBe(201)
  const { tournament: t } = (await created.json()) as { tournament: TournamentView & { options: Record<string, unknown> } }
  expect(t.options).toEqual(options ?? {})
  const started = await ctx.handle(postJson(`/api/v1/admin/tournaments/${t.id}/start`, {}, admin))
  expect(started.status).toBe(200)
  return { gameId: game.id, gameKey, people, t: ((await started.json()) as { tournament: TournamentView }).tournament }
}

async function eventsOf(player: Player, type: string) {
  const rows = await db.select().from(outboxEvents).where(and(eq(outboxEvents.userId, player.userId), eq(outboxEvents.type, type))).orderBy(asc(outboxEvents.seq))
  return rows.map((r) => r.data as Record<string, unknown>)
}

const matchOf = (t: TournamentView, id: string) => t.matches.find((m) => m.id === id)! as DeadlineMatch

describe('deadlines', () => {
  test('options.matchDeadlineS must be a whole number of seconds ≥ 1', async () => {
    const { game } = await createGame(ctx)
    const people = await players(ctx, 2)
    for (const matchDeadlineS of [0, -5, 1.5, 'soon']) {
      const res = await ctx.handle(
        postJson('/api/v1/admin/tournaments', { gameId: game.id, name: 'Bad', format: 'single_elimination', participants: people.map((p) => p.userId), options: { matchDeadlineS } }, admin),
      )
      expect([matchDeadlineS, res.status]).toEqual([matchDeadlineS, 422])
    }
  })

  test('a running match shows its deadline; without the option it is null', async () => {
    const timed = await runningTournament(3, { matchDeadlineS: 600 })
    const running = timed.t.matches.find((m) => m.status === 'running') as DeadlineMatch
    expect(running.deadline).toBe(new Date(ctx.clock.now().getTime() + 600_000).toISOString())
    expect((timed.t.matches.find((m) => m.status === 'waiting') as DeadlineMatch).deadline).toBeNull()
    const plain = await runningTournament(2)
    expect((plain.t.matches[0] as DeadlineMatch).deadline).toBeNull()
  })

  test('exactly one claim at the deadline: the claimant advances (no_show); the next match gets its own deadline', async () => {
    const { gameId, gameKey, people, t } = await runningTournament(4, { matchDeadlineS: 60 })
    const [m1] = t.matches.filter((m) => m.status === 'running')
    const a = playerOf(t, people, m1!.slot1ParticipantId!)
    const b = playerOf(t, people, m1!.slot2ParticipantId!)
    expect((await claim(ctx, gameId, gameKey, a, m1!.id, { outcome: 'WIN', winnerParticipantId: m1!.slot1ParticipantId })).decision).toBe('pending')
    // Not yet due.
    ctx.clock.advance(59_000)
    await ctx.runJobs()
    expect(matchOf(await tournament(ctx, t.id), m1!.id).status).toBe('running')
    ctx.clock.advance(1_000)
    await ctx.runJobs()
    const after = await tournament(ctx, t.id)
    const settled = matchOf(after, m1!.id)
    expect(settled.status).toBe('decided')
    expect(settled.winnerParticipantId).toBe(m1!.slot1ParticipantId)
    for (const p of [a, b]) {
      expect(await eventsOf(p, 'match.decided')).toEqual([{ tournamentId: t.id, matchId: m1!.id, winnerParticipantId: m1!.slot1ParticipantId, outcome: 'WIN', reason: 'no_show' }])
    }
    const final = matchOf(after, m1!.nextMatchId!)
    expect(final.slot1ParticipantId === m1!.slot1ParticipantId || final.slot2ParticipantId === m1!.slot1ParticipantId).toBe(true)
    // A second run settles nothing more.
    ctx.clock.advance(1_000)
    await ctx.runJobs()
    expect(await eventsOf(a, 'match.decided')).toHaveLength(1)
  })

  test('nobody claimed by the deadline: disputed (deadline_passed), an operator resolves it', async () => {
    const { people, t } = await runningTournament(2, { matchDeadlineS: 30 })
    const m = t.matches[0]!
    ctx.clock.advance(30_000)
    await ctx.runJobs()
    expect(matchOf(await tournament(ctx, t.id), m.id).status).toBe('disputed')
    for (const p of people) expect(await eventsOf(p, 'match.disputed')).toEqual([{ tournamentId: t.id, matchId: m.id, reason: 'deadline_passed' }])
    const resolved = await ctx.handle(postJson(`/api/v1/admin/matches/${m.id}/resolve`, { winnerParticipantId: m.slot2ParticipantId }, admin))
    expect(resolved.status).toBe(200)
  })

  test('a match decided before its deadline is left alone by the job', async () => {
    const { gameId, gameKey, people, t } = await runningTournament(2, { matchDeadlineS: 30 })
    const m = t.matches[0]!
    await playOut(ctx, gameId, gameKey, t, people, m, m.slot1ParticipantId!)
    ctx.clock.advance(31_000)
    await ctx.runJobs()
    const after = await tournament(ctx, t.id)
    expect(after.status).toBe('completed')
    expect(matchOf(after, m.id).winnerParticipantId).toBe(m.slot1ParticipantId)
    for (const p of people) {
      expect(await eventsOf(p, 'match.disputed')).toEqual([])
      expect(await eventsOf(p, 'match.decided')).toHaveLength(1)
    }
  })
})

describe('cancel', () => {
  test('undecided matches cancelled, a session issued before fails after (409 match_not_running), everyone told; twice is 409', async () => {
    const { gameId, gameKey, people, t } = await runningTournament(3, { matchDeadlineS: 60 })
    const running = t.matches.find((m) => m.status === 'running')!
    const player = playerOf(t, people, running.slot1ParticipantId!)
    const session = await openSession(ctx, gameId, gameKey, player, running.id)
    expect(session.status).toBe(201)
    const { token } = (await session.json()) as { token: string }
    const res = await ctx.handle(postJson(`/api/v1/admin/tournaments/${t.id}/cancel`, { reason: 'venue flooded' }, admin))
    expect(res.status).toBe(200)
    const { tournament: cancelled } = (await res.json()) as { tournament: TournamentView }
    expect(cancelled.status).toBe('cancelled')
    expect(cancelled.matches.map((m) => m.status).sort()).toEqual(['cancelled', 'cancelled', 'decided'])
    const late = await submit(ctx, gameId, gameKey, player, token, { outcome: 'WIN', winnerParticipantId: running.slot1ParticipantId })
    expect(late.status).toBe(409)
    expect(((await late.json()) as { error: { code: string } }).error.code).toBe('match_not_running')
    expect((await openSession(ctx, gameId, gameKey, player, running.id)).status).toBe(409)
    for (const p of people) expect(await eventsOf(p, 'tournament.cancelled')).toEqual([{ tournamentId: t.id, reason: 'venue flooded' }])
    expect(await audited('TOURNAMENT_CANCELLED', t.id)).toEqual([{ userId: null, level: 'WARN', details: { tournamentId: t.id, reason: 'venue flooded', cancelledMatches: 2 } }])
    // The deadline job finds nothing to settle.
    ctx.clock.advance(61_000)
    await ctx.runJobs()
    expect(matchOf(await tournament(ctx, t.id), running.id).status).toBe('cancelled')
    expect((await ctx.handle(postJson(`/api/v1/admin/tournaments/${t.id}/cancel`, { reason: 'again' }, admin))).status).toBe(409)
  })

  test('a completed tournament cannot be cancelled; an unknown one is 404', async () => {
    const { gameId, gameKey, people, t } = await runningTournament(2)
    await playOut(ctx, gameId, gameKey, t, people, t.matches[0]!, t.matches[0]!.slot1ParticipantId!)
    await ctx.runJobs()
    expect((await tournament(ctx, t.id)).status).toBe('completed')
    const res = await ctx.handle(postJson(`/api/v1/admin/tournaments/${t.id}/cancel`, { reason: 'too late' }, admin))
    expect(res.status).toBe(409)
    expect((await ctx.handle(postJson('/api/v1/admin/tournaments/trn_nope/cancel', { reason: 'x' }, admin))).status).toBe(404)
  })
})

describe('corrections', () => {
  test('in time: the other player wins and takes the slot in the fed match; both players told; the fed match re-opens', async () => {
    const { gameId, gameKey, people, t } = await runningTournament(4)
    const [m1, m2] = t.matches.filter((m) => m.status === 'running')
    await playOut(ctx, gameId, gameKey, t, people, m1!, m1!.slot1ParticipantId!)
    await playOut(ctx, gameId, gameKey, t, people, m2!, m2!.slot1ParticipantId!)
    const final = matchOf(await tournament(ctx, t.id), m1!.nextMatchId!)
    expect(final.status).toBe('running')
    const oldWinner = playerOf(t, people, m1!.slot1ParticipantId!)
    const staleSession = await openSession(ctx, gameId, gameKey, oldWinner, final.id)
    expect(staleSession.status).toBe(201)
    const res = await ctx.handle(postJson(`/api/v1/admin/matches/${m1!.id}/correct`, { winnerParticipantId: m1!.slot2ParticipantId, reason: 'entered wrongly' }, admin))
    expect(res.status).toBe(200)
    expect(((await res.json()) as { match: MatchView }).match.winnerParticipantId).toBe(m1!.slot2ParticipantId)
    const after = await tournament(ctx, t.id)
    const moved = matchOf(after, final.id)
    expect([moved.slot1ParticipantId, moved.slot2ParticipantId]).toContain(m1!.slot2ParticipantId)
    expect([moved.slot1ParticipantId, moved.slot2ParticipantId]).not.toContain(m1!.slot1ParticipantId)
    for (const id of [m1!.slot1ParticipantId!, m1!.slot2ParticipantId!]) {
      expect(await eventsOf(playerOf(t, people, id), 'match.corrected')).toEqual([
        { tournamentId: t.id, matchId: m1!.id, winnerParticipantId: m1!.slot2ParticipantId, previousWinnerParticipantId: m1!.slot1ParticipantId, reason: 'entered wrongly' },
      ])
    }
    expect(await audited('MATCH_CORRECTED', t.id)).toEqual([
      { userId: null, level: 'WARN', details: { tournamentId: t.id, matchId: m1!.id, winnerParticipantId: m1!.slot2ParticipantId, previousWinnerParticipantId: m1!.slot1ParticipantId, reason: 'entered wrongly' } },
    ])
    // The old winner's session for the final is worthless now.
    const { token } = (await staleSession.json()) as { token: string }
    expect((await submit(ctx, gameId, gameKey, oldWinner, token, { outcome: 'WIN', winnerParticipantId: m1!.slot1ParticipantId })).status).toBe(401)
    // The final plays out with the corrected player.
    await playOut(ctx, gameId, gameKey, after, people, moved, m1!.slot2ParticipantId!)
    await ctx.runJobs()
    expect((await tournament(ctx, t.id)).winnerParticipantId).toBe(m1!.slot2ParticipantId)
  })

  test('too late once the fed match has a claim; an undecided match is 409 conflict', async () => {
    const { gameId, gameKey, people, t } = await runningTournament(4)
    const [m1, m2] = t.matches.filter((m) => m.status === 'running')
    const undecided = await ctx.handle(postJson(`/api/v1/admin/matches/${m1!.id}/correct`, { winnerParticipantId: m1!.slot2ParticipantId, reason: 'x' }, admin))
    expect(undecided.status).toBe(409)
    expect(((await undecided.json()) as { error: { code: string } }).error.code).toBe('conflict')
    await playOut(ctx, gameId, gameKey, t, people, m1!, m1!.slot1ParticipantId!)
    await playOut(ctx, gameId, gameKey, t, people, m2!, m2!.slot1ParticipantId!)
    const final = matchOf(await tournament(ctx, t.id), m1!.nextMatchId!)
    await claim(ctx, gameId, gameKey, playerOf(t, people, m2!.slot1ParticipantId!), final.id, { outcome: 'WIN', winnerParticipantId: m2!.slot1ParticipantId })
    const res = await ctx.handle(postJson(`/api/v1/admin/matches/${m1!.id}/correct`, { winnerParticipantId: m1!.slot2ParticipantId, reason: 'x' }, admin))
    expect(res.status).toBe(409)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('correction_too_late')
    expect(matchOf(await tournament(ctx, t.id), m1!.id).winnerParticipantId).toBe(m1!.slot1ParticipantId)
    // Naming someone not in the match: 422.
    expect((await ctx.handle(postJson(`/api/v1/admin/matches/${m2!.id}/correct`, { winnerParticipantId: m1!.slot2ParticipantId, reason: 'x' }, admin))).status).toBe(422)
  })

  test('the final: correctable while finalizing, correction_too_late once completed', async () => {
    const { gameId, gameKey, people, t } = await runningTournament(2)
    const m = t.matches[0]!
    await playOut(ctx, gameId, gameKey, t, people, m, m.slot1ParticipantId!)
    const fix = await ctx.handle(postJson(`/api/v1/admin/matches/${m.id}/correct`, { winnerParticipantId: m.slot2ParticipantId, reason: 'swap' }, admin))
    expect(fix.status).toBe(200)
    await ctx.runJobs()
    const done = await tournament(ctx, t.id)
    expect(done.status).toBe('completed')
    expect(done.winnerParticipantId).toBe(m.slot2ParticipantId)
    const late = await ctx.handle(postJson(`/api/v1/admin/matches/${m.id}/correct`, { winnerParticipantId: m.slot1ParticipantId, reason: 'back' }, admin))
    expect(late.status).toBe(409)
    expect(((await late.json()) as { error: { code: string } }).error.code).toBe('correction_too_late')
  })
})

describe('disqualification', () => {
  test('in a running match: the opponent advances (disqualified); both told; the tournament goes on', async () => {
    const { people, t } = await runningTournament(4)
    const [m1] = t.matches.filter((m) => m.status === 'running')
    const cheat = m1!.slot1ParticipantId!
    const res = await ctx.handle(postJson(`/api/v1/admin/tournaments/${t.id}/participants/${cheat}/disqualify`, { reason: 'aimbot' }, admin))
    expect(res.status).toBe(200)
    const after = await tournament(ctx, t.id)
    expect(after.status).toBe('running')
    expect(matchOf(after, m1!.id)).toMatchObject({ status: 'decided', winnerParticipantId: m1!.slot2ParticipantId })
    for (const id of [m1!.slot1ParticipantId!, m1!.slot2ParticipantId!]) {
      expect(await eventsOf(playerOf(t, people, id), 'match.decided')).toEqual([{ tournamentId: t.id, matchId: m1!.id, winnerParticipantId: m1!.slot2ParticipantId, outcome: 'WIN', reason: 'disqualified' }])
    }
    expect(await eventsOf(playerOf(t, people, cheat), 'tournament.disqualified')).toEqual([{ tournamentId: t.id, participantId: cheat, reason: 'aimbot' }])
    expect(await audited('PARTICIPANT_DISQUALIFIED', t.id)).toEqual([
      { userId: playerOf(t, people, cheat).userId, level: 'WARN', details: { tournamentId: t.id, participantId: cheat, matchId: m1!.id, reason: 'aimbot' } },
    ])
    // Out already: a second disqualification has no match to give away.
    expect((await ctx.handle(postJson(`/api/v1/admin/tournaments/${t.id}/participants/${cheat}/disqualify`, { reason: 'again' }, admin))).status).toBe(409)
    expect((await ctx.handle(postJson(`/api/v1/admin/tournaments/${t.id}/participants/par_nope/disqualify`, { reason: 'x' }, admin))).status).toBe(404)
  })

  test('ahead of a not-yet-known opponent: a walkover once the opponent arrives', async () => {
    const { gameId, gameKey, people, t } = await runningTournament(3)
    const bye = t.matches.find((m) => m.status === 'decided')!
    const seeded = bye.winnerParticipantId!
    const running = t.matches.find((m) => m.status === 'running')!
    const res = await ctx.handle(postJson(`/api/v1/admin/tournaments/${t.id}/participants/${seeded}/disqualify`, { reason: 'no papers' }, admin))
    expect(res.status).toBe(200)
    expect(matchOf(await tournament(ctx, t.id), bye.nextMatchId!).status).toBe('waiting')
    await playOut(ctx, gameId, gameKey, t, people, running, running.slot2ParticipantId!)
    const after = await tournament(ctx, t.id)
    expect(matchOf(after, bye.nextMatchId!)).toMatchObject({ status: 'decided', winnerParticipantId: running.slot2ParticipantId })
    expect(after.status).toBe('finalizing')
    await ctx.runJobs()
    expect((await tournament(ctx, t.id)).winnerParticipantId).toBe(running.slot2ParticipantId)
    expect(await eventsOf(playerOf(t, people, seeded), 'match.decided')).toContainEqual({ tournamentId: t.id, matchId: bye.nextMatchId, winnerParticipantId: running.slot2ParticipantId, outcome: 'WIN', reason: 'disqualified' })
    expect(await eventsOf(playerOf(t, people, running.slot2ParticipantId!), 'match.ready')).not.toContainEqual(expect.objectContaining({ matchId: bye.nextMatchId }))
  })
})
