// The SDK's event plane client against the real long-poll endpoint.
import { afterEach, describe, expect, test } from 'bun:test'
import { ApiError, NetworkError, type PlaneEvent } from '@arena/sdk'
import type { TestApp } from '../helpers/app'
import { admin, createArenaApp, type Player } from '../helpers/arena'
import { postJson } from '../helpers/app'
import { PASSWORD } from '../helpers/auth'
import { funded } from '../helpers/purchases'
import { sdkClient } from '../helpers/sdk'

let ctx: TestApp
afterEach(() => ctx?.close())

async function credit(player: Player, amount: string, reference: string) {
  const res = await ctx.handle(postJson(`/api/v1/admin/wallets/${player.userId}/credit`, { amount, reference }, admin))
  expect(res.status).toBe(200)
}

async function listener(options: Parameters<typeof sdkClient>[1] = {}) {
  const player = await funded(ctx, '0')
  const sdk = sdkClient(ctx, options)
  await sdk.client.auth.login(player.username, PASSWORD)
  return { player, ...sdk }
}

async function until(condition: () => boolean, ms = 5000) {
  const end = Date.now() + ms
  while (!condition()) {
    if (Date.now() > end) throw new Error('condition not reached in time')
    await Bun.sleep(10)
  }
}

describe('SDK events: poll', () => {
  test('poll keeps the cursor per topic set: each event is returned once', async () => {
    ctx = await createArenaApp()
    const { client, player } = await listener()
    await credit(player, '1', 'a')
    const first = await client.events.poll({ topics: ['wallet'] })
    expect(first.map((e) => e.type)).toEqual(['wallet.credited'])
    expect(await client.events.poll({ topics: ['wallet'] })).toEqual([])
    await credit(player, '2', 'b')
    const second = await client.events.poll({ topics: ['wallet'] })
    expect(second.map((e) => e.data.amount)).toEqual(['2'])
    // Another topic set has its own cursor: the session events of the logins are all there.
    expect((await client.events.poll({ topics: ['session'] })).every((e) => e.topic === 'session')).toBe(true)
    expect(client.events.cursor(['wallet'])).toStartWith('c1.')
  })

  test('poll with wait returns as soon as an event is written', async () => {
    ctx = await createArenaApp()
    const { client, player } = await listener()
    await client.events.poll({ topics: ['wallet'] })
    const started = performance.now()
    const waiting = client.events.poll({ topics: ['wallet'], wait: 10 })
    await Bun.sleep(50)
    await credit(player, '3', 'c')
    expect((await waiting).map((e) => e.type)).toEqual(['wallet.credited'])
    expect(performance.now() - started).toBeLessThan(2000)
  })
})

describe('SDK events: subscribe', () => {
  test('delivers pages as batches in order, and stop() ends a long poll at once', async () => {
    ctx = await createArenaApp()
    const { client, player } = await listener()
    const batches: PlaneEvent[][] = []
    const sub = client.events.subscribe(['wallet'], (events) => {
      batches.push(events)
    })
    for (let i = 1; i <= 3; i++) await credit(player, String(i), `r${i}`)
    await until(() => batches.flat().length === 3)
    expect(batches.flat().map((e) => e.data.amount)).toEqual(['1', '2', '3'])
    const stopping = performance.now()
    await sub.stop()
    expect(performance.now() - stopping).toBeLessThan(1000)
    expect(sub.cursor).toStartWith('c1.')
    expect(await sub.done).toEqual({ reason: 'stopped' })
    // The subscription's cursor is its own: poll's is untouched.
    expect(client.events.cursor(['wallet'])).toBeUndefined()
  })

  test('a handler that throws gets the same batch again (the cursor moves only after it returned)', async () => {
    ctx = await createArenaApp()
    const { client, player } = await listener()
    const errors: unknown[] = []
    let calls = 0
    const delivered: string[] = []
    const sub = client.events.subscribe(
      ['wallet'],
      (events) => {
        calls++
        if (calls === 1) throw new Error('handler crashed')
        delivered.push(...events.map((e) => e.id))
      },
      { minBackoffMs: 5, onError: (e) => errors.push(e) },
    )
    await credit(player, '1', 'x')
    await until(() => delivered.length === 1)
    await sub.stop()
    expect(calls).toBe(2)
    expect(errors).toHaveLength(1)
  })

  test('network failures back off and recover without losing events', async () => {
    ctx = await createArenaApp()
    let failures = 2
    const { client, player, count } = await listener({
      intercept: async (request, forward) => {
        if (request.path.startsWith('/api/v1/events') && failures > 0) {
          failures--
          throw new TypeError('offline')
        }
        return forward()
      },
    })
    await credit(player, '7', 'n')
    const errors: unknown[] = []
    const got: PlaneEvent[] = []
    const sub = client.events.subscribe(['wallet'], (events) => void got.push(...events), { minBackoffMs: 20, onError: (e) => errors.push(e) })
    await until(() => got.length === 1)
    await sub.stop()
    expect(errors).toHaveLength(2)
    expect(errors.every((e) => e instanceof NetworkError)).toBe(true)
    expect(count('GET', /^\/api\/v1\/events/)).toBeGreaterThanOrEqual(3)
  })

  test('a revoked session ends the subscription instead of retrying forever', async () => {
    ctx = await createArenaApp()
    const { client } = await listener()
    const errors: unknown[] = []
    const sub = client.events.subscribe(['status'], () => {}, { wait: 1, minBackoffMs: 5, onError: (e) => errors.push(e) })
    await Bun.sleep(50)
    // Logged out from elsewhere: every session of the user revoked.
    const other = sdkClient(ctx).client
    const held = client.auth.current()!
    other.auth.useToken(held.accessToken)
    await other.auth.logout({ all: true })
    const end = await sub.done
    expect(end.reason).toBe('failed')
    expect(errors.at(-1)).toBeInstanceOf(ApiError)
    expect((errors.at(-1) as ApiError).status).toBe(401)
  })

  test('a handler whose own call fails with a 4xx gets the batch again; the subscription does not end', async () => {
    ctx = await createArenaApp()
    const { client, player } = await listener()
    let calls = 0
    const sub = client.events.subscribe(
      ['wallet'],
      () => {
        calls++
        if (calls === 1) throw new ApiError({ status: 403, code: 'forbidden', message: 'the app refused' })
      },
      { minBackoffMs: 5 },
    )
    await credit(player, '1', 'h')
    await until(() => calls === 2)
    await sub.stop()
    expect(await sub.done).toEqual({ reason: 'stopped' })
  })

  test('stop() from inside the handler does not deadlock; stop() from onError cuts the back-off short; a throwing onError is ignored', async () => {
    ctx = await createArenaApp()
    const { client, player } = await listener({
      intercept: async (request, forward) => {
        if (request.path.startsWith('/api/v1/events?') && request.path.includes('topics=status')) {
          return new Response(JSON.stringify({ message: 'slow down' }), { status: 429, headers: { 'retry-after': '30' } })
        }
        return forward()
      },
    })
    await credit(player, '1', 's')
    let sub!: ReturnType<typeof client.events.subscribe>
    sub = client.events.subscribe(['wallet'], async () => {
      await sub.stop()
    })
    expect(await sub.done).toEqual({ reason: 'stopped' })

    let throttled!: ReturnType<typeof client.events.subscribe>
    const started = performance.now()
    throttled = client.events.subscribe(['status'], () => {}, {
      onError: () => {
        void throttled.stop()
        throw new Error('onError itself failed')
      },
    })
    expect(await throttled.done).toEqual({ reason: 'stopped' })
    expect(performance.now() - started).toBeLessThan(2000)
  })
})
