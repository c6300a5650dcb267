// The console shows the realtime plane of the instance it runs on: the
// dashboard counts the event sockets open and, by reason, those closed since
// start (from the hub, as /metrics does); a user's page counts the sockets
// that user holds open here. Real sockets on a real port, then the pages
// over app.handle. Both engines.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { postJson, req, type TestApp } from '../helpers/app'
import { createArenaApp } from '../helpers/arena'
import { bearer, login, registerUser, type Registered } from '../helpers/auth'
import { consoleCookie } from '../helpers/browser'
import { parseMetrics } from '../helpers/metrics'
import { mintTicket, serve, SocketClient } from '../helpers/sockets'
import { waitFor } from '../helpers/wait'

let app: TestApp
let server: ReturnType<typeof serve>
let cookie: string
const METRICS_TOKEN = 'metrics-token-0123456789abcdef0123456789'
beforeAll(async () => {
  app = await createArenaApp({ ARENA_SOCKETS_PER_USER: '2', ARENA_METRICS_TOKEN: METRICS_TOKEN })
  server = serve(app)
  cookie = await consoleCookie(app, 'viewer')
}, 60_000)
afterAll(async () => {
  await server?.stop()
  app?.close()
})

async function page(path: string): Promise<string> {
  const res = await app.handle(req(path, { headers: { cookie } }))
  expect(res.status).toBe(200)
  return res.text()
}

/** The number on the dashboard's sockets card and the sentence under it. */
async function socketsCard(): Promise<{ open: number; detail: string }> {
  const html = await page('/console')
  const card = /<li class="card sockets-card"><span class="value">(\d+)<\/span><br\/?><span class="label">event sockets open on this instance<\/span><span class="detail">([^<]*)<\/span><\/li>/.exec(html)
  expect(card).not.toBeNull()
  return { open: Number(card![1]), detail: card![2]! }
}

/** What a user's page says of that user's sockets. */
async function socketsOf(user: Registered): Promise<string> {
  const html = await page(`/console/users/${user.id}`)
  return /<p id="sockets">([^<]*)</.exec(html)?.[1] ?? 'no sockets line'
}

async function openSocket(accessToken: string): Promise<SocketClient> {
  return SocketClient.open(server.wsUrl, await mintTicket(app, accessToken))
}

describe('console: the realtime plane', () => {
  test('the dashboard counts open sockets and closes by reason; a user page counts that user’s sockets', async () => {
    const alice = await registerUser(app)
    const bob = await registerUser(app)
    const carol = await registerUser(app)
    const aliceTokens = await login(app, alice.username)
    const bobTokens = await login(app, bob.username)

    expect(await socketsCard()).toEqual({ open: 0, detail: 'No socket closed since this instance started.' })

    // Alice may hold two (ARENA_SOCKETS_PER_USER=2): the third is closed with 4029 at once.
    const a1 = await openSocket(aliceTokens.accessToken)
    const a2 = await openSocket(aliceTokens.accessToken)
    const a3 = await openSocket(aliceTokens.accessToken)
    expect(await a3.untilClosed()).toBe(4029)
    const b1 = await openSocket(bobTokens.accessToken)
    // Each answers a subscribe: the socket is registered and reading.
    for (const client of [a1, a2, b1]) {
      client.subscribe()
      await client.until(() => client.frames.some((f) => f.type === 'events'), 5000, 'the subscribe answer')
    }

    expect(await socketsCard()).toEqual({ open: 3, detail: 'Closed since this instance started: 1 over a limit (4029).' })
    expect(await socketsOf(alice)).toBe('Event sockets open on this instance: 2')
    expect(await socketsOf(bob)).toBe('Event sockets open on this instance: 1')
    expect(await socketsOf(carol)).toBe('Event sockets open on this instance: 0')

    // Bob closes his; Alice signs out everywhere, which ends her sockets (4001).
    b1.close()
    await waitFor('bob’s socket gone from the hub', async () => (app.services.sockets.openFor(bob.id) === 0 ? true : undefined))
    const out = await app.handle(postJson('/api/v1/user/s/logout', { all: true }, bearer(aliceTokens.accessToken)))
    expect(out.status).toBeLessThan(300)
    expect(await a1.untilClosed()).toBe(4001)
    expect(await a2.untilClosed()).toBe(4001)
    await waitFor('alice’s sockets gone from the hub', async () => (app.services.sockets.openFor(alice.id) === 0 ? true : undefined))

    expect(await socketsCard()).toEqual({ open: 0, detail: 'Closed since this instance started: 1 closed by the client, 2 session ended (4001), 1 over a limit (4029).' })
    expect(await socketsOf(alice)).toBe('Event sockets open on this instance: 0')
    expect(await socketsOf(bob)).toBe('Event sockets open on this instance: 0')
    // The same counts as /metrics.
    const metrics = parseMetrics(await (await app.handle(req('/metrics', { headers: bearer(METRICS_TOKEN) }))).text())
    const closes = Object.fromEntries(metrics.filter((s) => s.name === 'arena_socket_closes_total' && s.value > 0).map((s) => [s.labels.reason, s.value]))
    expect(closes).toEqual({ client: 1, session_ended: 2, too_many: 1 })
  }, 30_000)
})
