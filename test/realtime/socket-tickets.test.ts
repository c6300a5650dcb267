// Socket tickets (contract §14), through real sockets: a bearer buys a
// ticket; the ticket opens one socket, once, within 30 s, while its session
// lives; only its SHA-256 is stored, it never reaches a log line, and
// housekeeping sweeps the ones never spent.
import { afterAll, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { createHash } from 'node:crypto'
import { housekeeping } from '../../src/modules/events/housekeeping'
import { postJson } from '../helpers/app'
import { createArenaApp } from '../helpers/arena'
import { deleteOwn, deleteUser } from '../helpers/accounts'
import { bearer, login, registerUser } from '../helpers/auth'
import { attemptUpgrade, mintTicket, serve, SocketClient } from '../helpers/sockets'

const ctx = await createArenaApp()
const server = serve(ctx)
afterAll(async () => {
  await server.stop()
  await ctx.close()
})
const { socketTickets } = ctx.peek.tables

const socketPath = (ticket: string) => `/api/v1/events/socket?ticket=${encodeURIComponent(ticket)}`
const hashOf = (ticket: string) => createHash('sha256').update(ticket).digest('hex')
const stored = async (ticket: string) => (await ctx.peek.db.select().from(socketTickets).where(eq(socketTickets.ticketHash, hashOf(ticket)))).length

async function signedIn() {
  const user = await registerUser(ctx)
  return { user, tokens: await login(ctx, user.username) }
}

/** The answer is 401 with the error envelope's `unauthorized`. */
function expectUnauthorized(answer: { status: number; body: any }) {
  expect(answer.status).toBe(401)
  expect(answer.body.error.code).toBe('unauthorized')
}

test('minting needs a bearer: 401 without one, 200 { ticket, expiresIn: 30 } with one', async () => {
  const none = await ctx.handle(postJson('/api/v1/events/socket-ticket', {}))
  expect(none.status).toBe(401)
  expect(((await none.json()) as { error: { code: string } }).error.code).toBe('unauthorized')
  const wrong = await ctx.handle(postJson('/api/v1/events/socket-ticket', {}, bearer('not.a.token')))
  expect(wrong.status).toBe(401)
  const { tokens } = await signedIn()
  const ticket = await mintTicket(ctx, tokens.accessToken)
  expect(ticket).toMatch(/^[A-Za-z0-9_-]{43}$/)
})

test('a ticket opens one socket; presented again it is 401 unauthorized', async () => {
  const { tokens } = await signedIn()
  const ticket = await mintTicket(ctx, tokens.accessToken)
  const socket = await SocketClient.open(server.wsUrl, ticket)
  socket.subscribe()
  await socket.until(() => socket.cursor !== undefined)
  expectUnauthorized(await attemptUpgrade(server.url, socketPath(ticket)))
  expect(socket.closed).toBeUndefined()
  socket.close()
})

test('a ticket presented twice at once opens exactly one socket', async () => {
  const { tokens } = await signedIn()
  for (let round = 0; round < 3; round++) {
    const ticket = await mintTicket(ctx, tokens.accessToken)
    const answers = await Promise.all([1, 2, 3].map(() => attemptUpgrade(server.url, socketPath(ticket))))
    expect(answers.map((a) => a.status).sort()).toEqual([101, 401, 401])
    for (const refused of answers.filter((a) => a.status !== 101)) expectUnauthorized(refused)
  }
})

test('a ticket past its 30 s is 401', async () => {
  const { tokens } = await signedIn()
  const ticket = await mintTicket(ctx, tokens.accessToken)
  ctx.clock.advance(31_000)
  expectUnauthorized(await attemptUpgrade(server.url, socketPath(ticket)))
  // One minted now is good for its own 30 s.
  const fresh = await mintTicket(ctx, tokens.accessToken)
  ctx.clock.advance(29_000)
  expect((await attemptUpgrade(server.url, socketPath(fresh))).status).toBe(101)
})

test('a ticket whose session logged out before it was used is 401; the row stays until spent or swept', async () => {
  const { tokens } = await signedIn()
  const ticket = await mintTicket(ctx, tokens.accessToken)
  expect((await ctx.handle(postJson('/api/v1/user/s/logout', {}, bearer(tokens.accessToken)))).status).toBe(200)
  // Logging out deletes no ticket: the spend refuses it.
  expect(await stored(ticket)).toBe(1)
  expectUnauthorized(await attemptUpgrade(server.url, socketPath(ticket)))
  expect(await stored(ticket)).toBe(0)
})

test('a plain GET (no Upgrade) is 400 bad_request and does not spend the ticket', async () => {
  const { tokens } = await signedIn()
  const ticket = await mintTicket(ctx, tokens.accessToken)
  const plain = await attemptUpgrade(server.url, socketPath(ticket), false)
  expect(plain.status).toBe(400)
  expect(plain.body.error.code).toBe('bad_request')
  const fetched = await fetch(server.url + socketPath(ticket))
  expect(fetched.status).toBe(400)
  expect(await stored(ticket)).toBe(1)
  const socket = await SocketClient.open(server.wsUrl, ticket)
  socket.subscribe()
  await socket.until(() => socket.cursor !== undefined)
  socket.close()
})

test('no ticket (or an empty or oversized one) is 422 validation_failed', async () => {
  for (const path of ['/api/v1/events/socket', `/api/v1/events/socket?ticket=${'x'.repeat(200)}`]) {
    const answer = await attemptUpgrade(server.url, path)
    expect(answer.status).toBe(422)
    expect(answer.body.error.code).toBe('validation_failed')
  }
  expectUnauthorized(await attemptUpgrade(server.url, '/api/v1/events/socket?ticket='))
})

test('the ticket never appears in a log line, and only its SHA-256 is stored', async () => {
  const { user, tokens } = await signedIn()
  const ticket = await mintTicket(ctx, tokens.accessToken)
  const rows = await ctx.peek.db.select().from(socketTickets).where(eq(socketTickets.userId, user.id))
  expect(rows.length).toBe(1)
  expect(rows[0]!.ticketHash).toBe(hashOf(ticket))
  expect(JSON.stringify(rows)).not.toContain(ticket)
  const socket = await SocketClient.open(server.wsUrl, ticket)
  socket.subscribe()
  await socket.until(() => socket.cursor !== undefined)
  expectUnauthorized(await attemptUpgrade(server.url, socketPath(ticket)))
  await attemptUpgrade(server.url, socketPath(ticket), false)
  socket.close()
  await socket.untilClosed()
  expect(ctx.logText()).toContain('/api/v1/events/socket')
  // The upgrade is logged as what it was: 101, then the 401 of the reused ticket.
  const upgrades = ctx.logs.filter((line) => line.path === '/api/v1/events/socket' && line.status === 101)
  expect(upgrades.length).toBeGreaterThanOrEqual(1)
  expect(ctx.logText()).not.toContain(ticket)
  expect(ctx.logText()).not.toContain(encodeURIComponent(ticket))
})

test('housekeeping deletes expired tickets never spent and leaves live ones', async () => {
  const one = await signedIn()
  const two = await signedIn()
  const expired = [await mintTicket(ctx, one.tokens.accessToken), await mintTicket(ctx, two.tokens.accessToken)]
  ctx.clock.advance(31_000)
  const live = await mintTicket(ctx, (await login(ctx, two.user.username)).accessToken)
  const report = await housekeeping(ctx.services.storage, ctx.clock, 30)
  expect(report.socketTickets).toBeGreaterThanOrEqual(2)
  for (const ticket of expired) expect(await stored(ticket)).toBe(0)
  expect(await stored(live)).toBe(1)
  expect((await attemptUpgrade(server.url, socketPath(live))).status).toBe(101)
})

test('deleting the account (own or by an operator) deletes its tickets', async () => {
  const own = await signedIn()
  const byOperator = await signedIn()
  const tickets = [await mintTicket(ctx, own.tokens.accessToken), await mintTicket(ctx, byOperator.tokens.accessToken)]
  for (const ticket of tickets) expect(await stored(ticket)).toBe(1)
  expect((await deleteOwn(ctx, own.tokens.accessToken, own.user.password)).status).toBe(200)
  expect((await deleteUser(ctx, byOperator.user.id)).status).toBe(200)
  for (const ticket of tickets) expect(await stored(ticket)).toBe(0)
  for (const user of [own.user, byOperator.user]) expect(await ctx.peek.db.select().from(socketTickets).where(eq(socketTickets.userId, user.id))).toEqual([])
})
