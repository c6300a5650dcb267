// Matchmaking across two instances on one database (contract §16, issue 39):
// two apps on one data dir (two SQLite connections to one file, or two
// PostgreSQL pools to one database). Whatever instance a request reaches and
// however the units of work interleave:
// - tickets joined on both instances and paired by matcher ticks running on
//   both at once: each ticket in exactly one match, each stake escrowed once;
// - the matchmaker loop under its lease (PostgreSQL): one runner at a time
//   across instances, and what it pairs is paired once;
// - 20 players at once accepting challenges (each accepted on both instances
//   while its challenger cancels it) and joining a staked queue while the
//   matcher ticks on both: each challenge accepted or cancelled, never both,
//   at most one match each, each stake escrowed exactly once;
// - both players confirming a ready check at the same instant on different
//   instances: the match starts once (one `match.ready` each, one deadline job).
// After each, the rows hold every stake invariant (stakeProblems in
// test/helpers/matchmaking.ts) and `arena ledger check` passes.
import { describe, expect, test } from 'bun:test'
import type { TestApp } from '../helpers/app'
import { createGame, players, twoInstances, type Player } from '../helpers/arena'
import { eventsOf } from '../helpers/account'
import { describeOnEngine } from '../helpers/engine'
import { answerChallenge, challenge, createQueue, expectLedgerSound, fund, joinQueue, rawSqlOf, ready, snapshotOf, stakeProblems, type Challenge } from '../helpers/matchmaking'

const { one, two } = await twoInstances()
/** The instance the i-th request of a race goes to: they alternate. */
const instance = (i: number): TestApp => (i % 2 === 0 ? one : two)
const PLAYERS = 20
const sql = rawSqlOf(one)
/** The players of every test (each test has its own game), signed up on alternating instances and funded for all of them. */
const people = [...(await players(one, PLAYERS / 2)), ...(await players(two, PLAYERS / 2))]
await fund(one, people, '100')

/** Every match of the game with its two players (by user id), from the rows. */
async function matchesOf(gameId: string): Promise<{ id: string; kind: string; status: string; users: string[] }[]> {
  const rows = await sql(
    `SELECT m.id, m.kind, m.status, p1.user_id AS u1, p2.user_id AS u2 FROM matches m
     JOIN participants p1 ON p1.id = m.slot1_participant_id JOIN participants p2 ON p2.id = m.slot2_participant_id
     WHERE m.game_id = '${gameId}' ORDER BY m.id`,
  )
  return rows.map((r) => ({ id: String(r.id), kind: String(r.kind), status: String(r.status), users: [String(r.u1), String(r.u2)] }))
}

/** How many `stake` movements the ledger has for each of `matchIds`. */
async function stakeMovements(matchIds: string[]): Promise<number[]> {
  const refs = (await sql("SELECT reference FROM ledger_transactions WHERE kind = 'stake'")).map((r) => String(r.reference))
  return matchIds.map((id) => refs.filter((r) => r.startsWith(`stake:${id}:`)).length)
}

async function expectSound(): Promise<void> {
  expect(await stakeProblems(snapshotOf(one))).toEqual([])
  await expectLedgerSound(one)
}

/** A game with a staked queue (1 each) whose window takes everyone. */
async function setUp(name: string, queue: Record<string, unknown>): Promise<string> {
  const { game } = await createGame(one, name)
  await createQueue(two, game.id, { stake: '1', window: { initial: 10_000, widenPerSecond: 0, max: 10_000 }, ...queue })
  return game.id
}

describe('matchmaking on two instances', () => {
  test('tickets joined on both instances, the matcher ticking on both at once, again and again: each ticket in one match, each stake escrowed once', async () => {
    const gameId = await setUp('Two matchers', {})
    const joins = await Promise.all(people.map((p, i) => joinQueue(instance(i), gameId, 'ranked', p)))
    expect(joins.map((r) => r.status)).toEqual(people.map(() => 201))
    let made = 0
    for (let round = 0; round < 4; round++) {
      const ticks = await Promise.all([one, two, one, two].map((app) => app.services.matchmaking.matchTick()))
      made += ticks.reduce((a, b) => a + b, 0)
    }
    expect(made).toBe(PLAYERS / 2)
    const matches = await matchesOf(gameId)
    expect(matches).toHaveLength(PLAYERS / 2)
    // Every player in exactly one match, told once.
    expect(matches.flatMap((m) => m.users).sort()).toEqual(people.map((p) => p.userId).sort())
    for (const p of people) expect(await eventsOf(one, p.userId, 'match.found')).toHaveLength(1)
    expect(await stakeMovements(matches.map((m) => m.id))).toEqual(matches.map(() => 2))
    await expectSound()
  })

  test('20 players accept challenges (each on both instances while its challenger cancels) and join a queue while the matcher ticks on both: no stake escrowed twice', async () => {
    const gameId = await setUp('Challenge storm', {})
    // Challenger 2k challenges 2k + 1, for 2; the queue takes 1.
    const made: Challenge[] = []
    for (let k = 0; k < PLAYERS / 2; k++) {
      const res = await challenge(instance(k), gameId, people[2 * k]!, { opponent: people[2 * k + 1]!.username, stake: '2' })
      expect(res.status).toBe(201)
      made.push(((await res.json()) as { challenge: Challenge }).challenge)
    }
    const ticks = () => Promise.all([one.services.matchmaking.matchTick(), two.services.matchmaking.matchTick()])
    const [answers, joins] = await Promise.all([
      Promise.all(
        made.map(async (c, k) => {
          const [challenger, opponent] = [people[2 * k]!, people[2 * k + 1]!]
          const all = await Promise.all([answerChallenge(one, c.id, 'accept', opponent), answerChallenge(two, c.id, 'accept', opponent), answerChallenge(instance(k + 1), c.id, 'cancel', challenger)])
          return Promise.all(all.map(async (r) => ({ status: r.status, code: r.status === 200 ? null : ((await r.json()) as { error: { code: string } }).error.code })))
        }),
      ),
      Promise.all(people.map((p, i) => joinQueue(instance(i + 1), gameId, 'ranked', p))),
      ticks(),
      ticks(),
    ])
    expect(joins.map((r) => r.status)).toEqual(people.map(() => 201))
    await ticks()
    await ticks()

    const matches = await matchesOf(gameId)
    const closed = { status: 409, code: 'challenge_closed' }
    for (const [k, [acceptOne, acceptTwo, cancel]] of answers.entries()) {
      const accepted = [acceptOne!, acceptTwo!].filter((a) => a.status === 200).length
      // Either one acceptance won (the other acceptance and the cancel refused), or the cancel did (both acceptances refused).
      if (accepted === 1) expect(cancel).toEqual(closed)
      else expect({ challenge: k, acceptOne, acceptTwo, cancel }).toEqual({ challenge: k, acceptOne: closed, acceptTwo: closed, cancel: { status: 200, code: null } })
      const ofChallenge = matches.filter((m) => m.kind === 'challenge' && m.users.includes(people[2 * k]!.userId))
      expect(ofChallenge).toHaveLength(accepted)
    }
    // The queue paired all 20 (each pair's match is its own).
    const queued = matches.filter((m) => m.kind === 'queue')
    expect(queued).toHaveLength(PLAYERS / 2)
    expect(queued.flatMap((m) => m.users).sort()).toEqual(people.map((p) => p.userId).sort())
    expect(await stakeMovements(matches.map((m) => m.id))).toEqual(matches.map(() => 2))
    const acceptedCount = answers.filter(([x, y]) => x!.status === 200 || y!.status === 200).length
    console.log(`challenge storm: ${acceptedCount} of ${made.length} challenges accepted, ${made.length - acceptedCount} cancelled first`)
    await expectSound()
  })

  test('both players confirm the ready check at the same instant, on different instances (each twice): the match starts once', async () => {
    const gameId = await setUp('Ready together', { matchDeadlineS: 600 })
    for (const [i, p] of people.entries()) expect((await joinQueue(instance(i), gameId, 'ranked', p)).status).toBe(201)
    expect(await one.services.matchmaking.matchTick()).toBe(PLAYERS / 2)
    const matches = await matchesOf(gameId)
    const byUser = new Map(people.map((p) => [p.userId, p]))
    const answers = await Promise.all(
      matches.flatMap((m) => {
        const [a, b] = m.users.map((u) => byUser.get(u)!) as [Player, Player]
        return [ready(one, m.id, a), ready(two, m.id, b), ready(two, m.id, a), ready(one, m.id, b)]
      }),
    )
    expect(answers.map((r) => r.status)).toEqual(answers.map(() => 200))
    expect((await matchesOf(gameId)).map((m) => m.status)).toEqual(matches.map(() => 'running'))
    for (const m of matches) {
      for (const userId of m.users) {
        const told = (await eventsOf(one, userId, 'match.ready')) as { data: { matchId: string } }[]
        expect({ userId, ready: told.filter((e) => e.data.matchId === m.id).length }).toEqual({ userId, ready: 1 })
      }
    }
    const jobs = (await sql("SELECT payload FROM jobs WHERE kind = 'settle_match_deadline'")).map((r) => (typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload) as { matchId: string })
    expect(matches.map((m) => jobs.filter((j) => j.matchId === m.id).length)).toEqual(matches.map(() => 1))
    await expectSound()
  })
})

// On SQLite a data dir has one server, its loops leased within the process (test/scale/loop-leases.test.ts).
describeOnEngine('postgres', 'the matchmaker loop across instances', () => {
  test('under its lease one runner ticks at a time; two runners at once pair each ticket once', async () => {
    const gameId = await setUp('Leased matcher', {})
    let running = 0
    let most = 0
    let ran = 0
    const tick = (app: TestApp) =>
      app.storage.loopLeases.runExclusive('matchmaker', async () => {
        running++
        most = Math.max(most, running)
        ran++
        try {
          // Long enough that the other instance's attempt falls inside it.
          await Bun.sleep(20)
          await app.services.matchmaking.matchTick()
        } finally {
          running--
        }
      })
    // While one instance holds the loop, the other's attempt is refused and pairs nothing.
    expect((await Promise.all([joinQueue(one, gameId, 'ranked', people[0]!), joinQueue(two, gameId, 'ranked', people[1]!)])).map((r) => r.status)).toEqual([201, 201])
    let release!: () => void
    let entered!: () => void
    const inside = new Promise<void>((resolve) => (entered = resolve))
    const released = new Promise<void>((resolve) => (release = resolve))
    const holding = one.storage.loopLeases.runExclusive('matchmaker', async () => {
      entered()
      await released
      expect(await one.services.matchmaking.matchTick()).toBe(1)
    })
    await inside
    expect(await tick(two)).toBe(false)
    expect(await matchesOf(gameId)).toEqual([])
    release()
    expect(await holding).toBe(true)
    // The rest join two at a time, on alternating instances, while both instances try to run the loop at once.
    let took = 0
    for (let i = 2; i < PLAYERS; i += 2) {
      expect((await Promise.all([joinQueue(one, gameId, 'ranked', people[i]!), joinQueue(two, gameId, 'ranked', people[i + 1]!)])).map((r) => r.status)).toEqual([201, 201])
      took += (await Promise.all([tick(one), tick(two)])).filter(Boolean).length
    }
    expect(most).toBe(1)
    expect(ran).toBe(took)
    const matches = await matchesOf(gameId)
    expect(matches.flatMap((m) => m.users).sort()).toEqual(people.map((p) => p.userId).sort())
    await expectSound()
  })
})
