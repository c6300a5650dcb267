// The C# SDK's sign-ins against the real server (contract §13, §19): a small
// C# program (sdk/csharp/Tests~/Live/SignIns.cs) runs under mono and takes
// one command at a time on stdin, answering a JSON line; between commands this
// test does what only the server's side can (approve a device code on the
// /device page, mint an ID token at the loopback OpenID provider, move the
// server's clock). The server is the test app served over loopback HTTP, with
// a Steam Web API stand-in and a real OpenID provider beside it.
import { afterAll, beforeAll, beforeEach, describe, expect } from 'bun:test'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { tempDir } from '../helpers/app'
import { createArenaApp } from '../helpers/arena'
import { registerUser } from '../helpers/auth'
import { CSHARP_ROOT, compileCsharp, csharpMissing, csharpSources, csharpTest } from '../helpers/csharp'
import { answerOnPage } from '../helpers/device-codes'
import { startOidcProvider } from '../helpers/oidc-provider'
import { startSteamStub } from '../helpers/steam-stub'

/** Where the provider sends the browser back to: arena's callback under ARENA_SERVER_URL (the test app answers any host). */
const SERVER_URL = 'http://arena.test'
const CALLBACK = `${SERVER_URL}/api/v1/auth/oidc/test/callback`
const REDIRECT = 'https://game.example/back'
const steam = startSteamStub()
const oidc = await startOidcProvider({ redirectUris: [CALLBACK] })
const ctx = await createArenaApp(
  steam.env({
    ARENA_GUEST_CREATE_PER_HOUR: '1000',
    ARENA_SERVER_URL: SERVER_URL,
    ARENA_OIDC_PROVIDERS: JSON.stringify([{ name: 'test', issuer: oidc.issuer, clientId: oidc.clientId, clientSecret: oidc.clientSecret }]),
    ARENA_OIDC_REDIRECTS: REDIRECT,
  }),
)
const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => ctx.handle(request) })
const dir = tempDir('arena-csharp-sign-ins-')

type Answer = { ok: boolean; [key: string]: any }

/** The C# program, one command in and one JSON line out at a time. */
let program: { proc: Subprocess<'pipe', 'pipe', 'pipe'>; lines: AsyncIterator<string> } | undefined

async function* linesOf(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder()
  let buffer = ''
  for await (const chunk of stream) {
    buffer += decoder.decode(chunk, { stream: true })
    let end: number
    while ((end = buffer.indexOf('\n')) >= 0) {
      yield buffer.slice(0, end)
      buffer = buffer.slice(end + 1)
    }
  }
}

async function send(command: string): Promise<Answer> {
  if (!program) throw new Error('the C# program is not running')
  program.proc.stdin.write(`${command}\n`)
  await program.proc.stdin.flush()
  const next = await program.lines.next()
  if (next.done) throw new Error(`the C# program ended: ${await new Response(program.proc.stderr).text()}`)
  return JSON.parse(next.value) as Answer
}

/** Sends a command that must succeed. */
async function ok(command: string): Promise<Answer> {
  const answer = await send(command)
  if (!answer.ok) throw new Error(`${command.split(' ')[0]} failed: ${JSON.stringify(answer)}`)
  return answer
}

/** What a browser does with BeginWebLogin's URL: arena's start, the provider (as `who`, or cancelled), arena's callback; the URL it lands on. */
async function browse(startUrl: string, who: string | null): Promise<string> {
  const started = await ctx.handle(new Request(startUrl))
  expect(started.status).toBe(302)
  const authorization = started.headers.get('location')!
  const callback = who === null ? await oidc.authorizeAndCancel(authorization) : await oidc.authorize(authorization, who)
  expect(callback.href.startsWith(`${CALLBACK}?`)).toBe(true)
  const landed = await ctx.handle(new Request(callback.href))
  expect(landed.status).toBe(302)
  return landed.headers.get('location')!
}

const digest = (secret: string) => createHash('sha256').update(secret).digest('hex')

beforeAll(async () => {
  if (csharpMissing() !== undefined) return
  const exe = await compileCsharp({ name: 'SignIns', sources: [...csharpSources('Runtime'), join(CSHARP_ROOT, 'Tests~', 'Live', 'SignIns.cs')], target: 'exe' })
  const proc = Bun.spawn(['mono', '--debug', exe, `http://127.0.0.1:${server.port}`], { stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' })
  program = { proc, lines: linesOf(proc.stdout)[Symbol.asyncIterator]() }
}, 240_000)

afterAll(async () => {
  if (program) {
    program.proc.stdin.end()
    await program.proc.exited
  }
  server.stop(true)
  await ctx.close()
  await oidc.close()
  await steam.close()
})

// The OpenID provider signs by the real clock; the server's follows it.
beforeEach(() => ctx.clock.set(new Date()))

describe('Arena.Sdk sign-ins against the server (mono)', () => {
  csharpTest('a guest: created with a new secret kept in the FileArenaStore; a restarted client is still signed in and signs in again with the kept secret', async () => {
    const store = join(dir, 'guest.json')
    expect((await ok(`new guest ${store}`)).signedIn).toBe(false)
    const first = await ok('guest guest')
    expect(first.created).toBe(true)
    expect(first.user.identities).toEqual(['device'])
    const kept = JSON.parse(readFileSync(store, 'utf8')) as Record<string, string>
    expect(digest(kept['arena.deviceSecret']!)).toBe(first.deviceSecret)
    expect(kept['arena.accessToken']).toBeString()
    expect(kept['arena.deviceToken']).toBeString()

    // A new process's client on the same file: signed in with the kept tokens.
    const restarted = await ok(`new again ${store}`)
    expect(restarted.signedIn).toBe(true)
    expect(restarted.deviceToken).toBe(digest(kept['arena.deviceToken']!))
    expect((await ok('me again')).user.id).toBe(first.user.id)
    // And the guest sign-in without a secret uses the kept one: the same account, not a new one.
    const second = await ok('guest again')
    expect(second.created).toBe(false)
    expect(second.deviceSecret).toBe(first.deviceSecret)
    expect(second.user.id).toBe(first.user.id)
  })

  csharpTest('a password login; its session is listed as the current one; logout revokes it and forgets the tokens, logout all ends every session', async () => {
    // The program's commands are split on spaces: a password without any.
    const player = await registerUser(ctx, { password: 'password-without-spaces' })
    await ok('new pw')
    expect((await ok(`login pw ${player.username} password-without-spaces`)).user.id).toBe(player.id)
    expect(await send(`login pw ${player.username} wrong-password`)).toMatchObject({ ok: false, status: 401, code: 'invalid_credentials' })
    await ok(`login pw ${player.username} password-without-spaces`)
    const sessions = (await ok('sessions pw')).sessions as { current: boolean }[]
    expect(sessions.filter((s) => s.current)).toHaveLength(1)

    expect(await ok('logout pw')).toMatchObject({ revoked: 1, signedIn: false })
    expect((await ok('tokens pw')).tokens).toBeNull()
    expect(await send('me pw')).toMatchObject({ ok: false, error: 'NotSignedInException' })

    await ok('new pw2')
    await ok(`login pw ${player.username} password-without-spaces`)
    await ok(`login pw2 ${player.username} password-without-spaces`)
    expect(await ok('logout pw2 all')).toMatchObject({ revoked: 3, signedIn: false })
    expect(await send('me pw')).toMatchObject({ ok: false, status: 401 })
  })

  csharpTest('an expired access token is rotated and the call replayed; two clients rotating the same refresh token at once both succeed within the grace', async () => {
    const player = await registerUser(ctx, { password: 'rotation-password' })
    await ok('new one')
    await ok(`login one ${player.username} rotation-password`)
    const before = (await ok('tokens one')).tokens
    ctx.clock.advance((ctx.config.accessTtlS + 1) * 1000)
    const me = await ok('me one')
    expect(me.user.id).toBe(player.id)
    expect(me.tokens.accessToken).not.toBe(before.accessToken)
    expect(me.tokens.refreshToken).not.toBe(before.refreshToken)

    // Another client holding the same tokens (a second process of the game, say): both rotate at once.
    await ok('new two')
    await ok('adopt two one')
    const both = await ok('refresh-both one two')
    expect(both.first.refreshToken).not.toBe(me.tokens.refreshToken)
    expect(both.second.refreshToken).not.toBe(me.tokens.refreshToken)
    // The retry got a pair of its own, and the first rotation's pair stays valid.
    expect(both.first.refreshToken).not.toBe(both.second.refreshToken)
    expect((await ok('me one')).user.id).toBe(player.id)
    expect((await ok('me two')).user.id).toBe(player.id)
  })

  csharpTest('a device code: pending until the player approves on the /device page, then signed in on the device', async () => {
    const player = await registerUser(ctx)
    await ok('new tv')
    const started = await ok('device-start tv')
    expect(started.userCode).toMatch(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/)
    expect(started.interval).toBe(5)
    ctx.clock.advance(5_000)
    expect((await ok('device-check tv')).user).toBeNull()
    expect((await answerOnPage(ctx, player.username, started.userCode)).status).toBe(200)
    // The SDK's next poll comes sooner than the server's interval by the real clock: move the server's past it.
    ctx.clock.advance(6_000)
    const polled = await ok('device-poll tv')
    expect(polled.user.id).toBe(player.id)
    expect(polled.signedIn).toBe(true)
    expect((await ok('me tv')).user.id).toBe(player.id)
  })

  csharpTest('an ID token from the OpenID provider: unknown without create, created with it, the same account by either provider name', async () => {
    const sub = `csharp-${crypto.randomUUID()}`
    await ok('new native')
    const unknown = await send(`idtoken native test ${await oidc.mint(sub)}`)
    expect(unknown).toMatchObject({ ok: false, status: 401, code: 'invalid_credentials' })
    const first = await ok(`idtoken native test ${await oidc.mint(sub)} create`)
    expect(first.created).toBe(true)
    expect(first.user.identities).toEqual(['oidc:test'])
    await ok('new native2')
    const again = await ok(`idtoken native2 oidc:test ${await oidc.mint(sub)}`)
    expect(again.created).toBe(false)
    expect(again.user.id).toBe(first.user.id)
    const identities = (await ok('identities native2')).identities as { provider: string; subject: string }[]
    expect(identities.map((i) => [i.provider, i.subject])).toEqual([['oidc:test', sub]])
  })

  csharpTest('the web flow: BeginWebLogin\'s URL through the provider, CompleteWebLoginAsync with the URL it came back to; a cancelled one is 400 access_denied', async () => {
    await ok('new web')
    const start = (await ok(`web-begin web oidc:test ${REDIRECT} create`)).url as string
    expect(start).toBe(`http://127.0.0.1:${server.port}/api/v1/auth/oidc/test/start?redirect=${encodeURIComponent(REDIRECT)}&create=1`)
    const who = `web-${crypto.randomUUID().slice(0, 8)}`
    const landed = await browse(start, who)
    expect(landed.startsWith(`${REDIRECT}#code=`)).toBe(true)
    const signedIn = await ok(`web-complete web ${landed}`)
    expect(signedIn.created).toBe(true)
    expect(signedIn.user.identities).toEqual(['oidc:test'])
    expect((await ok('me web')).user.id).toBe(signedIn.user.id)
    // The code is spent.
    expect(await send(`web-complete web ${landed}`)).toMatchObject({ ok: false, status: 401 })

    const cancelled = await browse((await ok(`web-begin web test ${REDIRECT}`)).url, null)
    expect(await send(`web-complete web ${cancelled}`)).toMatchObject({ ok: false, status: 400, code: 'access_denied' })
  })

  csharpTest('the account: a guest links an ID token, renames itself, exports, unlinks the device; deleting it signs out and forgets the kept secret', async () => {
    const store = join(dir, 'account.json')
    await ok(`new acct ${store}`)
    const guest = await ok('guest acct')
    const sub = `linked-${crypto.randomUUID()}`
    const linked = (await ok(`link-idtoken acct oidc:test ${await oidc.mint(sub)}`)).identities as { provider: string; subject?: string; linkedAt: string }[]
    expect(linked.map((i) => [i.provider, i.subject ?? null])).toEqual([['device', null], ['oidc:test', sub]])
    expect(linked[1]!.linkedAt).toMatch(/^\d{4}-\d\d-\d\dT/)
    const name = `cs_${Math.floor(Math.random() * 1e9)}`
    expect((await ok(`profile acct ${name} FR`)).user).toMatchObject({ id: guest.user.id, username: name, country: 'FR' })
    expect(await send(`profile acct x`)).toMatchObject({ ok: false, status: 422 })
    const exported = await ok('export acct')
    expect(exported.userId).toBe(guest.user.id)
    expect(exported.keys).toEqual(expect.arrayContaining(['exportedAt', 'identities', 'ledger', 'sessions', 'user']))
    expect((await ok('unlink acct device')).identities.map((i: { provider: string }) => i.provider)).toEqual(['oidc:test'])
    expect(await send('unlink acct oidc:test')).toMatchObject({ ok: false, status: 409, code: 'last_identity' })

    const deleted = await ok('delete acct')
    expect(deleted).toMatchObject({ deleted: true, signedIn: false })
    const kept = JSON.parse(readFileSync(store, 'utf8')) as Record<string, string>
    expect(kept['arena.deviceSecret']).toBeUndefined()
    expect(kept['arena.accessToken']).toBeUndefined()
    expect(kept['arena.deviceToken']).toBeString()
  })

  csharpTest('a Steam ticket (checked by the Steam stand-in): unknown without create, created with it, the same account next time; a VAC ban is 403 platform_banned', async () => {
    const { ticket, steamid } = steam.player()
    await ok('new steam')
    expect(await send(`steam steam ${ticket}`)).toMatchObject({ ok: false, status: 401, code: 'invalid_credentials' })
    const first = await ok(`steam steam ${steam.player(steamid).ticket} create`)
    expect(first.created).toBe(true)
    expect(first.user.identities).toEqual(['steam'])
    await ok('new steam2')
    const again = await ok(`steam steam2 ${steam.player(steamid).ticket}`)
    expect(again).toMatchObject({ created: false, user: { id: first.user.id } })
    expect(await send(`steam steam2 ${steam.player(undefined, { vacbanned: true }).ticket} create`)).toMatchObject({ ok: false, status: 403, code: 'platform_banned' })
  })
})
