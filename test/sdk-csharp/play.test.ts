// Arena.Sdk (C#) against a real server: the in-process app behind a loopback
// listener, and sdk/csharp/Tests~/Live/Play.cs compiled by mcs and run under
// mono. Two players play a tournament match through sessions and claims to a
// decision; two play a staked queue match (joined, paired, ready, claimed) and
// the winner is paid the pot less the rake; two challenge each other (declined,
// withdrawn, accepted with a stake), dispute the match and attach evidence; a buyer sets a PIN, is blocked by
// a COMPROMISED integrity check (nothing minted, ENV_COMPROMISED reported),
// refused for a wrong PIN and then gets a signed withdrawal — with one verify
// per PIN session, as the server saw the requests.
import { afterAll, beforeAll, describe, expect } from 'bun:test'
import { listSecurityEvents } from '../../src/modules/security/event-log'
import { createArenaApp, createGame, startedTournament } from '../helpers/arena'
import { creditSurely } from '../helpers/accounts'
import type { TestApp } from '../helpers/app'
import { PASSWORD, registerUser } from '../helpers/auth'
import { compileCsharp, csharpMissing, csharpSources, csharpTest, CSHARP_ROOT, runMono, type MonoResult } from '../helpers/csharp'
import { download, evidenceOf } from '../helpers/evidence'
import { createQueue, expectLedgerSound } from '../helpers/matchmaking'
import { PIN, someAddress, storedWithdrawal } from '../helpers/purchases'

const VERIFY = /^\/api\/v1\/security\/pin-session\/[^/]+\/verify$/
const MINT = '/api/v1/security/pin-session'

describe('Arena.Sdk play and money against a real server (mono)', () => {
  let ctx: TestApp
  let server: ReturnType<typeof Bun.serve>
  const sent: { method: string; path: string }[] = []
  let result: MonoResult
  let buyerId: string

  beforeAll(async () => {
    if (csharpMissing() !== undefined) return
    ctx = await createArenaApp()
    server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      development: false,
      fetch: (request) => {
        sent.push({ method: request.method, path: new URL(request.url).pathname })
        return ctx.handle(request)
      },
    })
    const { game, gameKey } = await createGame(ctx, 'CSharp Play')
    const [carol, dave] = [await registerUser(ctx), await registerUser(ctx)]
    const tournament = await startedTournament(ctx, game.id, [{ userId: carol.id }, { userId: dave.id }])
    await createQueue(ctx, game.id, { name: 'duel', stake: '4', rake: '0.25' })
    const [alice, bob] = [await registerUser(ctx), await registerUser(ctx)]
    for (const p of [alice, bob]) expect(await creditSurely(ctx, p.id, `fund-${p.id}`, '10')).toBe(200)
    const [frank, gina] = [await registerUser(ctx), await registerUser(ctx)]
    for (const p of [frank, gina]) expect(await creditSurely(ctx, p.id, `fund-${p.id}`, '5')).toBe(200)
    const erin = await registerUser(ctx)
    buyerId = erin.id
    expect(await creditSurely(ctx, erin.id, `fund-${erin.id}`, '100')).toBe(200)
    const setup = {
      gameId: game.id,
      gameKey,
      password: PASSWORD,
      tournament: { id: tournament.id, players: [carol.username, dave.username] },
      queue: { name: 'duel', players: [alice.username, bob.username] },
      challenge: { players: [frank.username, gina.username] },
      buyer: { username: erin.username, pin: PIN, address: someAddress() },
    }
    const exe = await compileCsharp({ name: 'Arena.Sdk.Live.Play', sources: [...csharpSources('Runtime'), `${CSHARP_ROOT}/Tests~/Live/Play.cs`], target: 'exe' })
    // The matcher runs on the test's clock here: tick it while the program waits for its match.
    let ticking = false
    const matcher = setInterval(async () => {
      if (ticking) return
      ticking = true
      try {
        await ctx.services.matchmaking.matchTick()
      } finally {
        ticking = false
      }
    }, 100)
    try {
      result = await runMono(exe, [], { ARENA_URL: `http://127.0.0.1:${server.port}`, ARENA_PLAY: JSON.stringify(setup) })
    } finally {
      clearInterval(matcher)
      while (ticking) await Bun.sleep(10)
    }
  }, 240_000)

  afterAll(async () => {
    server?.stop(true)
    await ctx?.close()
  })

  csharpTest('the program played, was paid and purchased through the SDK', () => {
    if (result.code !== 0) console.error(result.stdout, result.stderr)
    expect(result.code).toBe(0)
    const lines = result.stdout.trim().split('\n')
    expect(lines.filter((line) => line.startsWith('ok ')).map((line) => line.split(':')[0])).toEqual([
      'ok tournament',
      'ok tournament',
      'ok tournament',
      'ok queue',
      'ok queue',
      'ok queue',
      'ok challenge',
      'ok challenge',
      'ok purchase',
      'ok purchase',
      'ok purchase',
    ])
  })

  csharpTest('the evidence is stored as the program sent it', async () => {
    expect(result.code).toBe(0)
    const [, matchId, evidenceId] = result.stdout.split('\n').find((line) => line.startsWith('evidence '))!.split(' ')
    expect((await evidenceOf(ctx, matchId!)).map((e) => e.id)).toEqual([evidenceId!])
    expect(await (await download(ctx, evidenceId!)).text()).toBe('frank won 3-1\n')
    expect(sent.find((r) => r.method === 'POST' && r.path === `/api/v1/matches/${matchId}/evidence`)).toBeDefined()
  })

  csharpTest('the server saw one verify per PIN session, none on the blocked attempt, and the ENV_COMPROMISED report', async () => {
    expect(result.code).toBe(0)
    const verifies = sent.filter((r) => r.method === 'POST' && VERIFY.test(r.path)).map((r) => r.path)
    expect(verifies).toHaveLength(2)
    expect(new Set(verifies).size).toBe(2)
    expect(sent.filter((r) => r.method === 'POST' && r.path === MINT)).toHaveLength(2)
    const [, withdrawalId, pinSessionId] = result.stdout.trim().split('\n').at(-1)!.split(' ')
    expect(verifies.at(-1)).toBe(`/api/v1/security/pin-session/${pinSessionId}/verify`)
    expect((await storedWithdrawal(ctx, withdrawalId!)).status).toBe('signed')
    await ctx.services.securityLog.flush()
    const reported = (await listSecurityEvents(ctx.services.storage.read.security, 0, 100)).events.filter((e) => e.userId === buyerId && e.kind === 'ENV_COMPROMISED')
    expect(reported).toHaveLength(1)
    expect(reported[0]!.level).toBe('COMPROMISED')
    expect(reported[0]!.details).toMatchObject({ findings: [{ check: 'root', level: 'COMPROMISED', reason: 'su found' }] })
    await expectLedgerSound(ctx)
  })
})
