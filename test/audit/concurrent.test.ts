// Concurrent operator actions and the audit chain (contract §11, §12). On
// PostgreSQL, two instances on one database (two apps, two pools), every
// action sent to one or the other at the same moment: units of work with row
// locks (resolve and disqualify run READ COMMITTED) interleaved with
// SERIALIZABLE ones (credit, adjust, ban), and the same action sent to both
// at once (one resolves, the other is 409; one credit, the other a replay).
// Afterwards the chain verifies, its seqs follow it, its head is its last
// record, and there is exactly one record per change that committed: none
// lost, none doubled by a retried unit of work. On SQLite (one writer, one
// instance) the same burst goes to one app.
import { afterAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { onEngine, postJson, tempDir, type TestApp } from '../helpers/app'
import { admin, createArenaApp, createGame, players, startedTournament, type Player, type TournamentView } from '../helpers/arena'
import { headSeq, recordsAfter } from './support'

const dataDir = tempDir('arena-audit-concurrent-')
const one = await createArenaApp({}, { dataDir })
// Two apps in one process on one SQLite file would wait on the file lock on the JavaScript thread: SQLite runs one instance.
const two = onEngine('postgres') ? await createArenaApp({}, { dataDir }) : one
afterAll(async () => {
  await one.close()
  if (two !== one) await two.close()
  rmSync(dataDir, { recursive: true, force: true })
})

const ROUNDS = 6

async function send(app: TestApp, path: string, body: unknown = {}) {
  const res = await app.handle(postJson(`/api/v1/admin${path}`, body, admin))
  return { status: res.status, body: (await res.json()) as Record<string, any> }
}

test(`a burst of operator actions on ${onEngine('postgres') ? 'two instances' : 'one instance'}: one record per change, the chain intact`, async () => {
  const { game } = await createGame(one, 'Concurrent Audit Duel')
  const tournaments: TournamentView[] = []
  const people: Player[][] = []
  for (let i = 0; i < ROUNDS; i++) {
    const pair = await players(one, 2)
    people.push(pair)
    tournaments.push(await startedTournament(one, game.id, pair))
  }
  const bystanders = await players(two, ROUNDS)
  const start = await headSeq(one)
  const retriesBefore = onEngine('postgres') ? one.postgres.retries + two.postgres.retries : 0

  const apps = [one, two]
  const burst: Promise<{ what: string; status: number }>[] = []
  const tagged = (what: string, answer: Promise<{ status: number }>) => burst.push(answer.then(({ status }) => ({ what, status })))
  for (let i = 0; i < ROUNDS; i++) {
    const [a, b] = [apps[i % 2]!, apps[(i + 1) % 2]!]
    const final = tournaments[i]!.matches[0]!
    // Row-locked units of work, each sent to both instances at once: one acts, the other is refused.
    if (i % 2 === 0) {
      for (const app of [a, b]) tagged(`resolve ${i}`, send(app, `/matches/${final.id}/resolve`, { winnerParticipantId: final.slot1ParticipantId }))
    } else {
      for (const app of [a, b]) tagged(`disqualify ${i}`, send(app, `/tournaments/${tournaments[i]!.id}/participants/${final.slot2ParticipantId}/disqualify`, { reason: `round ${i}` }))
    }
    // Serializable ones: the same credit on both (one credits, the other replays it), an adjustment, a ban.
    const user = bystanders[i]!.userId
    for (const app of [b, a]) tagged(`credit ${i}`, send(app, `/wallets/${user}/credit`, { amount: '10', reference: `burst-${i}` }))
    tagged(`adjust ${i}`, send(a, `/wallets/${people[i]![0]!.userId}/adjust`, { amount: '3', reason: `goodwill ${i}`, reference: `burst-adjust-${i}` }))
    tagged(`ban ${i}`, send(b, `/users/${people[i]![1]!.userId}/ban`, { reason: `burst ${i}` }))
  }
  const answers = await Promise.all(burst)
  if (onEngine('postgres')) {
    // How often a unit of work ran again (a serialization failure on the chain's head or the rows it raced for): each retry rolled back its first append.
    console.log(`audit burst: ${answers.length} requests, ${one.postgres.retries + two.postgres.retries - retriesBefore} units of work run again`)
  }

  // Each pair sent to both instances: exactly one acted (a credit's replay is a 200 that changes nothing).
  for (let i = 0; i < ROUNDS; i++) {
    const decisive = answers.filter((x) => x.what === (i % 2 === 0 ? `resolve ${i}` : `disqualify ${i}`)).map((x) => x.status)
    expect(decisive.sort()).toEqual([200, 409])
    expect(answers.filter((x) => x.what === `credit ${i}`).map((x) => x.status)).toEqual([200, 200])
    expect(answers.filter((x) => x.what === `adjust ${i}` || x.what === `ban ${i}`).map((x) => x.status)).toEqual([200, 200])
  }

  const records = await recordsAfter(one, start)
  const actions = (action: string) => records.filter((r) => r.action === action).map((r) => r.target).sort()
  // One record per change that committed: none lost, none doubled by a unit of work run again.
  expect(records).toHaveLength(ROUNDS * 4)
  expect(actions('match.resolve')).toEqual(tournaments.filter((_, i) => i % 2 === 0).map((t) => t.matches[0]!.id).sort())
  expect(actions('participant.disqualify')).toEqual(tournaments.filter((_, i) => i % 2 === 1).map((t) => t.matches[0]!.slot2ParticipantId).sort())
  expect(actions('wallet.credit')).toEqual(bystanders.map((p) => p.userId).sort())
  expect(actions('wallet.adjust')).toEqual(people.map((pair) => pair[0]!.userId).sort())
  expect(actions('user.ban')).toEqual(people.map((pair) => pair[1]!.userId).sort())
  expect(new Set(records.map((r) => r.requestId)).size).toBe(records.length)

  // The seqs follow the chain: each record links to the one before it, and the head is the last.
  const all = await recordsAfter(one, 0)
  for (let k = 1; k < all.length; k++) {
    expect(all[k]!.seq).toBeGreaterThan(all[k - 1]!.seq)
    expect(all[k]!.prevHash).toBe(all[k - 1]!.hash)
  }
  expect(await one.storage.read.audit.auditHead()).toEqual({ seq: all.at(-1)!.seq, hash: all.at(-1)!.hash })
  for (const app of new Set(apps)) expect(await app.services.audit.verify(app.storage.read.audit)).toEqual({ ok: true, rows: all.length })
}, 60_000)
