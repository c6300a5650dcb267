// Game servers (contract §17): keys registered, disabled and rotated by
// operators (audited), and results signed by a server over the exact request
// (its body's bytes, the path as sent, a ±60 s timestamp), each signature
// accepted once, also when replayed to the other instance. On both engines:
// two apps over one database (one SQLite file, or one PostgreSQL database).
import { describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { eq } from 'drizzle-orm'
import { ed25519 } from '@noble/curves/ed25519.js'
import { serverResultPath } from '@arena/sdk'
import { postJson, req, type TestApp } from '../helpers/app'
import { admin, claim, createGame, openSession, players, startedTournament, submit, tournament, type MatchView, type Player, type TournamentView } from '../helpers/arena'
import { eventsOf } from '../helpers/accounts'
import { registerServer, serverKeys, setResults, signedResult, type GameServer, type Signer } from '../helpers/game-servers'
import { adminPatch, balanceOf, createQueue, errorCode, expectLedgerSound, fund, pairedMatch, seatOf } from '../helpers/matchmaking'
import type { DecisionResponse } from '../../src/modules/matches/model'
import { housekeeping } from '../../src/modules/events/housekeeping'
import { twoInstances } from '../helpers/arena'

const { one: ctx, two } = await twoInstances()

/** Both instances' clocks move together: each signs and checks with its own. */
function advance(ms: number): void {
  ctx.clock.advance(ms)
  two.clock.advance(ms)
}

const resultOf = (match: Pick<MatchView, 'id'>, winner: string | null) => (winner === null ? { matchId: match.id, outcome: 'DRAW' } : { matchId: match.id, outcome: 'WIN', winnerParticipantId: winner })

async function send(app: TestApp, request: Request): Promise<{ status: number; body: Record<string, any> }> {
  const res = await app.handle(request)
  return { status: res.status, body: (await res.json()) as Record<string, any> }
}

/** A game (results as given) with a server and a started single elimination of `count` players: its running matches. */
async function arena(results: 'claims' | 'server' | 'either', count = 4, format = 'single_elimination') {
  const { game, gameKey } = await createGame(ctx, `Servers ${results} ${crypto.randomUUID().slice(0, 8)}`)
  if (results !== 'claims') await setResults(ctx, game.id, results)
  const signer = await registerServer(ctx, game.id)
  const people = await players(ctx, count)
  const t = await startedTournament(ctx, game.id, people, { format })
  return { gameId: game.id, gameKey, signer, people, t, running: t.matches.filter((m) => m.status === 'running') }
}

async function matchNow(tournamentId: string, matchId: string): Promise<MatchView> {
  return (await tournament(ctx, tournamentId)).matches.find((m) => m.id === matchId)!
}

function playerIn(t: TournamentView, people: Player[], participantId: string): Player {
  return people.find((p) => p.userId === t.participants.find((q) => q.id === participantId)!.userId)!
}

describe('the admin API: register, list, disable, rotate (audited)', () => {
  test('a server is registered with its public key, listed to a viewer, disabled once, and each action audited', async () => {
    const { game } = await createGame(ctx, 'Server keys')
    const keys = serverKeys()
    const created = await send(ctx, postJson(`/api/v1/admin/games/${game.id}/servers`, { name: 'eu-1', publicKey: keys.publicKey }, admin))
    expect(created.status).toBe(201)
    const server = created.body.server as GameServer
    expect(server).toEqual({ id: expect.stringMatching(/^gsv_/), gameId: game.id, name: 'eu-1', publicKey: keys.publicKey, createdAt: ctx.clock.now().toISOString(), rotatedAt: null, disabledAt: null, status: 'active' })

    const listed = await send(ctx, req(`/api/v1/admin/games/${game.id}/servers`, { headers: admin }))
    expect(listed).toEqual({ status: 200, body: { servers: [server] } })

    const disabled = await send(ctx, postJson(`/api/v1/admin/game-servers/${server.id}/disable`, {}, admin))
    expect(disabled.status).toBe(200)
    expect(disabled.body.server).toMatchObject({ id: server.id, status: 'disabled', disabledAt: expect.any(String) })
    // Idempotent: the same answer, nothing changed, nothing recorded again.
    advance(1000)
    expect(await send(ctx, postJson(`/api/v1/admin/game-servers/${server.id}/disable`, {}, admin))).toEqual(disabled)
    // A disabled server is not rotated.
    const rotated = await send(ctx, postJson(`/api/v1/admin/game-servers/${server.id}/rotate`, { publicKey: serverKeys().publicKey }, admin))
    expect([rotated.status, rotated.body.error.code]).toEqual([409, 'conflict'])

    const audit = await send(ctx, req('/api/v1/admin/audit?limit=500', { headers: admin }))
    const mine = (audit.body.records as { action: string; target: string; details: Record<string, unknown> }[]).filter((r) => r.target === server.id)
    expect(mine.map((r) => r.action)).toEqual(['game_server.create', 'game_server.disable'])
    expect(mine[0]!.details).toEqual({ gameId: game.id, name: 'eu-1', publicKey: keys.publicKey })
  })

  test('a key that is not 32 canonical base64url bytes of a curve point of large order is refused at body/publicKey', async () => {
    const { game } = await createGame(ctx, 'Bad keys')
    const good = serverKeys().publicKey
    const bytes = Buffer.from(good, 'base64url')
    // The last character carries 2 spare bits: flipping one decodes to the same bytes, but is not the canonical text.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
    const last = alphabet.indexOf(good.at(-1)!)
    const nonCanonical = good.slice(0, -1) + alphabet[last ^ 1]!
    expect(Buffer.from(nonCanonical, 'base64url').equals(bytes)).toBe(true)
    // y = 2^255 - 1 (mod p out of range) is no point; the identity point (y = 1) is of small order.
    const notAPoint = Buffer.alloc(32, 0xff)
    notAPoint[31] = 0x7f
    const smallOrder = Buffer.alloc(32)
    smallOrder[0] = 1
    expect(() => ed25519.Point.fromBytes(smallOrder)).not.toThrow()
    // 57 bytes (an Ed448 key's length), and the key in standard base64 (44 characters, padded).
    const longer = Buffer.alloc(57, 7).toString('base64url')
    for (const publicKey of [good + '=', good.slice(1), `${good}A`, nonCanonical, notAPoint.toString('base64url'), smallOrder.toString('base64url'), longer, bytes.toString('base64'), '']) {
      const res = await send(ctx, postJson(`/api/v1/admin/games/${game.id}/servers`, { name: 'x', publicKey }, admin))
      expect({ publicKey, status: res.status, code: res.body.error?.code, path: res.body.error?.details?.[0]?.path }).toEqual({ publicKey, status: 422, code: 'validation_failed', path: 'body/publicKey' })
    }
    expect((await send(ctx, req(`/api/v1/admin/games/${game.id}/servers`, { headers: admin }))).body.servers).toEqual([])
  })

  test('at most 20 servers a game (409 server_limit); an unknown game or server is 404', async () => {
    const { game } = await createGame(ctx, 'Many servers')
    for (let i = 0; i < 20; i++) expect((await ctx.handle(postJson(`/api/v1/admin/games/${game.id}/servers`, { name: `s${i}`, publicKey: serverKeys().publicKey }, admin))).status).toBe(201)
    const over = await ctx.handle(postJson(`/api/v1/admin/games/${game.id}/servers`, { name: 's20', publicKey: serverKeys().publicKey }, admin))
    expect([over.status, await errorCode(over)]).toEqual([409, 'server_limit'])
    for (const request of [
      postJson('/api/v1/admin/games/gam_00000000000000000000000000000000/servers', { name: 'x', publicKey: serverKeys().publicKey }, admin),
      req('/api/v1/admin/games/gam_00000000000000000000000000000000/servers', { headers: admin }),
      postJson('/api/v1/admin/game-servers/gsv_00000000000000000000000000000000/disable', {}, admin),
      postJson('/api/v1/admin/game-servers/gsv_00000000000000000000000000000000/rotate', { publicKey: serverKeys().publicKey }, admin),
    ]) {
      const res = await ctx.handle(request)
      expect([res.status, await errorCode(res)]).toEqual([404, 'not_found'])
    }
  })

  test('a game\'s results are claims by default, set with PATCH /admin/games/{id} (audited), anything else 422', async () => {
    const { game } = await createGame(ctx, 'Results setting')
    expect((game as { results?: string }).results).toBe('claims')
    const patched = await send(ctx, await adminPatchRequest(`/api/v1/admin/games/${game.id}`, { results: 'either' }))
    expect(patched.body.game).toMatchObject({ id: game.id, results: 'either' })
    const bad = await adminPatch(ctx, `/api/v1/admin/games/${game.id}`, { results: 'servers' })
    expect([bad.status, await errorCode(bad)]).toEqual([422, 'validation_failed'])
    const created = await send(ctx, postJson('/api/v1/admin/games', { name: 'Born server', results: 'server' }, admin))
    expect(created.body.game.results).toBe('server')
    const audit = await send(ctx, req('/api/v1/admin/audit?limit=500', { headers: admin }))
    const update = (audit.body.records as { action: string; target: string; details: unknown }[]).find((r) => r.action === 'game.update' && r.target === game.id)
    expect(update?.details).toEqual({ results: { from: 'claims', to: 'either' } })
  })
})

function adminPatchRequest(path: string, body: unknown): Request {
  return req(path, { method: 'PATCH', headers: { ...admin, 'content-type': 'application/json' }, body: JSON.stringify(body) })
}

describe('a signed result decides the match at once', () => {
  test('a good signature decides (reason server_result): both players told, the rating moved, claims that follow 409', async () => {
    const { gameId, gameKey, signer, people, t, running } = await arena('either')
    const match = running[0]!
    const winner = match.slot2ParticipantId!
    const res = await send(ctx, await signedResult(gameId, signer, resultOf(match, winner), ctx.clock.now()))
    expect(res).toEqual({ status: 200, body: { decision: 'game_advance', reason: 'server_result', matchId: match.id, tournamentId: t.id, outcome: 'WIN', winnerParticipantId: winner, nextMatchId: match.nextMatchId! } satisfies DecisionResponse })
    expect(await matchNow(t.id, match.id)).toMatchObject({ status: 'decided', winnerParticipantId: winner })
    for (const participantId of [match.slot1ParticipantId!, match.slot2ParticipantId!]) {
      const player = playerIn(t, people, participantId)
      expect(await eventsOf(ctx, player.userId, 'match.decided')).toEqual([{ tournamentId: t.id, matchId: match.id, winnerParticipantId: winner, outcome: 'WIN' }])
    }
    const rating = await send(ctx, req(`/api/v1/games/${gameId}/ratings/me`, { headers: { authorization: `Bearer ${playerIn(t, people, winner).tokens.accessToken}` } }))
    expect(rating.body.rating.matches).toBe(1)
    // The players' claims come too late.
    const loser = playerIn(t, people, match.slot1ParticipantId!)
    const session = await openSession(ctx, gameId, gameKey, loser, match.id)
    expect([session.status, await errorCode(session)]).toEqual([409, 'match_not_running'])
  })

  test('a staked queue match: the pot goes to the server\'s winner, the ledger balances', async () => {
    const { game } = await createGame(ctx, 'Staked servers')
    await setResults(ctx, game.id, 'server')
    const signer = await registerServer(ctx, game.id)
    await createQueue(ctx, game.id, { stake: '10' })
    const pair = (await players(ctx, 2)) as [Player, Player]
    await fund(ctx, pair, '100')
    const match = await pairedMatch(ctx, game.id, 'ranked', pair, true)
    const res = await send(ctx, await signedResult(game.id, signer, resultOf(match, seatOf(match, pair[1])), ctx.clock.now()))
    expect(res.body).toMatchObject({ decision: 'game_advance', reason: 'server_result', winnerParticipantId: seatOf(match, pair[1]) })
    expect([await balanceOf(ctx, pair[0]), await balanceOf(ctx, pair[1])]).toEqual(['90', '110'])
    await expectLedgerSound(ctx)
  })

  test('a DRAW: played again in elimination (replay, server_draw), a result in round robin', async () => {
    const elimination = await arena('server', 2)
    const final = elimination.running[0]!
    const replay = await send(ctx, await signedResult(elimination.gameId, elimination.signer, resultOf(final, null), ctx.clock.now()))
    expect(replay.body).toEqual({ decision: 'replay', reason: 'server_draw', matchId: final.id, tournamentId: elimination.t.id })
    expect(await matchNow(elimination.t.id, final.id)).toMatchObject({ status: 'running' })
    expect(await eventsOf(ctx, elimination.people[0]!.userId, 'match.replay')).toEqual([{ tournamentId: elimination.t.id, matchId: final.id, reason: 'server_draw' }])

    const league = await arena('server', 3, 'round_robin')
    const game = league.running[0]!
    const drawn = await send(ctx, await signedResult(league.gameId, league.signer, resultOf(game, null), ctx.clock.now()))
    expect(drawn.body).toMatchObject({ decision: 'game_advance', reason: 'server_result', outcome: 'DRAW' })
    expect(await matchNow(league.t.id, game.id)).toMatchObject({ status: 'decided', outcome: 'DRAW', winnerParticipantId: null })
  })

  test('a disputed match is decided by the server; a waiting one is 409, another game\'s 404, a winner not seated 422', async () => {
    const { gameId, gameKey, signer, people, t, running } = await arena('either')
    const [disputed, other] = running as [MatchView, MatchView]
    const a = playerIn(t, people, disputed.slot1ParticipantId!)
    const b = playerIn(t, people, disputed.slot2ParticipantId!)
    await claim(ctx, gameId, gameKey, a, disputed.id, { outcome: 'WIN', winnerParticipantId: disputed.slot1ParticipantId })
    expect((await claim(ctx, gameId, gameKey, b, disputed.id, { outcome: 'WIN', winnerParticipantId: disputed.slot2ParticipantId })).decision).toBe('dispute')
    const decided = await send(ctx, await signedResult(gameId, signer, resultOf(disputed, disputed.slot2ParticipantId), ctx.clock.now()))
    expect(decided.body).toMatchObject({ decision: 'game_advance', reason: 'server_result', winnerParticipantId: disputed.slot2ParticipantId })

    const waiting = (await tournament(ctx, t.id)).matches.find((m) => m.status === 'waiting')!
    const notRunning = await send(ctx, await signedResult(gameId, signer, resultOf(waiting, disputed.slot2ParticipantId), ctx.clock.now()))
    expect([notRunning.status, notRunning.body.error.code]).toEqual([409, 'match_not_running'])

    const elsewhere = await arena('either', 2)
    const foreign = await send(ctx, await signedResult(gameId, signer, resultOf(elsewhere.running[0]!, elsewhere.running[0]!.slot1ParticipantId), ctx.clock.now()))
    expect([foreign.status, foreign.body.error.code]).toEqual([404, 'not_found'])

    const outsider = await send(ctx, await signedResult(gameId, signer, resultOf(other, disputed.slot1ParticipantId), ctx.clock.now()))
    expect([outsider.status, outsider.body.error.code, outsider.body.error.details]).toEqual([422, 'validation_failed', [{ path: 'body/winnerParticipantId', message: 'Not a participant of this match' }]])
    expect(await matchNow(t.id, other.id)).toMatchObject({ status: 'running' })
  })
})

describe('what is refused, and decides nothing', () => {
  test('a wrong key, a changed body, a changed path or query, a skewed timestamp, a bad header: each 401 invalid_signature', async () => {
    const { gameId, signer, t, running } = await arena('server')
    const match = running[0]!
    const body = resultOf(match, match.slot1ParticipantId)
    const other = await registerServer(ctx, gameId, 'eu-2')
    const path = serverResultPath(gameId)
    const now = ctx.clock.now()
    const bodyText = JSON.stringify(body)
    const cases: Record<string, Request> = {
      // Another server's private key under this server's id.
      'wrong key': await signedResult(gameId, { server: signer.server, privateKey: other.privateKey }, body, now),
      // The same JSON value, other bytes (a space), and another winner.
      'body re-serialized': await signedResult(gameId, signer, body, now, { sentBody: bodyText.replace(':', ': ') }),
      'body changed': await signedResult(gameId, signer, body, now, { sentBody: JSON.stringify(resultOf(match, match.slot2ParticipantId)) }),
      'path changed': await signedResult(gameId, signer, body, now, { sentPath: `/api/v1/game-servers/${gameId}/results/` }),
      'query added': await signedResult(gameId, signer, body, now, { sentPath: `${path}?retry=1` }),
      'query dropped': await signedResult(gameId, signer, body, now, { signedPath: `${path}?retry=1`, sentPath: path }),
      'path without /api/v1 signed': await signedResult(gameId, signer, body, now, { signedPath: `/game-servers/${gameId}/results`, sentPath: path }),
      'timestamp 61 s ahead': await signedResult(gameId, signer, body, now, { now: new Date(now.getTime() + 61_000) }),
      'timestamp 61 s behind': await signedResult(gameId, signer, body, now, { now: new Date(now.getTime() - 61_000) }),
      'unknown server': await signedResult(gameId, signer, body, now, { serverId: 'gsv_00000000000000000000000000000000' }),
    }
    const stale = /outside ±60 s/
    for (const [name, request] of Object.entries(cases)) {
      const res = await send(ctx, request)
      expect({ name, status: res.status, code: res.body.error.code }).toEqual({ name, status: 401, code: 'invalid_signature' })
      if (name.startsWith('timestamp')) expect(res.body.error.message).toMatch(stale)
      // No oracle: every other refusal says the same.
      else expect(res.body.error.message).toBe('Missing or invalid x-arena-signature')
    }
    const good = await signedResult(gameId, signer, body, now)
    const header = good.headers.get('x-arena-signature')!
    for (const value of [null, '', 'nonsense', header.split('.').slice(0, 2).join('.'), `${header}.x`, header.replace(/\.\d+\./, '.1e9.'), `${header.slice(0, -1)}`]) {
      const headers: Record<string, string> = { 'content-type': 'application/json' }
      if (value !== null) headers['x-arena-signature'] = value
      const res = await send(ctx, req(path, { method: 'POST', headers, body: bodyText }))
      expect({ value, status: res.status, code: res.body.error.code }).toEqual({ value, status: 401, code: 'invalid_signature' })
    }
    expect(await matchNow(t.id, match.id)).toMatchObject({ status: 'running' })
    // Within the window, either way, the same request is good.
    const early = await send(ctx, await signedResult(gameId, signer, body, now, { now: new Date(now.getTime() + 60_000) }))
    expect(early.body).toMatchObject({ decision: 'game_advance', reason: 'server_result' })
  })

  test('a server of another game, a disabled server, a rotated key: 401; the new key decides', async () => {
    const { gameId, signer, t, running } = await arena('server')
    const [first, second] = running as [MatchView, MatchView]
    const foreign = await arena('server', 2)
    const theirs = await send(ctx, await signedResult(gameId, foreign.signer, resultOf(first, first.slot1ParticipantId), ctx.clock.now()))
    expect([theirs.status, theirs.body.error.code]).toEqual([401, 'invalid_signature'])

    const keys = serverKeys()
    const rotated = await send(ctx, postJson(`/api/v1/admin/game-servers/${signer.server.id}/rotate`, { publicKey: keys.publicKey }, admin))
    expect(rotated.body.server).toMatchObject({ id: signer.server.id, publicKey: keys.publicKey, rotatedAt: ctx.clock.now().toISOString(), status: 'active' })
    const old = await send(ctx, await signedResult(gameId, signer, resultOf(first, first.slot1ParticipantId), ctx.clock.now()))
    expect([old.status, old.body.error.code]).toEqual([401, 'invalid_signature'])
    const renewed: Signer = { server: signer.server, privateKey: keys.privateKey }
    expect((await send(ctx, await signedResult(gameId, renewed, resultOf(first, first.slot1ParticipantId), ctx.clock.now()))).status).toBe(200)

    expect((await ctx.handle(postJson(`/api/v1/admin/game-servers/${signer.server.id}/disable`, {}, admin))).status).toBe(200)
    const disabled = await send(ctx, await signedResult(gameId, renewed, resultOf(second, second.slot1ParticipantId), ctx.clock.now()))
    expect([disabled.status, disabled.body.error.code]).toEqual([401, 'invalid_signature'])
    expect(await matchNow(t.id, second.id)).toMatchObject({ status: 'running' })
  })

  test('results=claims refuses a server (403 server_results_disabled); results=server refuses a player\'s claim (403 server_results_only)', async () => {
    const claimsOnly = await arena('claims', 2)
    const match = claimsOnly.running[0]!
    const refused = await send(ctx, await signedResult(claimsOnly.gameId, claimsOnly.signer, resultOf(match, match.slot1ParticipantId), ctx.clock.now()))
    expect([refused.status, refused.body.error.code]).toEqual([403, 'server_results_disabled'])
    // The refused signature was not spent: once the game takes servers, the same request decides.
    await setResults(ctx, claimsOnly.gameId, 'server')
    const later = await send(ctx, await signedResult(claimsOnly.gameId, claimsOnly.signer, resultOf(match, match.slot1ParticipantId), ctx.clock.now()))
    expect(later.status).toBe(200)

    const serverOnly = await arena('server', 2)
    const theirs = serverOnly.running[0]!
    const player = playerIn(serverOnly.t, serverOnly.people, theirs.slot1ParticipantId!)
    const session = await openSession(ctx, serverOnly.gameId, serverOnly.gameKey, player, theirs.id)
    expect(session.status).toBe(201)
    const { token } = (await session.json()) as { token: string }
    const claimed = await submit(ctx, serverOnly.gameId, serverOnly.gameKey, player, token, { outcome: 'WIN', winnerParticipantId: theirs.slot1ParticipantId })
    expect([claimed.status, await errorCode(claimed)]).toEqual([403, 'server_results_only'])
    // Nothing spent: with claims allowed again, the same session claims.
    await setResults(ctx, serverOnly.gameId, 'either')
    const again = await submit(ctx, serverOnly.gameId, serverOnly.gameKey, player, token, { outcome: 'WIN', winnerParticipantId: theirs.slot1ParticipantId })
    expect(again.status).toBe(200)
    expect(((await again.json()) as DecisionResponse).decision).toBe('pending')
  })
})

describe('a signature is accepted once, on any instance', () => {
  test('the same request again is 409 signature_reused, on this instance and on the other; housekeeping forgets it after its window', async () => {
    const { gameId, signer, t, running } = await arena('server')
    const [match, next] = running as [MatchView, MatchView]
    const request = await signedResult(gameId, signer, resultOf(match, match.slot1ParticipantId), ctx.clock.now())
    const [first, again, elsewhere] = [request.clone(), request.clone(), request.clone()]
    expect((await send(ctx, first)).status).toBe(200)
    for (const [app, replay] of [[ctx, again], [two, elsewhere]] as const) {
      const res = await send(app, replay)
      expect([res.status, res.body.error.code]).toEqual([409, 'signature_reused'])
    }
    // A signature names its request: one over another match's body is its own, and decides it.
    const racing = await signedResult(gameId, signer, resultOf(next, next.slot2ParticipantId), ctx.clock.now())
    expect((await send(two, racing)).status).toBe(200)
    expect((await tournament(ctx, t.id)).matches.filter((m) => m.round === 1).map((m) => m.status)).toEqual(['decided', 'decided'])

    const hash = createHash('sha256').update(request.headers.get('x-arena-signature')!.split('.')[2]!).digest('hex')
    const { gameServerSignatures } = ctx.peek.tables
    const stored = () => ctx.peek.db.select().from(gameServerSignatures).where(eq(gameServerSignatures.signatureHash, hash))
    expect(await stored()).toHaveLength(1)
    // Kept a window past its own (an instance whose clock runs behind still refuses the replay), then deleted.
    advance(60_000 + 60_000)
    await housekeeping(ctx.services.storage, ctx.clock, 30)
    expect(await stored()).toHaveLength(1)
    advance(1_000)
    expect((await housekeeping(ctx.services.storage, ctx.clock, 30)).serverSignatures).toBeGreaterThanOrEqual(1)
    expect(await stored()).toHaveLength(0)
  })

  test('two instances racing one signature: one decides, the other is refused', async () => {
    const { gameId, signer, t, running } = await arena('server', 2)
    const match = running[0]!
    const request = await signedResult(gameId, signer, resultOf(match, match.slot2ParticipantId), ctx.clock.now())
    const answers = await Promise.all([send(ctx, request.clone()), send(two, request.clone())])
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409])
    expect(answers.find((a) => a.status === 409)!.body.error.code).toBe('signature_reused')
    expect(await matchNow(t.id, match.id)).toMatchObject({ status: 'decided', winnerParticipantId: match.slot2ParticipantId })
  })
})
