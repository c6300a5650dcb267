// Invariant: housekeeping deletes only what can no longer be used: sessions a
// day past expiry, throttle rows whose window and block have ended, expired
// one-time codes, events
// and mail done with (sent, failed, kept) past retention. Live sessions,
// blocks, recent events and mail still to be sent stay.
import { afterAll, expect, test } from 'bun:test'
import { housekeeping } from '../../src/modules/events/housekeeping'
import { postJson } from '../helpers/app'
import { createArenaApp, createGame, openSession, players, playerOf, startedTournament } from '../helpers/arena'
import { funded, mint } from '../helpers/purchases'
import { newId } from '../../src/shared/ids'
import type { MailStatus } from '../../src/modules/mail/store'

const ctx = await createArenaApp({ ARENA_TRUST_PROXY: 'true' })
afterAll(() => ctx.close())
const { loginThrottle, gameSessions, pinSessions, accountCodes } = ctx.peek.tables

test('expired sessions and stale throttle rows go; live ones stay', async () => {
  const { game, gameKey } = await createGame(ctx)
  const people = await players(ctx, 2)
  const t = await startedTournament(ctx, game.id, people)
  expect((await openSession(ctx, game.id, gameKey, playerOf(t, people, t.matches[0]!.slot1ParticipantId!), t.matches[0]!.id)).status).toBe(201)
  const buyer = await funded(ctx, '1')
  await mint(ctx, buyer)
  for (let i = 0; i < 2; i++) await ctx.handle(postJson('/api/v1/user/login', { identifier: 'ghost', password: 'x' }, { 'x-forwarded-for': '192.0.2.1' }))
  const counts = async () => ({
    game: (await ctx.peek.db.select().from(gameSessions)).length,
    pin: (await ctx.peek.db.select().from(pinSessions)).length,
    throttle: (await ctx.peek.db.select().from(loginThrottle)).length,
    codes: (await ctx.peek.db.select().from(accountCodes)).length,
  })
  const before = await counts()
  expect(before.game).toBeGreaterThan(0)
  expect(before.pin).toBeGreaterThan(0)
  expect(before.throttle).toBeGreaterThan(0)
  expect(before.codes).toBeGreaterThan(0) // the verification codes register mailed

  expect(await housekeeping(ctx.services.storage, ctx.clock, 30)).toEqual({ events: 0, gameSessions: 0, pinSessions: 0, throttleRows: 0, accountCodes: 0, mail: 0, knownPlaces: 0, oidcFlows: 0, exchangeCodes: 0, rateLimitCounters: 0, securityEvents: 0, deviceCodes: 0, socketTickets: 0, tickets: 0, challenges: 0, evidence: 0, evidenceBlobs: 0, serverSignatures: 0, webhookDeliveries: 0, webhookExpired: 0 })
  expect(await counts()).toEqual(before)

  ctx.clock.advance(2 * 86_400_000)
  const report = await housekeeping(ctx.services.storage, ctx.clock, 30)
  expect(report).toMatchObject({ events: 0, gameSessions: before.game, pinSessions: before.pin, throttleRows: before.throttle, accountCodes: before.codes })
  expect(await counts()).toEqual({ game: 0, pin: 0, throttle: 0, codes: 0 })
})

test('mail sent, failed or kept goes after the retention; queued mail never does', async () => {
  const { mailOutbox } = ctx.peek.tables
  const queue = async (status: MailStatus) => {
    const id = newId('mail')
    const now = ctx.clock.now()
    await ctx.storage.write(async (tx) => {
      await tx.mail.enqueue({ id, userId: null, toAddress: `${status}@example.com`, kind: 'test', subject: status, textBody: status, htmlBody: status, status: status === 'kept' ? 'kept' : 'queued', nextAttemptAt: now, createdAt: now })
      if (status === 'sent') await tx.mail.markSent(id, now)
      if (status === 'failed') await tx.mail.markAttemptFailed(id, { error: '550 no such user', nextAttemptAt: now, giveUp: true })
    })
  }
  await ctx.peek.db.delete(mailOutbox)
  for (const status of ['queued', 'sent', 'failed', 'kept'] as const) await queue(status)
  const statuses = async () => (await ctx.peek.db.select().from(mailOutbox)).map((m) => m.status).sort()
  expect(await statuses()).toEqual(['failed', 'kept', 'queued', 'sent'])

  ctx.clock.advance(29 * 86_400_000)
  expect((await housekeeping(ctx.services.storage, ctx.clock, 30)).mail).toBe(0)
  ctx.clock.advance(2 * 86_400_000)
  expect((await housekeeping(ctx.services.storage, ctx.clock, 30)).mail).toBe(3)
  expect(await statuses()).toEqual(['queued'])
})
