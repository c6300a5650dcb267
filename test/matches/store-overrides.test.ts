// The matches store is written once (src/db/stores/matches.ts,
// MatchesQueries); SQLite's subclass runs the claim and session-issue paths on
// statements of its own, and PostgreSQL's locks, inside a write, what a claim
// decides on. An override may be faster or lock; it may not answer or write
// differently. Here each engine's store and the query written once run on the
// same rows (outside a write and inside one) and must agree.
import { afterAll, describe, expect, test } from 'bun:test'
import { randomUUID } from 'node:crypto'
import { eq } from 'drizzle-orm'
import { UniqueViolationError } from '../../src/db/errors'
import { MatchesQueries } from '../../src/db/stores/matches'
import type { QueryScope } from '../../src/db/stores/scope'
import type { MatchesStore, NewClaim } from '../../src/modules/matches/store'
import { sha256Hex } from '../../src/shared/crypto'
import { banUser } from '../helpers/accounts'
import { claim, createArenaApp, createGame, openSession, players, playerOf, startedTournament, submit } from '../helpers/arena'

const ctx = await createArenaApp()
afterAll(() => ctx.close())
const { game, gameKey } = await createGame(ctx)

/** The query written once, on the scope the engine's store runs on. */
function writtenOnce(store: MatchesStore): MatchesQueries {
  const scope = (store as unknown as { scope: QueryScope }).scope
  expect(scope.db).toBeDefined()
  return new MatchesQueries(scope)
}

const byParticipant = <T extends { participantId: string }>(rows: T[]) => [...rows].sort((a, b) => a.participantId.localeCompare(b.participantId))

describe('the matches store: each engine override agrees with the query written once', () => {
  test('the claim and session-issue reads, on matches pending, disputed and waiting, sessions open and spent, users seated, outside and banned', async () => {
    const people = await players(ctx, 4)
    const [outsider, banned] = await players(ctx, 2)
    expect((await banUser(ctx, banned!.userId, { reason: 'spam' })).status).toBe(200)
    const t = await startedTournament(ctx, game.id, people)
    const [pending, disputed] = t.matches.filter((m) => m.status === 'running')
    const waiting = t.matches.find((m) => m.status === 'waiting')!
    const [p1, p2] = [playerOf(t, people, pending!.slot1ParticipantId!), playerOf(t, people, pending!.slot2ParticipantId!)]
    const [d1, d2] = [playerOf(t, people, disputed!.slot1ParticipantId!), playerOf(t, people, disputed!.slot2ParticipantId!)]

    // The pending match: one claim, made with a token now spent; an open session for the other seat.
    const spent = ((await (await openSession(ctx, game.id, gameKey, p1, pending!.id)).json()) as { token: string }).token
    expect((await submit(ctx, game.id, gameKey, p1, spent, { outcome: 'WIN', winnerParticipantId: pending!.slot1ParticipantId })).status).toBe(200)
    const opened = await openSession(ctx, game.id, gameKey, p2, pending!.id)
    expect(opened.status).toBe(201)
    const open = ((await opened.json()) as { token: string }).token
    // The disputed match: two claims that disagree.
    expect((await claim(ctx, game.id, gameKey, d1, disputed!.id, { outcome: 'WIN', winnerParticipantId: disputed!.slot1ParticipantId })).decision).toBe('pending')
    expect((await claim(ctx, game.id, gameKey, d2, disputed!.id, { outcome: 'WIN', winnerParticipantId: disputed!.slot2ParticipantId })).decision).toBe('dispute')

    const matchIds = [pending!.id, disputed!.id, waiting.id, 'no-such-match']
    const userIds = [p1.userId, p2.userId, d1.userId, outsider!.userId, banned!.userId, 'no-such-user']
    const gameIds = [game.id, 'no-such-game']
    const hashes = [sha256Hex(spent), sha256Hex(open), sha256Hex('no-such-token'), '']
    const seats = [pending!.slot1ParticipantId!, pending!.slot2ParticipantId!, disputed!.slot1ParticipantId!]

    async function agree(engine: MatchesStore, once: MatchesQueries): Promise<number> {
      expect(engine.constructor.name).not.toBe(MatchesQueries.name)
      let compared = 0
      const same = async <T>(a: Promise<T>, b: Promise<T>) => {
        expect(await a).toEqual(await b)
        compared++
      }
      for (const id of matchIds) {
        await same(engine.byId(id), once.byId(id))
        for (const round of [1, 2]) await same(engine.claimsOf(id, round).then(byParticipant), once.claimsOf(id, round).then(byParticipant))
        for (const seat of seats) await same(engine.hasClaimed(id, 1, seat), once.hasClaimed(id, 1, seat))
        for (const gameId of gameIds) for (const userId of userIds) await same(engine.issueContext(gameId, id, userId), once.issueContext(gameId, id, userId))
      }
      for (const hash of hashes) {
        await same(engine.sessionByTokenHash(hash), once.sessionByTokenHash(hash))
        for (const gameId of gameIds) {
          for (const userId of userIds) {
            const sorted = (c: Awaited<ReturnType<MatchesStore['claimContext']>>) => ({ ...c, claims: byParticipant(c.claims) })
            await same(engine.claimContext(gameId, userId, hash).then(sorted), once.claimContext(gameId, userId, hash).then(sorted))
          }
        }
      }
      for (const some of [[], [seats[0]!], [seats[0]!, seats[1]!], [seats[1]!, seats[1]!], ['nobody']]) {
        for (const userId of userIds) await same(engine.seatOf(some, userId), once.seatOf(some, userId))
      }
      return compared
    }

    // What the rows hold, so that agreeing is not agreeing on nothing.
    const read = ctx.services.storage.read.matches
    const context = await read.claimContext(game.id, p2.userId, sha256Hex(open))
    expect({ session: context.session?.userId, match: context.match?.id, claims: context.claims.length, key: context.keyHash !== null }).toEqual({
      session: p2.userId,
      match: pending!.id,
      claims: 1,
      key: true,
    })
    expect((await read.claimContext(game.id, banned!.userId, '')).standing?.ban?.reason).toBe('spam')
    expect(await read.issueContext(game.id, pending!.id, p1.userId)).toMatchObject({ seat: pending!.slot1ParticipantId, claimed: true, gameId: game.id })
    expect((await read.sessionByTokenHash(sha256Hex(spent)))?.consumedAt).not.toBeNull()
    expect((await read.claimsOf(disputed!.id, 1)).length).toBe(2)

    const outside = await agree(read, writtenOnce(read))
    // Inside a write: PostgreSQL's store reads the session and the match FOR NO KEY UPDATE.
    const inside = await ctx.services.storage.write((tx) => agree(tx.matches, writtenOnce(tx.matches)))
    expect(outside).toBeGreaterThan(150)
    expect(inside).toBe(outside)
  })

  test("the claim path's writes leave the rows the queries written once leave", async () => {
    // Twin cups of two: the engine's store writes on one, the query written once on the other, the same writes.
    const twins = await Promise.all([0, 1].map(async () => {
      const people = await players(ctx, 2)
      const t = await startedTournament(ctx, game.id, people)
      const match = t.matches[0]!
      return { t, match, player: playerOf(t, people, match.slot1ParticipantId!), sessionId: randomUUID(), tokenHash: sha256Hex(randomUUID()) }
    }))
    const now = ctx.clock.now()
    const claimOf = (twin: (typeof twins)[number]): NewClaim => ({
      matchId: twin.match.id,
      claimRound: 1,
      participantId: twin.match.slot1ParticipantId!,
      outcome: 'WIN',
      winnerParticipantId: twin.match.slot1ParticipantId!,
      score: { points: [3, 1], note: 'ünïcode' },
      gameSessionId: twin.sessionId,
      createdAt: now,
    })
    const deadline = new Date(now.getTime() + 60_000)

    await ctx.services.storage.write(async (tx) => {
      const stores = [tx.matches, writtenOnce(tx.matches)]
      for (const [i, store] of stores.entries()) {
        const twin = twins[i]!
        const m = twin.match.id
        await store.insertSession({
          id: twin.sessionId,
          tokenHash: twin.tokenHash,
          gameId: game.id,
          matchId: m,
          participantId: twin.match.slot1ParticipantId!,
          userId: twin.player.userId,
          claimRound: 1,
          expiresAt: deadline,
          createdAt: now,
        })
        await store.consumeSession(twin.sessionId, now)
        await store.insertClaim(claimOf(twin))
        await store.markDisputed(m)
        expect(await store.openMatch(m, deadline)).toMatchObject({ id: m, status: 'running', deadline })
        expect(await store.openMatch(m, null)).toBeNull()
        await store.setClaimRound(m, 2)
        await store.fillSlot(m, 2, null)
        await store.fillSlot(m, 2, twin.match.slot2ParticipantId)
        await store.markDecided(m, { winnerParticipantId: twin.match.slot1ParticipantId, outcome: 'WIN', decidedBy: 'played' }, now)
      }
    })
    // A second claim by the same seat in the same round: the primary key, mapped, on both.
    await expect(ctx.services.storage.write((tx) => tx.matches.insertClaim(claimOf(twins[0]!)))).rejects.toBeInstanceOf(UniqueViolationError)
    await expect(ctx.services.storage.write((tx) => writtenOnce(tx.matches).insertClaim(claimOf(twins[1]!)))).rejects.toBeInstanceOf(UniqueViolationError)

    // Each twin's rows, with its own ids written as the same names.
    const read = ctx.services.storage.read.matches
    const { db, t } = (read as unknown as { scope: QueryScope }).scope
    const rowsOf = async (twin: (typeof twins)[number]) => {
      const names = new Map<unknown, string>([
        [twin.match.id, 'match'],
        [twin.t.id, 'tournament'],
        [twin.match.slot1ParticipantId, 'seat1'],
        [twin.match.slot2ParticipantId, 'seat2'],
        [twin.sessionId, 'session'],
        [twin.player.userId, 'user'],
        [twin.tokenHash, 'hash'],
      ])
      const named = (row: object) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, names.get(v) ?? v]))
      return {
        match: named((await read.byId(twin.match.id))!),
        session: named((await db.select().from(t.gameSessions).where(eq(t.gameSessions.id, twin.sessionId)))[0]!),
        claims: (await db.select().from(t.matchClaims).where(eq(t.matchClaims.matchId, twin.match.id))).map(named),
      }
    }
    const [engine, once] = [await rowsOf(twins[0]!), await rowsOf(twins[1]!)]
    expect(engine.match).toMatchObject({ status: 'decided', winnerParticipantId: 'seat1', slot2ParticipantId: 'seat2', claimRound: 2, deadline, decidedAt: now })
    expect(engine.session).toMatchObject({ consumedAt: now, expiresAt: deadline, tokenHash: 'hash' })
    expect(engine.claims).toEqual([expect.objectContaining({ score: { points: [3, 1], note: 'ünïcode' }, createdAt: now, gameSessionId: 'session' })])
    expect(engine).toEqual(once)
  })
})
