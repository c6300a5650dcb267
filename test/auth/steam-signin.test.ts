// Steam sign-in (contract §13) through HTTP, against a stand-in for the Steam
// Web API on loopback (test/helpers/steam-stub.ts), the one boundary arena
// does not own. Invariants: only a ticket Steam accepts, for this app and
// this identity, signs a player in, as the `steam` identity of that SteamID;
// a VAC- or publisher-banned Steam account is refused (403 platform_banned);
// a ticket Steam refuses, Steam failing or not answering in time, or a ticket
// of the wrong shape writes nothing (no account, no identity, no session);
// arena's publisher key reaches Steam and nowhere else (never a log line).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { count, eq } from 'drizzle-orm'
import { postJson, req, type TestApp } from '../helpers/app'
import { createArenaApp } from '../helpers/arena'
import { banUser } from '../helpers/accounts'
import { bearer, login, me, registerUser } from '../helpers/auth'
import { parseMetrics } from '../helpers/metrics'
import { randomTicketHex, startSteamStub, STEAM_PATH, type SteamStub } from '../helpers/steam-stub'

const TIMEOUT_MS = 300
const METRICS_TOKEN = 'steam-metrics-token-of-at-least-32-chars'

let steam: SteamStub
let ctx: TestApp
beforeAll(async () => {
  steam = startSteamStub()
  ctx = await createArenaApp(steam.env({ ARENA_STEAM_TIMEOUT_MS: String(TIMEOUT_MS), ARENA_METRICS_TOKEN: METRICS_TOKEN }))
})
afterAll(async () => {
  await ctx?.close()
  await steam?.close()
})

interface SignedIn {
  accessToken: string
  refreshToken: string
  created: boolean
  user: { id: string; email: string | null; username: string; emailVerified: boolean }
}

const signIn = (app: TestApp, body: unknown, headers: Record<string, string> = {}) => app.handle(postJson('/api/v1/user/login/steam', body, headers))

async function expectError(res: Response, status: number, code: string) {
  const body = (await res.json()) as { error: { code: string; status: number; message: string } }
  expect({ status: res.status, code: body.error.code }).toEqual({ status, code })
  expect(body.error.status).toBe(status)
  return body.error
}

/** What a sign-in may write: accounts, identities, sessions. A refused sign-in leaves all three as they were. */
async function written(app: TestApp) {
  const { users, identities, authSessions } = app.peek.tables
  const [u] = await app.peek.db.select({ n: count() }).from(users)
  const [i] = await app.peek.db.select({ n: count() }).from(identities)
  const [s] = await app.peek.db.select({ n: count() }).from(authSessions)
  return { users: u!.n, identities: i!.n, sessions: s!.n }
}

const lastRequest = () => steam.requests.at(-1)!

describe('POST /user/login/steam', () => {
  test('a first sign-in with create makes an account (created true) for the SteamID; the same player again gets the same account (created false)', async () => {
    const player = steam.player()
    const first = await signIn(ctx, { ticket: player.ticket, create: true }, { 'user-agent': 'SteamDeck/1.0' })
    expect(first.status).toBe(200)
    const one = (await first.json()) as SignedIn
    expect(one.created).toBe(true)
    expect(one.user.email).toBeNull()
    expect(one.user.username).toMatch(/^player_[0-9A-HJKMNP-TV-Z]{8}$/i)
    expect((await me(ctx, one.accessToken)).status).toBe(200)

    // Steam was asked with the game's app id, the publisher key, the configured identity and the ticket as sent.
    expect(lastRequest().path).toBe(STEAM_PATH)
    expect(lastRequest().params).toEqual({ key: steam.key, appid: steam.appId, ticket: player.ticket, identity: steam.identity })

    const { identities } = ctx.peek.tables
    const rows = await ctx.peek.db.select().from(identities).where(eq(identities.userId, one.user.id))
    expect(rows.map((r) => ({ provider: r.provider, subject: r.subject }))).toEqual([{ provider: 'steam', subject: player.steamid }])

    // A new ticket of the same player (tickets are per launch), with or without create: the same account.
    for (const create of [undefined, true]) {
      const again = await signIn(ctx, { ticket: steam.player(player.steamid).ticket, ...(create === undefined ? {} : { create }) })
      expect(again.status).toBe(200)
      const two = (await again.json()) as SignedIn
      expect(two.created).toBe(false)
      expect(two.user.id).toBe(one.user.id)
      expect(two.refreshToken).not.toBe(one.refreshToken)
    }
  })

  test('a ticket in lower case is the same ticket (hex either case)', async () => {
    const player = steam.player()
    const res = await signIn(ctx, { ticket: player.ticket.toLowerCase(), create: true })
    expect(res.status).toBe(200)
  })

  test('an unknown Steam player without create is 401 invalid_credentials, and no account is made', async () => {
    const before = await written(ctx)
    for (const body of [{ ticket: steam.player().ticket }, { ticket: steam.player().ticket, create: false }]) {
      await expectError(await signIn(ctx, body), 401, 'invalid_credentials')
    }
    expect(await written(ctx)).toEqual(before)
  })

  test('a ticket Steam refuses is 401 invalid_credentials, with or without create, and writes nothing', async () => {
    const before = await written(ctx)
    const refused = [
      randomTicketHex(), // a ticket Steam never issued
      steam.ticket({ kind: 'refused', errorcode: 101, errordesc: 'Invalid ticket' }),
      steam.ticket({ kind: 'refused', errorcode: 102, errordesc: 'Ticket for other app' }),
    ]
    for (const ticket of refused) {
      const error = await expectError(await signIn(ctx, { ticket, create: true }), 401, 'invalid_credentials')
      expect(error.message).not.toContain(ticket)
    }
    expect(await written(ctx)).toEqual(before)
  })

  test('a VAC-banned or publisher-banned Steam account is 403 platform_banned, even with create, and no account is made', async () => {
    const before = await written(ctx)
    for (const flags of [{ vacbanned: true }, { publisherbanned: true }, { vacbanned: true, publisherbanned: true }]) {
      await expectError(await signIn(ctx, { ticket: steam.player(undefined, flags).ticket, create: true }), 403, 'platform_banned')
    }
    expect(await written(ctx)).toEqual(before)
  })

  test('a ban refuses a Steam player who already has an account too', async () => {
    const player = steam.player()
    expect((await signIn(ctx, { ticket: player.ticket, create: true })).status).toBe(200)
    await expectError(await signIn(ctx, { ticket: steam.player(player.steamid, { vacbanned: true }).ticket }), 403, 'platform_banned')
  })

  test('under Family Sharing the player signs in as themselves (steamid), not as the owner of the copy', async () => {
    const owner = steam.player()
    const borrower = steam.player(undefined, { ownersteamid: owner.steamid })
    const res = await signIn(ctx, { ticket: borrower.ticket, create: true })
    expect(res.status).toBe(200)
    const body = (await res.json()) as SignedIn
    const { identities } = ctx.peek.tables
    const rows = await ctx.peek.db.select().from(identities).where(eq(identities.userId, body.user.id))
    expect(rows.map((r) => r.subject)).toEqual([borrower.steamid])
    // The owner is someone else: no account of theirs yet.
    await expectError(await signIn(ctx, { ticket: steam.player(owner.steamid).ticket }), 401, 'invalid_credentials')
  })

  test('Steam not answering within ARENA_STEAM_TIMEOUT_MS is 503 service_unavailable with Retry-After, answered at the timeout, writing nothing', async () => {
    const before = await written(ctx)
    const started = performance.now()
    const res = await signIn(ctx, { ticket: steam.ticket({ kind: 'hang' }), create: true })
    const waited = performance.now() - started
    await expectError(res, 503, 'service_unavailable')
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(waited).toBeGreaterThanOrEqual(TIMEOUT_MS - 20)
    expect(waited).toBeLessThan(TIMEOUT_MS + 2000)
    expect(await written(ctx)).toEqual(before)
  })

  test("Steam failing (5xx, 429) or answering what arena cannot read is 503 service_unavailable, writing nothing", async () => {
    const before = await written(ctx)
    const failing = [
      steam.ticket({ kind: 'status', status: 500 }),
      steam.ticket({ kind: 'status', status: 502 }),
      steam.ticket({ kind: 'status', status: 429, body: '' }),
      steam.ticket({ kind: 'status', status: 200, body: '<html>maintenance</html>' }),
      steam.ticket({ kind: 'status', status: 200, body: '{"response":{"params":{"result":"OK","steamid":"not a steam id"}}}' }),
      steam.ticket({ kind: 'status', status: 200, body: '{"response":{}}' }),
    ]
    for (const ticket of failing) {
      const res = await signIn(ctx, { ticket, create: true })
      await expectError(res, 503, 'service_unavailable')
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    }
    expect(await written(ctx)).toEqual(before)
  })

  test('a ticket of the wrong shape is 422 validation_failed, and Steam is never asked', async () => {
    const asked = steam.requests.length
    const hex = randomTicketHex()
    const bodies: unknown[] = [
      {},
      { ticket: '' },
      { ticket: 42 },
      { ticket: 'not hex at all, not hex at all' },
      { ticket: hex.slice(0, -1) }, // an odd number of digits is no bytes
      { ticket: '0A0B0C0D' }, // too short to be a ticket
      { ticket: 'AB'.repeat(2049) }, // over 2 KiB
      { ticket: `${hex}&key=other` }, // nothing may be smuggled into Steam's query
      { ticket: hex, create: 'yes' },
    ]
    for (const body of bodies) await expectError(await signIn(ctx, body), 422, 'validation_failed')
    expect(steam.requests.length).toBe(asked)
  })

  test('an operator ban on the account refuses its Steam sign-in: 403 account_banned', async () => {
    const player = steam.player()
    const res = await signIn(ctx, { ticket: player.ticket, create: true })
    const { user } = (await res.json()) as SignedIn
    expect((await banUser(ctx, user.id, { reason: 'smurfing' })).status).toBe(200)
    const error = await expectError(await signIn(ctx, { ticket: steam.player(player.steamid).ticket }), 403, 'account_banned')
    expect(error).toHaveProperty('until', null)
  })

  test('linking Steam to a password account (POST /me/identities/steam): Steam then signs in to it; a banned Steam account or one linked elsewhere is refused', async () => {
    const owner = await registerUser(ctx)
    const token = (await login(ctx, owner.username)).accessToken
    const link = (ticket: string, as = token) => ctx.handle(postJson('/api/v1/me/identities/steam', { ticket }, bearer(as)))

    // A banned Steam account cannot be linked, and nothing is linked.
    await expectError(await link(steam.player(undefined, { publisherbanned: true }).ticket), 403, 'platform_banned')
    // A ticket Steam refuses, or of the wrong shape (Steam never asked), links nothing either.
    await expectError(await link(randomTicketHex()), 401, 'invalid_credentials')
    const asked = steam.requests.length
    await expectError(await link('not hex'), 422, 'validation_failed')
    expect(steam.requests.length).toBe(asked)

    const player = steam.player()
    const linked = await link(player.ticket)
    expect(linked.status).toBe(200)
    const { identities } = (await linked.json()) as { identities: { provider: string; subject?: string }[] }
    expect(identities.find((i) => i.provider === 'steam')).toMatchObject({ provider: 'steam', subject: player.steamid })

    // Steam now signs in to the password account, without creating one.
    const res = await signIn(ctx, { ticket: steam.player(player.steamid).ticket })
    expect(res.status).toBe(200)
    expect((await res.json()) as SignedIn).toMatchObject({ created: false, user: { id: owner.id } })

    // The same Steam account, linked by someone else: 409 identity_in_use (never merged).
    const other = await registerUser(ctx)
    const otherToken = (await login(ctx, other.username)).accessToken
    await expectError(await link(steam.player(player.steamid).ticket, otherToken), 409, 'identity_in_use')
  })

  test('GET /metrics counts the checks by outcome', async () => {
    const res = await ctx.handle(req('/metrics', { headers: bearer(METRICS_TOKEN) }))
    const samples = parseMetrics(await res.text()).filter((s) => s.name === 'arena_steam_ticket_checks_total')
    const by = Object.fromEntries(samples.map((s) => [s.labels.outcome!, s.value]))
    // Every outcome is reported from 0; the tests above produced these (the order of tests in this file is bun's, top to bottom).
    expect(Object.keys(by).sort()).toEqual(['banned', 'invalid_ticket', 'key_refused', 'ok', 'timeout', 'unavailable', 'unexpected'])
    expect(by.ok).toBeGreaterThanOrEqual(8)
    expect(by.invalid_ticket).toBe(4)
    expect(by.banned).toBe(5)
    expect(by.timeout).toBe(1)
    expect(by.unavailable).toBe(3)
    expect(by.unexpected).toBe(3)
    expect(by.key_refused).toBe(0)
  })

  test('neither the publisher key nor a ticket ever appears in a log line', () => {
    const logs = ctx.logText()
    expect(logs).not.toContain(steam.key)
    for (const { params } of steam.requests) if (params.ticket) expect(logs).not.toContain(params.ticket)
    expect(logs).toContain('steam refused a ticket')
  })
})

describe('configuration', () => {
  test('without ARENA_STEAM_APP_ID and ARENA_STEAM_WEB_API_KEY the route answers 404 not_found, asking nobody', async () => {
    const app = await createArenaApp()
    try {
      const asked = steam.requests.length
      const error = await expectError(await signIn(app, { ticket: steam.player().ticket, create: true }), 404, 'not_found')
      expect(error.message).toContain('Steam sign-in is not configured')
      expect(steam.requests.length).toBe(asked)
    } finally {
      await app.close()
    }
  })

  test('a publisher key Steam refuses is 503 for the player and an error log naming the settings to check, never the key', async () => {
    const wrongKey = 'F'.repeat(32)
    const app = await createArenaApp(steam.env({ ARENA_STEAM_WEB_API_KEY: wrongKey }))
    try {
      const before = await written(app)
      await expectError(await signIn(app, { ticket: steam.player().ticket, create: true }), 503, 'service_unavailable')
      expect(lastRequest().params.key).toBe(wrongKey)
      expect(await written(app)).toEqual(before)
      const line = app.logs.find((l) => String(l.msg ?? '').includes('publisher key'))
      expect(line).toMatchObject({ level: 'error', outcome: 'key_refused', status: 403 })
      expect(app.logText()).not.toContain(wrongKey)
    } finally {
      await app.close()
    }
  })

  test('a game that asks for its ticket with another identity than ARENA_STEAM_IDENTITY is refused by Steam: 401', async () => {
    const app = await createArenaApp(steam.env({ ARENA_STEAM_IDENTITY: 'another-identity' }))
    try {
      await expectError(await signIn(app, { ticket: steam.player().ticket, create: true }), 401, 'invalid_credentials')
      expect(lastRequest().params.identity).toBe('another-identity')
    } finally {
      await app.close()
    }
  })

  test('Steam unreachable (nothing listening) is 503 service_unavailable', async () => {
    const gone = startSteamStub()
    const url = gone.url
    await gone.close()
    const app = await createArenaApp(steam.env({ ARENA_STEAM_API_URL: url }))
    try {
      await expectError(await signIn(app, { ticket: steam.player().ticket, create: true }), 503, 'service_unavailable')
      expect(app.logText()).not.toContain(steam.key)
    } finally {
      await app.close()
    }
  })
})
