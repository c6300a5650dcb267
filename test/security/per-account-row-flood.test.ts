// Invariant: however fast one account writes, what it can make the database
// store is bounded per row kind: at most MAX_LIVE_PIN_SESSIONS live PIN
// sessions (more mints answer 429 rate_limited with Retry-After), at most
// MAX_OPEN_GAME_SESSIONS open game sessions per game (more issues supersede
// the oldest), at most CLIENT_REPORTS_PER_DAY client security reports per
// rolling day (more answer 429, and reports that raced past the check on
// another instance are shed at the flush), at most MAX_AUTH_SESSIONS session
// rows (a login past it ends the oldest) and MAX_REFRESH_TOKENS_PER_SESSION
// refresh tokens per session; and housekeeping removes each kind
// after its documented lifetime, the security log by cutting the chain's old
// end behind an authenticated anchor so the chain still verifies.
import { afterAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { MAX_REFRESH_TOKENS_PER_SESSION } from '../../src/modules/auth/service'
import { MAX_AUTH_SESSIONS } from '../../src/modules/auth/sign-in'
import { housekeeping } from '../../src/modules/events/housekeeping'
import { CLIENT_REPORTS_PER_DAY } from '../../src/modules/security/event-log'
import { MAX_LIVE_PIN_SESSIONS } from '../../src/modules/security/pin-service'
import { MAX_OPEN_GAME_SESSIONS } from '../../src/modules/matches/service'
import { postJson, type TestApp } from '../helpers/app'
import { createArenaApp, createGame, openSession, playerOf, players, startedTournament, submit, twoInstances, type Player } from '../helpers/arena'
import { login, me, rotate, spentEarlier, type Tokens } from '../helpers/auth'
import { funded, mintRaw } from '../helpers/purchases'

const DAY_MS = 86_400_000
const PIN_TTL_S = 300
const ctx = await createArenaApp({ ARENA_PIN_SESSION_TTL_S: String(PIN_TTL_S), ARENA_SECURITY_LOG_RETENTION_DAYS: '90' })
afterAll(() => ctx.close())
const { pinSessions, gameSessions, securityEvents, securityLogHead, authSessions, refreshTokens, outboxEvents } = ctx.peek.tables

const tidy = (app: TestApp) => housekeeping(app.services.storage, app.clock, app.config.eventRetentionDays, app.services.securityLog)
const errorCode = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code
const report = (app: TestApp, p: Player, i: number) =>
  app.handle(postJson('/api/v1/security/events', { kind: 'FLOOD', level: 'SAFE', details: { i, pad: 'x'.repeat(512) } }, { authorization: `Bearer ${p.tokens.accessToken}` }))
const clientRowsOf = async (app: TestApp, userId: string) =>
  (await app.peek.db.select({ seq: securityEvents.seq }).from(securityEvents).where(and(eq(securityEvents.userId, userId), eq(securityEvents.source, 'client')))).length

describe('one account flooding a write route stores a bounded number of rows', () => {
  test(`PIN-session mints: at most ${MAX_LIVE_PIN_SESSIONS} live; more answer 429 rate_limited until one expires; housekeeping removes the expired`, async () => {
    const p = await funded(ctx, '0')
    const rowsOf = async () => (await ctx.peek.db.select({ id: pinSessions.id }).from(pinSessions).where(eq(pinSessions.userId, p.userId))).length
    const statuses = new Map<number, number>()
    for (let i = 0; i < 600; i++) {
      const res = await mintRaw(ctx, p)
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
      if (res.status === 429) {
        expect(await errorCode(res)).toBe('rate_limited')
        const retryAfter = Number(res.headers.get('retry-after'))
        expect(retryAfter).toBeGreaterThanOrEqual(1)
        expect(retryAfter).toBeLessThanOrEqual(PIN_TTL_S)
      }
      if (i % 100 === 0) expect(await rowsOf()).toBeLessThanOrEqual(MAX_LIVE_PIN_SESSIONS)
    }
    expect(Object.fromEntries(statuses)).toEqual({ 201: MAX_LIVE_PIN_SESSIONS, 429: 600 - MAX_LIVE_PIN_SESSIONS })
    expect(await rowsOf()).toBe(MAX_LIVE_PIN_SESSIONS)

    // Once they expire, minting works again; the expired rows stay a day (410 for late verifies), then go.
    ctx.clock.advance(PIN_TTL_S * 1000 + 1000)
    expect((await mintRaw(ctx, p)).status).toBe(201)
    expect(await rowsOf()).toBe(MAX_LIVE_PIN_SESSIONS + 1)
    ctx.clock.advance(DAY_MS + PIN_TTL_S * 1000 + 1000)
    await tidy(ctx)
    expect(await rowsOf()).toBe(0)
  }, 120_000)

  test(`game-session issues: at most ${MAX_OPEN_GAME_SESSIONS} open per account per game; a superseded token is refused like a used one`, async () => {
    const { game, gameKey } = await createGame(ctx, 'Flood Duel')
    const people = await players(ctx, 2)
    const t = await startedTournament(ctx, game.id, people)
    const match = t.matches.find((m) => m.slot1ParticipantId && m.slot2ParticipantId)!
    const p = playerOf(t, people, match.slot1ParticipantId!)
    const rowsOf = async () =>
      (await ctx.peek.db.select({ id: gameSessions.id }).from(gameSessions).where(and(eq(gameSessions.userId, p.userId), eq(gameSessions.gameId, game.id)))).length
    const tokens: string[] = []
    for (let i = 0; i < 300; i++) {
      const res = await openSession(ctx, game.id, gameKey, p, match.id)
      expect(res.status).toBe(201)
      tokens.push(((await res.json()) as { token: string }).token)
      if (i % 50 === 0) expect(await rowsOf()).toBeLessThanOrEqual(MAX_OPEN_GAME_SESSIONS)
    }
    expect(await rowsOf()).toBe(MAX_OPEN_GAME_SESSIONS)
    const superseded = await submit(ctx, game.id, gameKey, p, tokens[0]!, { outcome: 'DRAW' })
    expect(superseded.status).toBe(401)
    expect(await errorCode(superseded)).toBe('session_token_invalid')
    expect((await submit(ctx, game.id, gameKey, p, tokens.at(-1)!, { outcome: 'DRAW' })).status).toBe(200)

    // Expired a day ago: housekeeping removes them all.
    ctx.clock.advance(ctx.config.gameSessionTtlS * 1000 + DAY_MS + 1000)
    await tidy(ctx)
    expect(await rowsOf()).toBe(0)
  }, 120_000)

  test(`client security reports: at most ${CLIENT_REPORTS_PER_DAY} a rolling day, then 429; pruned after the retention with the chain still verifying`, async () => {
    const [p] = await players(ctx, 1)
    const statuses: number[] = []
    const dailyRefusals: Response[] = []
    for (let i = 0; i < 300; i++) {
      const res = await report(ctx, p!, i)
      statuses.push(res.status)
      const retryAfter = Number(res.headers.get('retry-after'))
      if (res.status === 429) expect(retryAfter).toBeGreaterThanOrEqual(1)
      // (The route's per-second token bucket refuses with Retry-After: 1; the daily bound with the day's rest.)
      if (res.status === 429 && retryAfter > 1) dailyRefusals.push(res)
      if (i % 50 === 0) await ctx.services.securityLog.flush()
    }
    await ctx.services.securityLog.flush()
    expect(statuses.filter((s) => s === 202).length).toBe(CLIENT_REPORTS_PER_DAY)
    expect(statuses.filter((s) => s !== 202 && s !== 429)).toEqual([])
    expect(await clientRowsOf(ctx, p!.userId)).toBe(CLIENT_REPORTS_PER_DAY)
    // The refusal names the day's window: retry once the oldest report leaves it.
    expect(dailyRefusals.length).toBeGreaterThan(0)
    for (const refused of dailyRefusals) {
      expect(await errorCode(refused)).toBe('rate_limited')
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(DAY_MS / 1000 - 600)
    }

    // A day later the window has moved on: another day's worth is accepted, no more
    // (after the per-second bucket, which counts real time, has refilled).
    ctx.clock.advance(DAY_MS + 1000)
    await Bun.sleep(3100)
    let accepted = 0
    p!.tokens = await login(ctx, p!.username)
    for (let i = 0; i < CLIENT_REPORTS_PER_DAY + 5; i++) if ((await report(ctx, p!, i)).status === 202) accepted++
    expect(accepted).toBe(CLIENT_REPORTS_PER_DAY)
    await ctx.services.securityLog.flush()
    expect(await clientRowsOf(ctx, p!.userId)).toBe(2 * CLIENT_REPORTS_PER_DAY)

    // Past the retention every old event goes but the newest; the chain verifies from the anchor.
    expect((await tidy(ctx)).securityEvents).toBe(0)
    ctx.clock.advance(91 * DAY_MS)
    const [other] = await players(ctx, 1)
    expect((await report(ctx, other!, 0)).status).toBe(202)
    await ctx.services.securityLog.flush()
    expect((await tidy(ctx)).securityEvents).toBeGreaterThanOrEqual(2 * CLIENT_REPORTS_PER_DAY)
    expect(await clientRowsOf(ctx, p!.userId)).toBe(0)
    expect(await clientRowsOf(ctx, other!.userId)).toBe(1)
    expect(await ctx.services.securityLog.verify()).toMatchObject({ ok: true })
    // The log goes on from where it was cut.
    p!.tokens = await login(ctx, p!.username)
    expect((await report(ctx, p!, 1)).status).toBe(202)
    await ctx.services.securityLog.flush()
    expect(await ctx.services.securityLog.verify()).toMatchObject({ ok: true })

    // A cut that housekeeping did not make (an anchor moved by hand) does not verify.
    const [head] = await ctx.peek.db.select().from(securityLogHead)
    await ctx.peek.db.update(securityLogHead).set({ prunedSeq: head!.prunedSeq! + 1 })
    expect(await ctx.services.securityLog.verify()).toMatchObject({ ok: false })
    await ctx.peek.db.update(securityLogHead).set({ prunedSeq: head!.prunedSeq })
    expect(await ctx.services.securityLog.verify()).toMatchObject({ ok: true })
  }, 120_000)
})

describe('one account signing in and refreshing without end', () => {
  test(`logins: at most ${MAX_AUTH_SESSIONS} session rows per account; a login past it ends the oldest session (superseded)`, async () => {
    const [p] = await players(ctx, 1)
    const rowsOf = async () => (await ctx.peek.db.select({ id: authSessions.id }).from(authSessions).where(eq(authSessions.userId, p!.userId))).length
    const first = p!.tokens
    const logins: Tokens[] = []
    // A few at a time: each login is an argon2id verify.
    for (let i = 0; logins.length < MAX_AUTH_SESSIONS + 5; i++) logins.push(...(await Promise.all(Array.from({ length: 4 }, () => login(ctx, p!.username)))))
    expect(await rowsOf()).toBe(MAX_AUTH_SESSIONS)
    expect((await me(ctx, first.accessToken)).status).toBe(401)
    expect((await me(ctx, logins.at(-1)!.accessToken)).status).toBe(200)
    const ended = await ctx.peek.db.select({ data: outboxEvents.data }).from(outboxEvents).where(and(eq(outboxEvents.userId, p!.userId), eq(outboxEvents.type, 'session.logout')))
    expect(ended.length).toBeGreaterThan(0)
    expect(ended.every((e) => (e.data as { reason: string }).reason === 'superseded')).toBe(true)
  }, 120_000)

  test(`refresh rotations: at most ${MAX_REFRESH_TOKENS_PER_SESSION} refresh tokens per session; a replay of a kept spent token still revokes the session`, async () => {
    const [p] = await players(ctx, 1)
    let tokens: Pick<Tokens, 'accessToken' | 'refreshToken'> = p!.tokens
    const spent: string[] = []
    const rowsOf = async () => (await ctx.peek.db.select({ hash: refreshTokens.tokenHash }).from(refreshTokens).innerJoin(authSessions, eq(authSessions.id, refreshTokens.sessionId)).where(eq(authSessions.userId, p!.userId))).length
    for (let i = 0; i < 3 * MAX_REFRESH_TOKENS_PER_SESSION; i++) {
      ctx.clock.advance(1) // the tokens kept are the newest by issue time
      const res = await rotate(ctx, tokens)
      expect(res.status).toBe(200)
      spent.push(tokens.refreshToken)
      tokens = (await res.json()) as Tokens
      if (i % 50 === 0) expect(await rowsOf()).toBeLessThanOrEqual(MAX_REFRESH_TOKENS_PER_SESSION)
    }
    expect(await rowsOf()).toBe(MAX_REFRESH_TOKENS_PER_SESSION)
    // Past the retry grace (measured on the database's clock, which the test clock does not move on PostgreSQL): a spent token presented now is a replay.
    await spentEarlier(ctx, tokens.accessToken, 60_000)
    // A token rotated away long ago is no longer known: refused, the session untouched.
    const forgotten = await rotate(ctx, { accessToken: tokens.accessToken, refreshToken: spent[0]! })
    expect(forgotten.status).toBe(401)
    expect(await errorCode(forgotten)).toBe('unauthorized')
    expect((await me(ctx, tokens.accessToken)).status).toBe(200)
    // A recent one is still recognised as a replay: the session ends.
    const replayed = await rotate(ctx, { accessToken: tokens.accessToken, refreshToken: spent.at(-1)! })
    expect(replayed.status).toBe(401)
    expect(await errorCode(replayed)).toBe('refresh_token_reused')
    expect((await me(ctx, tokens.accessToken)).status).toBe(401)
  }, 120_000)
})

describe('two instances', async () => {
  const { one, two } = await twoInstances()

  test(`reports sent through two instances at once still store at most ${CLIENT_REPORTS_PER_DAY} for the account`, async () => {
    const [p] = await players(one, 1)
    // Each instance admits up to the cap from what it sees; the flush, counting inside its write, sheds the rest.
    // What an instance sees includes what the other already flushed (a flush runs within a second, and a
    // slow machine spreads the requests over one): those past the cap by then are refused with 429 at once.
    const answers = await Promise.all(Array.from({ length: 2 * 15 }, (_, i) => report(i % 2 === 0 ? one : two, p!, i)))
    const statuses = answers.map((res) => res.status)
    expect(statuses.filter((status) => status !== 202 && status !== 429)).toEqual([])
    const admitted = statuses.filter((status) => status === 202).length
    expect(admitted).toBeGreaterThanOrEqual(CLIENT_REPORTS_PER_DAY)
    await Promise.all([one.services.securityLog.flush(), two.services.securityLog.flush()])
    expect(await clientRowsOf(one, p!.userId)).toBe(CLIENT_REPORTS_PER_DAY)
    expect(one.services.securityLog.stats().shed + two.services.securityLog.stats().shed).toBe(admitted - CLIENT_REPORTS_PER_DAY)
    expect(await one.services.securityLog.verify()).toMatchObject({ ok: true })
  }, 60_000)
})
