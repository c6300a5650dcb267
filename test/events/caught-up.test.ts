// Caught-up polls remembered (src/modules/events/caught-up.ts, SQLite only):
// the same empty poll again within a second does not read the database, and
// still every event this process appends is seen by the very next poll, and
// an event written behind its back within a second.
import { afterAll, describe, expect, test } from 'bun:test'
import { CaughtUpPolls } from '../../src/modules/events/caught-up'
import type { EventsPage } from '../../src/modules/events/model'
import { req } from '../helpers/app'
import { postJson } from '../helpers/app'
import { testOnEngine } from '../helpers/engine'
import { admin, createArenaApp, players, type Player } from '../helpers/arena'

describe('CaughtUpPolls', () => {
  let clock = 0
  const polls = () => new CaughtUpPolls(1000, () => clock)

  test('an empty read is remembered for its user and key, for less than maxAge', () => {
    clock = 0
    const p = polls()
    p.remember('u1', '5 wallet', p.begin())
    expect(p.has('u1', '5 wallet')).toBe(true)
    expect(p.has('u1', '5 session')).toBe(false)
    expect(p.has('u2', '5 wallet')).toBe(false)
    clock = 999
    expect(p.has('u1', '5 wallet')).toBe(true)
    clock = 1000
    expect(p.has('u1', '5 wallet')).toBe(false)
  })

  test('a wake-up forgets its user; a wake-up of all forgets everyone', () => {
    clock = 0
    const p = polls()
    p.remember('u1', 'k', p.begin())
    p.remember('u2', 'k', p.begin())
    p.forget('u1')
    expect(p.has('u1', 'k')).toBe(false)
    expect(p.has('u2', 'k')).toBe(true)
    p.forget(null)
    expect(p.has('u2', 'k')).toBe(false)
  })

  test('a read under way when any wake-up came is not remembered (it may have missed the append)', () => {
    clock = 0
    const p = polls()
    const epoch = p.begin()
    p.forget('u1') // the commit and its wake-up, between the read and remember()
    p.remember('u1', 'k', epoch)
    expect(p.has('u1', 'k')).toBe(false)
    p.remember('u1', 'k', p.begin())
    expect(p.has('u1', 'k')).toBe(true)
  })
})

describe('GET /api/v1/events, caught up', async () => {
  const ctx = await createArenaApp()
  afterAll(() => ctx.close())

  type Page = EventsPage
  const poll = async (p: Player, query: string) => {
    const res = await ctx.handle(req(`/api/v1/events${query}`, { headers: { authorization: `Bearer ${p.tokens.accessToken}` } }))
    expect(res.status).toBe(200)
    return (await res.json()) as Page
  }
  const caughtUp = async (p: Player) => {
    let cursor = ''
    for (;;) {
      const page = await poll(p, `?topics=wallet${cursor ? `&after=${cursor}` : ''}`)
      cursor = page.cursor
      if (page.events.length === 0) return cursor
    }
  }
  /** Calls of the read store's page() while `work` runs. */
  const pageReads = async (work: () => Promise<unknown>) => {
    const store = ctx.storage.read.events
    const page = store.page
    let calls = 0
    store.page = (...args) => {
      calls++
      return page.apply(store, args)
    }
    try {
      await work()
    } finally {
      store.page = page
    }
    return calls
  }

  testOnEngine('sqlite', 'the same caught-up poll again within a second reads nothing', async () => {
    const [p] = await players(ctx, 1)
    const cursor = await caughtUp(p!)
    const reads = await pageReads(async () => {
      for (let i = 0; i < 10; i++) expect((await poll(p!, `?topics=wallet&after=${cursor}`)).events).toEqual([])
    })
    expect(reads).toBe(0)
  })

  test('an append of this process reaches the very next poll', async () => {
    const [p, other] = await players(ctx, 2)
    const cursor = await caughtUp(p!)
    for (let round = 0; round < 5; round++) {
      expect((await poll(p!, `?topics=wallet&after=${cursor}`)).events).toEqual([])
      // Another user's event forgets nothing of p's, and must not hide p's next one either.
      await ctx.handle(postJson(`/api/v1/admin/wallets/${other!.userId}/credit`, { amount: '1', reference: `other-${round}` }, admin))
    }
    const credited = await ctx.handle(postJson(`/api/v1/admin/wallets/${p!.userId}/credit`, { amount: '1', reference: 'caught-up-1' }, admin))
    expect(credited.status).toBe(200)
    expect((await poll(p!, `?topics=wallet&after=${cursor}`)).events.map((e) => e.type)).toEqual(['wallet.credited'])
  })

  test('an event written behind the app\'s back reaches a caught-up wait=0 poll within a second', async () => {
    const [p] = await players(ctx, 1)
    const cursor = await caughtUp(p!)
    expect((await poll(p!, `?topics=wallet&after=${cursor}`)).events).toEqual([])
    // As from an `arena` command on the same data dir: no wake-up here.
    const { outboxEvents } = ctx.peek.tables
    await ctx.peek.db.insert(outboxEvents).values({ id: `evt_${'e'.repeat(32)}`, userId: p!.userId, topic: 'wallet', type: 'wallet.credited', data: {}, createdAt: ctx.clock.now() })
    await Bun.sleep(1050)
    expect((await poll(p!, `?topics=wallet&after=${cursor}`)).events.map((e) => e.type)).toEqual(['wallet.credited'])
  })
})
