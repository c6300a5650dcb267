// Races of issue 19's settle job and corrections against claims, on two
// instances of one database (two SQLite connections to one file, or two
// PostgreSQL pools): whatever the order, exactly one of them decides.
import { describe, expect, test } from 'bun:test'
import { and, inArray } from 'drizzle-orm'
import { JOB_WRITE_OPTIONS } from '../../src/jobs/worker'
import { settleMatchDeadline } from '../../src/modules/matches/deadlines'
import { postJson } from '../helpers/app'
import { describeOnEngine } from '../helpers/engine'
import { admin, claim, createGame, openSession, playerOf, players, playOut, submit, tournament, twoInstances, type TournamentView } from '../helpers/arena'

const { one, two } = await twoInstances()
const { db, tables: { outboxEvents } } = one.peek

async function started(count: number, options?: Record<string, unknown>, format = 'single_elimination') {
  const { game, gameKey } = await createGame(one)
  const people = await players(one, count)
  const created = await one.handle(postJson('/api/v1/admin/tournaments', { gameId: game.id, name: 'Race', format, participants: people.map((p) => p.userId), ...(options ? { options } : {}) }, admin))
  const { tournament: t } = (await created.json()) as { tournament: TournamentView }
  const res = await one.handle(postJson(`/api/v1/admin/tournaments/${t.id}/start`, {}, admin))
  return { gameId: game.id, gameKey, people, t: ((await res.json()) as { tournament: TournamentView }).tournament }
}

const ROUNDS = 6

describe('races', () => {
  test('a claim racing the settle job: one of them decides, never both', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const { gameId, gameKey, people, t } = await started(2, { matchDeadlineS: 5 })
      const m = t.matches[0]!
      const a = playerOf(t, people, m.slot1ParticipantId!)
      const b = playerOf(t, people, m.slot2ParticipantId!)
      const sa = (await (await openSession(one, gameId, gameKey, a, m.id)).json()) as { token: string }
      expect((await submit(one, gameId, gameKey, a, sa.token, { outcome: 'WIN', winnerParticipantId: m.slot1ParticipantId })).status).toBe(200)
      const sb = (await (await openSession(two, gameId, gameKey, b, m.id)).json()) as { token: string }
      one.clock.advance(5_000)
      two.clock.advance(5_000)
      // b agrees on even rounds, contradicts on odd ones.
      const winner = i % 2 === 0 ? m.slot1ParticipantId : m.slot2ParticipantId
      const [claimed] = await Promise.all([submit(two, gameId, gameKey, b, sb.token, { outcome: 'WIN', winnerParticipantId: winner }), one.runJobs()])
      const after = (await tournament(one, t.id)).matches[0]!
      const events = await db.select().from(outboxEvents).where(and(inArray(outboxEvents.userId, [a.userId, b.userId]), inArray(outboxEvents.type, ['match.decided', 'match.disputed'])))
      const mine = events.filter((e) => (e.data as { matchId: string }).matchId === m.id)
      // One outcome, told once to each player.
      expect(mine).toHaveLength(2)
      expect(new Set(mine.map((e) => JSON.stringify([e.type, e.data]))).size).toBe(1)
      if (claimed.status === 200) {
        expect(after.status).toBe(i % 2 === 0 ? 'decided' : 'disputed')
        expect(mine[0]!.data).not.toHaveProperty('reason', 'no_show')
      } else {
        expect(claimed.status).toBe(409)
        expect(after).toMatchObject({ status: 'decided', winnerParticipantId: m.slot1ParticipantId })
        expect(mine[0]!.data).toMatchObject({ reason: 'no_show' })
      }
    }
  }, 60_000)

  test('a correction racing a claim on the match it fed: one of them wins', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const { gameId, gameKey, people, t } = await started(4)
      const [m1, m2] = t.matches.filter((m) => m.status === 'running')
      await playOut(one, gameId, gameKey, t, people, m1!, m1!.slot1ParticipantId!)
      await playOut(one, gameId, gameKey, t, people, m2!, m2!.slot1ParticipantId!)
      const final = (await tournament(one, t.id)).matches.find((m) => m.id === m1!.nextMatchId)!
      const claimant = playerOf(t, people, m2!.slot1ParticipantId!)
      const session = (await (await openSession(two, gameId, gameKey, claimant, final.id)).json()) as { token: string }
      const [corrected, claimed] = await Promise.all([
        one.handle(postJson(`/api/v1/admin/matches/${m1!.id}/correct`, { winnerParticipantId: m1!.slot2ParticipantId, reason: 'race' }, admin)),
        submit(two, gameId, gameKey, claimant, session.token, { outcome: 'WIN', winnerParticipantId: m2!.slot1ParticipantId }),
      ])
      const after = await tournament(one, t.id)
      const fixed = after.matches.find((m) => m.id === m1!.id)!
      if (corrected.status === 200) {
        // Corrected first: the session was for the old round of claims.
        expect(claimed.status).toBe(401)
        expect(fixed.winnerParticipantId).toBe(m1!.slot2ParticipantId)
      } else {
        expect(corrected.status).toBe(409)
        expect(((await corrected.json()) as { error: { code: string } }).error.code).toBe('correction_too_late')
        expect(claimed.status).toBe(200)
        expect(fixed.winnerParticipantId).toBe(m1!.slot1ParticipantId)
      }
      const finalAfter = after.matches.find((m) => m.id === final.id)!
      expect([finalAfter.slot1ParticipantId, finalAfter.slot2ParticipantId]).toContain(fixed.winnerParticipantId)
    }
  }, 60_000)

  test('a Swiss correction racing a claim in the round it would pair again: one of them wins', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const { gameId, gameKey, people, t } = await started(4, { rounds: 2 }, 'swiss')
      for (const m of t.matches) await playOut(one, gameId, gameKey, t, people, m, m.slot1ParticipantId!)
      const paired = (await tournament(one, t.id)).matches.filter((m) => m.round === 2)
      const next = paired[0]!
      const claimant = playerOf(t, people, next.slot1ParticipantId!)
      const session = (await (await openSession(two, gameId, gameKey, claimant, next.id)).json()) as { token: string }
      const fixedMatch = t.matches[0]!
      const [corrected, claimed] = await Promise.all([
        one.handle(postJson(`/api/v1/admin/matches/${fixedMatch.id}/correct`, { winnerParticipantId: fixedMatch.slot2ParticipantId, reason: 'race' }, admin)),
        submit(two, gameId, gameKey, claimant, session.token, { outcome: 'WIN', winnerParticipantId: next.slot1ParticipantId }),
      ])
      const after = (await tournament(one, t.id)).matches
      if (corrected.status === 200) {
        // Corrected first: round 2 was paired again and the session died with its match.
        expect(claimed.status).toBe(401)
        expect(after.some((m) => m.id === next.id)).toBe(false)
        expect(after.find((m) => m.id === fixedMatch.id)!.winnerParticipantId).toBe(fixedMatch.slot2ParticipantId)
      } else {
        expect(corrected.status).toBe(409)
        expect(((await corrected.json()) as { error: { code: string } }).error.code).toBe('correction_too_late')
        expect(claimed.status).toBe(200)
        expect(after.filter((m) => m.round === 2).map((m) => m.id)).toEqual(paired.map((m) => m.id))
      }
    }
  }, 60_000)
})

// A settle job whose unit of work began before a claim committed on the other
// instance must still see that claim once it holds the match: the job then
// advances the claimant (no_show), never disputes the match. Run as the job
// worker runs it (JOB_WRITE_OPTIONS); in a SERIALIZABLE snapshot taken
// before the claim it found no claim and disputed the match. PostgreSQL only:
// on SQLite a write holds the one write lock, so the claim cannot commit meanwhile.
describeOnEngine('postgres', 'a settle job against a claim that committed after it began', () => {
  test('the claim counts: the claimant advances (no_show)', async () => {
    const { gameId, gameKey, people, t } = await started(2, { matchDeadlineS: 5 })
    const m = t.matches[0]! as typeof t.matches[0] & { deadline: string }
    const claimant = playerOf(t, people, m.slot2ParticipantId!)
    let began!: () => void
    const snapshotTaken = new Promise<void>((resolve) => (began = resolve))
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const job = one.services.storage.write(async (tx) => {
      await tx.games.formatOf(t.id) // the unit of work's first statement
      began()
      await gate
      await settleMatchDeadline(tx, one.clock, m.id, new Date(m.deadline).getTime(), one.services)
    }, JOB_WRITE_OPTIONS)
    await snapshotTaken
    const claimed = await claim(two, gameId, gameKey, claimant, m.id, { outcome: 'WIN', winnerParticipantId: m.slot2ParticipantId })
    expect(claimed.decision).toBe('pending')
    release()
    await job
    const after = (await tournament(one, t.id)).matches[0]!
    expect({ status: after.status, winner: after.winnerParticipantId }).toEqual({ status: 'decided', winner: m.slot2ParticipantId })
  })
})
