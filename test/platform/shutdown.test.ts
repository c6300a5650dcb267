// A graceful stop lets in-flight requests finish within the grace period and
// refuses new connections; past the grace period it closes what is left.
import { afterAll, describe, expect, test } from 'bun:test'
import { Elysia } from 'elysia'
import { listen } from '../../src/server'
import { createTestApp } from '../helpers/app'

let entered: () => void = () => {}
let release: () => void = () => {}
function arm() {
  const inside = new Promise<void>((resolve) => (entered = resolve))
  const gate = new Promise<void>((resolve) => (release = resolve))
  return { inside, gate }
}
let current = arm()

const probes = new Elysia().get('/probe/slow', async () => {
  entered()
  await current.gate
  return { finished: true }
})

const ctx = await createTestApp({ probes })
afterAll(() => ctx.close())

function serve(graceS: number) {
  let stopped = 0
  const server = listen(ctx.app, {
    config: { ...ctx.config, host: '127.0.0.1', port: 0, shutdownGraceS: graceS },
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    lifecycle: ctx.lifecycle,
    onStopped: () => stopped++,
  })
  return { server, stoppedCount: () => stopped }
}

describe('graceful stop', () => {
  test('an in-flight request completes; new connections are refused; resources are released once', async () => {
    current = arm()
    ctx.lifecycle.draining = false
    const { server, stoppedCount } = serve(5)
    const inflight = fetch(`${server.url}/probe/slow`)
    await current.inside

    const stopping = server.stop('test')
    expect(ctx.lifecycle.draining).toBe(true)
    await Bun.sleep(20)
    expect(stoppedCount()).toBe(0) // still waiting for the request
    await expect(fetch(`${server.url}/healthz`, { keepalive: false })).rejects.toThrow()

    release()
    const res = await inflight
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ finished: true })
    await stopping
    expect(stoppedCount()).toBe(1)
    await server.stop('again') // idempotent
    expect(stoppedCount()).toBe(1)
  }, 10_000)

  test('past the grace period open requests are cut and the stop completes', async () => {
    current = arm()
    ctx.lifecycle.draining = false
    const { server, stoppedCount } = serve(1)
    const inflight = fetch(`${server.url}/probe/slow`).then(
      (res) => res.status,
      () => 'cut' as const,
    )
    await current.inside
    const started = performance.now()
    await server.stop('test')
    const took = performance.now() - started
    expect(took).toBeGreaterThanOrEqual(900)
    expect(took).toBeLessThan(4000)
    expect(await inflight).toBe('cut')
    expect(stoppedCount()).toBe(1)
    release()
  }, 10_000)
})
