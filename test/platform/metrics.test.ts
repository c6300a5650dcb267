// GET /metrics: 404 without ARENA_METRICS_TOKEN, 401 without the right bearer,
// the Prometheus text format with it; request labels are route templates.
import { afterAll, describe, expect, test } from 'bun:test'
import { Elysia } from 'elysia'
import { createTestApp, req, settle } from '../helpers/app'
import { createArenaApp } from '../helpers/arena'
import { parseMetrics, type Sample } from '../helpers/metrics'
import { funded, mint, PIN, someAddress, verify } from '../helpers/purchases'

const TOKEN = 'metrics-token-0123456789abcdef0123456789'
const probes = new Elysia().get('/probe/items/:id', ({ params }) => ({ id: params.id }))

const ctx = await createTestApp({ probes, env: { ARENA_METRICS_TOKEN: TOKEN } })
const unset = await createTestApp()
const approval = await createArenaApp({ ARENA_WITHDRAWAL_APPROVAL_ABOVE: '100', ARENA_METRICS_TOKEN: TOKEN })
afterAll(async () => {
  await approval.close()
  await ctx.close()
  await unset.close()
})

const scrape = async (app: { handle(request: Request): Promise<Response> } = ctx) => {
  const res = await app.handle(req('/metrics', { headers: { authorization: `Bearer ${TOKEN}` } }))
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toContain('text/plain')
  return parseMetrics(await res.text())
}

describe('GET /metrics', () => {
  test('answers 404 (as an unknown path does) when ARENA_METRICS_TOKEN is unset', async () => {
    const res = await unset.handle(req('/metrics', { headers: { authorization: `Bearer ${TOKEN}` } }))
    expect(res.status).toBe(404)
    const body = (await res.json()) as { error: { code: string } }
    expect(body.error.code).toBe('not_found')
  })

  test('answers 401 without a bearer or with a wrong one', async () => {
    const attempts: Record<string, string>[] = [{}, { authorization: 'Bearer wrong' }, { authorization: TOKEN }, { authorization: `Bearer ${TOKEN}x` }]
    for (const headers of attempts) {
      const res = await ctx.handle(req('/metrics', { headers }))
      expect(res.status).toBe(401)
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unauthorized')
    }
  })

  test('counts requests by route template, never by raw id', async () => {
    const count = (samples: Sample[]) =>
      samples.find((s) => s.name === 'arena_http_requests_total' && s.labels.route === '/probe/items/:id' && s.labels.method === 'GET' && s.labels.status === '200')?.value ?? 0
    await settle()
    const before = count(await scrape())
    for (const id of ['item-secret-1', 'item-secret-2', 'item-secret-3']) expect((await ctx.handle(req(`/probe/items/${id}`))).status).toBe(200)
    await ctx.handle(req('/no/such/thing-secret-4'))
    await settle()
    const after = await scrape()
    expect(count(after) - before).toBe(3)
    for (const sample of after) for (const value of Object.values(sample.labels)) expect(value).not.toContain('secret')
    expect(after.some((s) => s.name === 'arena_http_request_duration_seconds_count' && s.labels.route === '/probe/items/:id')).toBe(true)
    for (const name of ['arena_security_events_buffered', 'arena_hash_gate_waiting', 'arena_hash_gate_refused_total', 'arena_process_resident_memory_bytes']) {
      expect(after.some((s) => s.name === name)).toBe(true)
    }
  })
})

test('arena_withdrawals counts a withdrawal awaiting approval', async () => {
  const gauge = (samples: Sample[]) => samples.find((s) => s.name === 'arena_withdrawals' && s.labels.status === 'awaiting_approval')?.value
  expect(gauge(await scrape(approval))).toBe(0)
  const p = await funded(approval, '500')
  const res = await verify(approval, p, await mint(approval, p), { pin: PIN, amount: '250', destinationAddress: someAddress(), idempotencyKey: 'metrics-1' })
  expect(((await res.json()) as { withdrawal: { status: string } }).withdrawal.status).toBe('awaiting_approval')
  const after = await scrape(approval)
  expect(gauge(after)).toBe(1)
  expect(after.find((s) => s.name === 'arena_withdrawals' && s.labels.status === 'held')?.value).toBe(0)
})
