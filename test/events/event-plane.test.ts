// The event plane: a caller reads only its own events, oldest first, paged by
// an opaque cursor; a waiting poll wakes when an event for it commits; events
// of a rolled-back transaction never appear; old events are pruned.
import { afterAll, describe, expect, test } from 'bun:test'
import type { EventsPage } from '../../src/modules/events/model'
import { postJson, req } from '../helpers/app'
import { admin, createArenaApp, players, type Player } from '../helpers/arena'

const ctx = await createArenaApp()
afterAll(() => ctx.close())

type Page = EventsPage

const poll = async (p: Player, query = '') => {
  const res = await ctx.handle(req(`/api/v1/events${query}`, { headers: { authorization: `Bearer ${p.tokens.accessToken}` } }))
  return { status: res.status, body: (await res.json()) as Page }
}
const credit = (p: Player, amount: string, reference: string) => ctx.handle(postJson(`/api/v1/admin/wallets/${p.userId}/credit`, { amount, reference }, admin))

describe('GET /api/v1/events', () => {
  test('only the caller\'s events, oldest first, with topics and a cursor that pages', async () => {
    const [a, b] = await players(ctx, 2)
    await credit(a!, '1', 'ev-a-1')
    await credit(b!, '2', 'ev-b-1')
    await credit(a!, '3', 'ev-a-2')
    const all = await poll(a!)
    expect(all.status).toBe(200)
    // Register mailed the verification code (account.code_sent) before the login.
    expect(all.body.events.map((e) => e.type)).toEqual(['account.code_sent', 'session.login', 'wallet.credited', 'wallet.credited'])
    expect(all.body.events.map((e) => e.data.amount ?? null)).toEqual([null, null, '1', '3'])
    expect(all.body.events.every((e) => /^evt_/.test(e.id))).toBe(true)
    const wallet = await poll(a!, '?topics=wallet')
    expect(wallet.body.events.map((e) => e.topic)).toEqual(['wallet', 'wallet'])
    const rest = await poll(a!, `?after=${all.body.cursor}`)
    expect(rest.body.events).toEqual([])
    expect(rest.body.cursor).toBe(all.body.cursor)
  })

  test('pages of 100 follow each other without gaps or repeats', async () => {
    const [p] = await players(ctx, 1)
    for (let i = 0; i < 120; i++) await credit(p!, '0.01', `page-${p!.userId}-${i}`)
    const first = await poll(p!, '?topics=wallet')
    expect(first.body.events.length).toBe(100)
    const second = await poll(p!, `?topics=wallet&after=${first.body.cursor}`)
    expect(second.body.events.length).toBe(20)
    const ids = [...first.body.events, ...second.body.events].map((e) => e.id)
    expect(new Set(ids).size).toBe(120)
    expect([...ids].sort()).toEqual(ids)
  })

  test('a waiting poll wakes within 100 ms of a wallet credit', async () => {
    const [p] = await players(ctx, 1)
    const { body: now } = await poll(p!)
    const started = performance.now()
    const waiting = poll(p!, `?after=${now.cursor}&wait=10`)
    await Bun.sleep(150)
    const credited = performance.now()
    await credit(p!, '5', `wake-${p!.userId}`)
    const { body } = await waiting
    const woke = performance.now()
    expect(body.events.map((e) => e.type)).toEqual(['wallet.credited'])
    expect(credited - started).toBeGreaterThanOrEqual(140)
    expect(woke - credited).toBeLessThan(100 + 50) // the credit request itself included
  })

  test('an event of a rolled-back transaction never appears, and does not end a wait', async () => {
    const [p] = await players(ctx, 1)
    const { body: now } = await poll(p!)
    const waiting = poll(p!, `?after=${now.cursor}&wait=1`)
    await Bun.sleep(50)
    await expect(
      ctx.services.storage.write(async (tx) => {
        await tx.events.append({ userId: p!.userId, topic: 'wallet', type: 'wallet.credited', data: { asset: 'USDC', amount: '1', reference: 'phantom', balance: '1' } }, ctx.clock.now())
        throw new Error('rolled back')
      }),
    ).rejects.toThrow('rolled back')
    const started = performance.now()
    const { body } = await waiting
    expect(body.events).toEqual([])
    expect(performance.now() - started).toBeGreaterThan(500)
  })

  test('invalid cursor, unknown topic and too long a wait are 422', async () => {
    const [p] = await players(ctx, 1)
    const beyond = `c1.${Buffer.from('999999999').toString('base64url')}`
    const huge = `c1.${Buffer.from('9999999999999999').toString('base64url')}`
    for (const query of ['?after=garbage', '?after=c1.%24%24', `?after=${beyond}`, `?after=${huge}`, '?topics=wallet,money', '?wait=31', '?wait=-1']) {
      expect((await poll(p!, query)).status).toBe(422)
    }
  })
})

test('a graceful stop ends waiting polls at once', async () => {
  const [p] = await players(ctx, 1)
  const { body: now } = await poll(p!)
  const waiting = poll(p!, `?after=${now.cursor}&wait=20`)
  await Bun.sleep(50)
  const started = performance.now()
  ctx.lifecycle.draining = true
  ctx.services.events.wakeAll()
  try {
    const { status, body } = await waiting
    expect(status).toBe(200)
    expect(body.events).toEqual([])
    expect(performance.now() - started).toBeLessThan(200)
  } finally {
    ctx.lifecycle.draining = false
  }
})

test('events written by another process are found while waiting (re-read every second)', async () => {
  const [p] = await players(ctx, 1)
  const { body: now } = await poll(p!)
  const waiting = poll(p!, `?after=${now.cursor}&wait=10`)
  await Bun.sleep(50)
  // Inserted behind the app's back: no poke, as from the CLI or a second server.
  const { outboxEvents } = ctx.peek.tables
  await ctx.peek.db.insert(outboxEvents).values({ id: `evt_${'f'.repeat(32)}`, userId: p!.userId, topic: 'wallet', type: 'wallet.credited', data: {}, createdAt: ctx.clock.now() })
  const started = performance.now()
  const { body } = await waiting
  expect(body.events.map((e) => e.type)).toEqual(['wallet.credited'])
  expect(performance.now() - started).toBeLessThan(1500)
})

describe('retention', () => {
  test('events older than the retention period are pruned', async () => {
    const [p] = await players(ctx, 1)
    await credit(p!, '1', `old-${p!.userId}`)
    // The default retention: 30 days.
    expect(await ctx.services.events.prune()).toBe(0)
    ctx.clock.advance(31 * 86_400_000)
    expect(await ctx.services.events.prune()).toBeGreaterThan(0)
    p!.tokens = (await (await ctx.handle(postJson('/api/v1/user/login', { identifier: p!.username, password: 'correct horse battery' }))).json()) as Player['tokens']
    const { body } = await poll(p!, '?topics=wallet')
    expect(body.events).toEqual([])
  })
})
