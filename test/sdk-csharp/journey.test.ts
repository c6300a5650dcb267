// The C# SDK's journey against the compiled binary: `arena seed` and a staked
// queue made by the CLI, `dist/arena serve`, then a C# program
// (sdk/csharp/Tests~/Journey/Journey.cs), compiled by Mono's mcs at C# 7 and
// run by mono, plays the platform as a Unity game would through Arena.Sdk
// only. It prints one JSON line per step; this file checks each step's facts
// against the server as an operator sees them (the admin API), so the
// program cannot pass by saying so.
import { afterAll, beforeAll, describe, expect } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir, testDatabaseEnv } from '../helpers/app'
import { compileCsharp, csharpMissing, csharpSources, csharpTest, CSHARP_ROOT, runMono, type MonoResult } from '../helpers/csharp'
import { BINARY, buildBinary, run, startServe, type ServerProcess } from '../helpers/process'
import { someAddress } from '../helpers/purchases'

interface Seeded {
  game: { id: string }
  gameKey: string
  password: string
  pin: string
  players: { id: string; username: string; balance: string }[]
  tournaments: { id: string; format: string; status: string }[]
}

/** The staked queue the journey's last step plays in. */
const QUEUE = { name: 'staked', stake: '10', rake: '0.1' }

let server: ServerProcess
let seeded: Seeded
let journey: MonoResult
const steps = new Map<string, Record<string, unknown>>()
const operatorToken = 'journey-operator-token-0123456789abcdef'

async function admin<T>(path: string): Promise<T> {
  const response = await fetch(`${server.url}/api/v1/admin${path}`, { headers: { 'x-admin-token': operatorToken } })
  expect(response.status).toBe(200)
  return (await response.json()) as T
}

beforeAll(async () => {
  if (csharpMissing() !== undefined) return
  await buildBinary()
  const dir = tempDir('arena-csharp-journey-')
  const env = { ARENA_DATA_DIR: dir, ARENA_ADMIN_TOKEN: operatorToken, ...(await testDatabaseEnv()) }
  const seed = await run([BINARY, 'seed', '--json', '--players', '4'], env)
  expect(seed.code).toBe(0)
  seeded = JSON.parse(seed.stdout.trim().split('\n').at(-1)!) as Seeded
  const queue = await run(
    [BINARY, 'queue', 'create', seeded.game.id, '--name', QUEUE.name, '--stake', QUEUE.stake, '--rake', QUEUE.rake, '--window-initial', '5000', '--window-widen', '0', '--window-max', '5000', '--ready-check', '60'],
    env,
  )
  expect(queue.stderr).toBe('')
  expect(queue.code).toBe(0)
  server = await startServe([BINARY, 'serve'], env)
  const seedFile = join(dir, 'seed.json')
  writeFileSync(seedFile, JSON.stringify({ ...seeded, queue: QUEUE.name, destination: someAddress() }))
  const exe = await compileCsharp({ name: 'Journey', sources: [...csharpSources('Runtime'), ...csharpSources('Tests~/Journey')], target: 'exe' })
  journey = await runMono(exe, [server.url, seedFile], {}, 240_000)
  for (const line of journey.stdout.split('\n')) {
    if (!line.startsWith('{')) continue
    const step = JSON.parse(line) as { step: string }
    steps.set(step.step, step)
  }
}, 420_000)

afterAll(async () => {
  if (server) expect((await server.signal('SIGTERM')).code).toBe(0)
})

describe('the C# SDK against dist/arena (mono)', () => {
  csharpTest('the journey program ran to its end', () => {
    if (journey.code !== 0) console.error(journey.stdout, journey.stderr)
    expect(journey.code).toBe(0)
    expect([...steps.keys()]).toEqual(['guest', 'password', 'rotation', 'tournament', 'socket', 'purchase', 'queue'])
    expect(CSHARP_ROOT).toEndWith('sdk/csharp')
  })

  csharpTest('guest sign-in: created once, signed in again with the kept secret, the same account', async () => {
    const step = steps.get('guest') as { userId: string; created: boolean[]; identities: string[] }
    expect(step.created).toEqual([true, false])
    expect(step.identities).toEqual(['device'])
    const { user } = await admin<{ user: { id: string; email: string | null } }>(`/users/${step.userId}`)
    expect(user.email).toBeNull()
  })

  csharpTest('password sign-in: the seeded players', () => {
    const step = steps.get('password') as { userIds: string[] }
    expect(step.userIds).toEqual(seeded.players.map((p) => p.id))
  })

  csharpTest('refresh under a double-fired rotation: both rotations answered within the grace, the player still signed in', () => {
    const step = steps.get('rotation') as { rotations: number; distinctAccessTokens: number; stillSignedIn: boolean; meAfter: string }
    expect(step.rotations).toBe(2)
    expect(step.distinctAccessTokens).toBe(2)
    expect(step.stillSignedIn).toBe(true)
    expect(step.meAfter).toBe(seeded.players[0]!.id)
  })

  csharpTest('a tournament match through sessions and claims: decided as both claimed', async () => {
    const step = steps.get('tournament') as { matchId: string; winnerParticipantId: string; decisions: string[] }
    expect(step.decisions).toEqual(['pending', 'game_advance'])
    const { match } = await admin<{ match: { status: string; kind: string; decision: { winnerParticipantId: string } } }>(`/matches/${step.matchId}`)
    expect(match).toMatchObject({ status: 'decided', kind: 'tournament', decision: { winnerParticipantId: step.winnerParticipantId } })
  })

  csharpTest('the socket heard the decision', () => {
    const step = steps.get('socket') as { matchId: string; heard: string[] }
    expect(step.heard).toContain('match.decided')
    expect(step.matchId).toBe((steps.get('tournament') as { matchId: string }).matchId)
  })

  csharpTest('a PIN purchase to signed: one verify per PIN session', async () => {
    const step = steps.get('purchase') as { withdrawalId: string; status: string; valid: boolean; verifies: number; balanceDrop: string }
    const { withdrawals } = await admin<{ withdrawals: { id: string; status: string }[] }>('/withdrawals')
    expect(withdrawals.find((w) => w.id === step.withdrawalId)?.status).toBe('signed')
    expect(step.valid).toBe(true)
    expect(step.status).toBe('signed')
    expect(step.verifies).toBe(1)
    expect(step.balanceDrop).toBe('25')
  })

  csharpTest('a queue match with a stake: the winner gets the pot less the rake', async () => {
    const step = steps.get('queue') as { matchId: string; winnerGain: string; loserLoss: string; status: string }
    expect(step.status).toBe('decided')
    const { match } = await admin<{ match: { status: string; kind: string; stake: string } }>(`/matches/${step.matchId}`)
    expect(match).toMatchObject({ status: 'decided', kind: 'queue' })
    expect(Number(match.stake)).toBe(10)
    expect(step.winnerGain).toBe('8') // 2 × 10 less 10 % of the pot, less the winner's own 10
    expect(step.loserLoss).toBe('10')
  })
})
