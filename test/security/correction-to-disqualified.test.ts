// Invariant: a correction never makes a disqualified participant a winner, in
// any format: not by taking back the walkover their disqualification gave the
// opponent, and not by reversing a result they played before it. The refusal
// (409 winner_disqualified) changes nothing: the match, the bracket and the
// audit log stay as they were (issue 33).
import { afterAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import type { Match, Tournament } from '../../packages/sdk/src/types'
import { postJson, req } from '../helpers/app'
import { admin, claim, createArenaApp, createGame, playerOf, players } from '../helpers/arena'
import { operatorOf } from '../helpers/browser'

const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

const ctx = await createArenaApp()
afterAll(() => ctx.close())
const { db, tables: { auditLog } } = ctx.peek

async function started(format: string) {
  const { game, gameKey } = await createGame(ctx)
  const people = await players(ctx, 4)
  const created = await ctx.handle(postJson('/api/v1/admin/tournaments', { gameId: game.id, name: 'Cup', format, participants: people.map((p) => p.userId) }, admin))
  expect(created.status).toBe(201)
  const { tournament } = (await created.json()) as { tournament: Tournament }
  const res = await ctx.handle(postJson(`/api/v1/admin/tournaments/${tournament.id}/start`, {}, admin))
  expect(res.status).toBe(200)
  return { gameId: game.id, gameKey, people, t: ((await res.json()) as { tournament: Tournament }).tournament }
}

async function read(id: string): Promise<Tournament> {
  const res = await ctx.handle(req(`/api/v1/admin/tournaments/${id}`, { headers: admin }))
  expect(res.status).toBe(200)
  return ((await res.json()) as { tournament: Tournament }).tournament
}

const correct = (matchId: string, winnerParticipantId: string) => ctx.handle(postJson(`/api/v1/admin/matches/${matchId}/correct`, { winnerParticipantId, reason: 'entered wrongly' }, admin))
const disqualify = (t: Tournament, participantId: string) => ctx.handle(postJson(`/api/v1/admin/tournaments/${t.id}/participants/${participantId}/disqualify`, { reason: 'cheating' }, admin))
const corrections = async (matchId: string) => (await db.select().from(auditLog).where(and(eq(auditLog.action, 'match.correct'), eq(auditLog.target, matchId)))).length
const firstRunning = (t: Tournament): Match => t.matches.find((m) => m.status === 'running')!

/** A refused correction: 409 winner_disqualified, and the tournament exactly as before. */
async function expectRefused(t: Tournament, matchId: string, winner: string) {
  const before = await read(t.id)
  const res = await correct(matchId, winner)
  expect(res.status).toBe(409)
  expect(((await res.json()) as { error: { code: string; status: number } }).error).toMatchObject({ code: 'winner_disqualified', status: 409 })
  expect(await read(t.id)).toEqual(before)
  expect(await corrections(matchId)).toBe(0)
}

describe.each(['single_elimination', 'double_elimination', 'round_robin', 'swiss'])('%s', (format) => {
  test('the walkover a disqualification gave the opponent cannot be corrected to the disqualified player', async () => {
    const s = await started(format)
    const m = firstRunning(s.t)
    const [stays, out] = [m.slot1ParticipantId!, m.slot2ParticipantId!]
    expect((await disqualify(s.t, out)).status).toBe(200)
    const t = await read(s.t.id)
    expect(t.matches.find((x) => x.id === m.id)).toMatchObject({ status: 'decided', winnerParticipantId: stays })
    await expectRefused(t, m.id, out)
  })
})

describe.each(['round_robin', 'swiss'])('%s', (format) => {
  test('a result the disqualified player lost in play cannot be corrected to them either; another player can still be corrected in', async () => {
    const s = await started(format)
    const [m, other] = s.t.matches.filter((x) => x.status === 'running') as [Match, Match]
    const [winner, loser] = [m.slot1ParticipantId!, m.slot2ParticipantId!]
    const body = { outcome: 'WIN', winnerParticipantId: winner }
    await claim(ctx, s.gameId, s.gameKey, playerOf(s.t, s.people, winner), m.id, body)
    await claim(ctx, s.gameId, s.gameKey, playerOf(s.t, s.people, loser), m.id, body)
    // The other match of the round played too, so the loser (in Swiss) has no match left to forfeit but stays in.
    const otherBody = { outcome: 'WIN', winnerParticipantId: other.slot1ParticipantId }
    await claim(ctx, s.gameId, s.gameKey, playerOf(s.t, s.people, other.slot1ParticipantId!), other.id, otherBody)
    await claim(ctx, s.gameId, s.gameKey, playerOf(s.t, s.people, other.slot2ParticipantId!), other.id, otherBody)
    expect((await disqualify(s.t, loser)).status).toBe(200)
    const t = await read(s.t.id)
    expect(t.status).toBe('running')
    await expectRefused(t, m.id, loser)
    // The rule is about the disqualified player: in round robin (nothing follows from a match) the other match still corrects.
    // In Swiss the next round is paired already, the disqualified player's match a walkover: too late for any correction.
    const res = await correct(other.id, other.slot2ParticipantId!)
    if (format === 'round_robin') expect(res.status).toBe(200)
    else expect(((await res.json()) as { error: { code: string } }).error.code).toBe('correction_too_late')
  })
})

test('single elimination: a played result cannot be corrected to a player disqualified later in the bracket', async () => {
  const s = await started('single_elimination')
  const [semi1, semi2] = s.t.matches.filter((x) => x.status === 'running') as [Match, Match]
  const win = async (m: Match, winner: string) => {
    const body = { outcome: 'WIN', winnerParticipantId: winner }
    await claim(ctx, s.gameId, s.gameKey, playerOf(s.t, s.people, m.slot1ParticipantId!), m.id, body)
    await claim(ctx, s.gameId, s.gameKey, playerOf(s.t, s.people, m.slot2ParticipantId!), m.id, body)
  }
  // Both semi-finals played; one finalist is disqualified before the final is played: the final is the other's walkover.
  await win(semi1, semi1.slot1ParticipantId!)
  await win(semi2, semi2.slot1ParticipantId!)
  const finalist = semi2.slot1ParticipantId!
  expect((await disqualify(s.t, finalist)).status).toBe(200)
  const t = await read(s.t.id)
  const final = t.matches.find((x) => x.round === 2 && x.bracket === 'winners')!
  expect(final).toMatchObject({ status: 'decided', winnerParticipantId: semi1.slot1ParticipantId })
  await expectRefused(t, final.id, finalist)
})

test('the console offers no disqualified player as a new winner, and a forged form is refused with the reason', async () => {
  const s = await started('single_elimination')
  const m = firstRunning(s.t)
  const [stays, out] = [m.slot1ParticipantId!, m.slot2ParticipantId!]
  expect((await disqualify(s.t, out)).status).toBe(200)
  const moderator = await operatorOf(ctx, 'moderator')
  const login = await ctx.handle(req('/console/login', { method: 'POST', headers: FORM, body: new URLSearchParams({ name: moderator.name, password: moderator.password }).toString() }))
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!
  const page = await (await ctx.handle(req(`/console/tournaments/${s.t.id}`, { headers: { cookie } }))).text()
  expect(page).not.toContain(`/matches/${m.id}/correct`)
  expect(page).toContain('the other player is disqualified')
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page)![1]!
  const before = await read(s.t.id)
  const forged = await ctx.handle(req(`/console/tournaments/${s.t.id}/matches/${m.id}/correct`, { method: 'POST', headers: { cookie, ...FORM }, body: new URLSearchParams({ _csrf: csrf, winnerParticipantId: out, reason: 'forged' }).toString() }))
  expect(forged.status).toBe(409)
  expect(await forged.text()).toContain('This participant is disqualified')
  expect(await read(s.t.id)).toEqual(before)
  expect(before.matches.find((x) => x.id === m.id)!.winnerParticipantId).toBe(stays)
})
