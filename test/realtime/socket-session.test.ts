// An event socket lives as long as its session (contract §14): every way a
// session ends closes the sockets opened under it with 4001, after the events
// before the end (the `session.logout` itself when `session` is subscribed);
// the user's other sessions' sockets and other users' sockets stay open. And
// the server pings.
import { afterAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { postJson, req, tempDir } from '../helpers/app'
import { admin, createArenaApp } from '../helpers/arena'
import { banUser, deleteOwn, deleteUser } from '../helpers/accounts'
import { changePassword, forgotPassword, resetPassword } from '../helpers/account'
import { bearer, login, registerUser, rotate, sessionIdOf, spentEarlier, type Tokens } from '../helpers/auth'
import { latestCode } from '../helpers/mail'
import { openSocket, serve, type SocketClient } from '../helpers/sockets'
import type { TestApp } from '../helpers/app'

const ctx = await createArenaApp()
const server = serve(ctx)
// Pings every 100 ms: the ping frame, and expiry seen at a ping tick.
const fast = await createArenaApp({}, { socketTimings: { pingMs: 100 } })
const fastServer = serve(fast)
afterAll(async () => {
  await server.stop()
  await fastServer.stop()
  await ctx.close()
  await fast.close()
})

const NEW_PASSWORD = 'a brand new passphrase 42'

async function signedIn(app: TestApp = ctx) {
  const user = await registerUser(app)
  return { user, tokens: await login(app, user.username) }
}

/** A socket of the session, subscribed to `topics` and answered. */
async function watching(tokens: Tokens, topics?: string[], app: TestApp = ctx, wsUrl = server.wsUrl): Promise<SocketClient> {
  const socket = await openSocket(app, wsUrl, tokens.accessToken)
  socket.subscribe(topics ? { topics } : {})
  await socket.until(() => socket.cursor !== undefined, 5000, 'the answer to the subscribe')
  return socket
}

const logout = (tokens: Tokens, body: Record<string, unknown> = {}) => ctx.handle(postJson('/api/v1/user/s/logout', body, bearer(tokens.accessToken)))

async function credit(userId: string, reference: string): Promise<void> {
  expect((await ctx.handle(postJson(`/api/v1/admin/wallets/${userId}/credit`, { amount: '1', reference }, admin))).status).toBeLessThan(300)
}

/** The socket is open and still delivering: a credit made now reaches it (after whatever ended other sessions, in seq order). */
async function stillOpen(socket: SocketClient, userId: string): Promise<void> {
  const reference = `alive-${Math.random()}`
  await credit(userId, reference)
  await socket.until(() => socket.events.some((e) => e.data.reference === reference), 5000, `the credit ${reference}`)
  expect(socket.closed).toBeUndefined()
}

/** Closed with 4001; with `session` subscribed, the event that ended it came first and last. */
async function endedWith(socket: SocketClient, type: string, sessionId: string): Promise<void> {
  expect(await socket.untilClosed()).toBe(4001)
  const last = socket.events.at(-1)
  expect(last?.type).toBe(type)
  expect(last?.data.sessionId).toBe(sessionId)
}

test('logout: the session.logout event arrives, then the close 4001; another user\'s socket stays open', async () => {
  const a = await signedIn()
  const b = await signedIn()
  const socket = await watching(a.tokens, ['session', 'wallet'])
  const other = await watching(b.tokens)
  await credit(a.user.id, 'before-logout')
  await socket.untilEvents(1)
  expect((await logout(a.tokens)).status).toBe(200)
  await endedWith(socket, 'session.logout', sessionIdOf(a.tokens.accessToken))
  expect(socket.events.map((e) => e.type)).toEqual(['wallet.credited', 'session.logout'])
  await stillOpen(other, b.user.id)
  other.close()
})

test('logout with `session` not subscribed: closed 4001 all the same, the event not sent', async () => {
  const a = await signedIn()
  const socket = await watching(a.tokens, ['wallet'])
  expect((await logout(a.tokens)).status).toBe(200)
  expect(await socket.untilClosed()).toBe(4001)
  expect(socket.events).toEqual([])
})

test('logout { all: true }: the sockets of both sessions close', async () => {
  const a = await signedIn()
  const second = await login(ctx, a.user.username)
  const sockets = [await watching(a.tokens), await watching(second)]
  expect((await logout(a.tokens, { all: true })).status).toBe(200)
  for (const socket of sockets) expect(await socket.untilClosed()).toBe(4001)
})

test('logout { others: true }: only the other session\'s socket closes', async () => {
  const a = await signedIn()
  const second = await login(ctx, a.user.username)
  const mine = await watching(a.tokens)
  const theirs = await watching(second, ['session'])
  expect((await logout(a.tokens, { others: true })).status).toBe(200)
  await endedWith(theirs, 'session.logout', sessionIdOf(second.accessToken))
  await stillOpen(mine, a.user.id)
  mine.close()
})

test('DELETE /me/sessions/{id}: that session\'s socket closes, the caller\'s stays', async () => {
  const a = await signedIn()
  const second = await login(ctx, a.user.username)
  const mine = await watching(a.tokens)
  const theirs = await watching(second, ['session'])
  const res = await ctx.handle(req(`/api/v1/me/sessions/${sessionIdOf(second.accessToken)}`, { method: 'DELETE', headers: bearer(a.tokens.accessToken) }))
  expect(res.status).toBeLessThan(300)
  await endedWith(theirs, 'session.logout', sessionIdOf(second.accessToken))
  await stillOpen(mine, a.user.id)
  mine.close()
})

test('a ban by an operator closes the user\'s sockets', async () => {
  const a = await signedIn()
  const socket = await watching(a.tokens, ['session'])
  expect((await banUser(ctx, a.user.id, { reason: 'cheating' })).status).toBe(200)
  await endedWith(socket, 'session.logout', sessionIdOf(a.tokens.accessToken))
})

test('a password change closes the other sessions\' sockets; the current one stays', async () => {
  const a = await signedIn()
  const second = await login(ctx, a.user.username)
  const mine = await watching(a.tokens)
  const theirs = await watching(second)
  expect((await changePassword(ctx, a.tokens.accessToken, a.user.password, NEW_PASSWORD)).status).toBe(200)
  expect(await theirs.untilClosed()).toBe(4001)
  await stillOpen(mine, a.user.id)
  mine.close()
})

test('a password reset closes every socket of the user', async () => {
  const a = await signedIn()
  const second = await login(ctx, a.user.username)
  const sockets = [await watching(a.tokens), await watching(second)]
  expect((await forgotPassword(ctx, a.user.email)).status).toBe(202)
  const code = await latestCode(ctx, a.user.email, 'reset_password')
  expect((await resetPassword(ctx, { email: a.user.email, code, newPassword: NEW_PASSWORD })).status).toBe(200)
  for (const socket of sockets) expect(await socket.untilClosed()).toBe(4001)
})

test('deleting one\'s own account closes its sockets', async () => {
  const a = await signedIn()
  const socket = await watching(a.tokens)
  expect((await deleteOwn(ctx, a.tokens.accessToken, a.user.password)).status).toBe(200)
  expect(await socket.untilClosed()).toBe(4001)
})

test('an operator deleting the account closes its sockets', async () => {
  const a = await signedIn()
  const second = await login(ctx, a.user.username)
  const sockets = [await watching(a.tokens), await watching(second, ['wallet'])]
  expect((await deleteUser(ctx, a.user.id)).status).toBe(200)
  for (const socket of sockets) expect(await socket.untilClosed()).toBe(4001)
})

test('a refresh token replayed after the grace revokes the session: its socket closes', async () => {
  const a = await signedIn()
  const rotated = (await (await rotate(ctx, a.tokens)).json()) as Tokens
  const socket = await watching(rotated, ['session'])
  await spentEarlier(ctx, a.tokens.accessToken, ctx.config.refreshReuseGraceS * 1000)
  expect((await rotate(ctx, a.tokens)).status).toBe(401)
  await endedWith(socket, 'session.reuse_revoked', sessionIdOf(a.tokens.accessToken))
})

test('the server pings every interval', async () => {
  const a = await signedIn(fast)
  const socket = await watching(a.tokens, undefined, fast, fastServer.wsUrl)
  await socket.until(() => socket.frames.filter((f) => f.type === 'ping').length >= 2, 5000, 'two pings')
  expect(socket.frames.find((f) => f.type === 'ping')).toEqual({ type: 'ping' })
  expect(socket.closed).toBeUndefined()
  socket.close()
})

test('an end no wake-up told of (another process wrote it), seen at a ping tick: the events before it are sent first, then 4001', async () => {
  // Two apps on one database; the socket's app re-checks only once an hour and
  // pings every 100 ms, so the ping tick is what finds the session ended.
  const dataDir = tempDir()
  const here = await createArenaApp({}, { dataDir, socketTimings: { pingMs: 100, recheckMs: 3_600_000 } })
  const elsewhere = await createArenaApp({}, { dataDir })
  const hereServer = serve(here)
  try {
    const a = await signedIn(here)
    const socket = await watching(a.tokens, undefined, here, hereServer.wsUrl)
    const data = { asset: 'USDT', amount: '1', reference: 'written-elsewhere', reason: 'test', balance: '1' }
    await elsewhere.storage.write((tx) => tx.events.append({ userId: a.user.id, topic: 'wallet', type: 'wallet.adjusted', data }, elsewhere.clock.now()))
    expect((await elsewhere.handle(postJson('/api/v1/user/s/logout', {}, bearer(a.tokens.accessToken)))).status).toBe(200)
    await endedWith(socket, 'session.logout', sessionIdOf(a.tokens.accessToken))
    expect(socket.events.map((e) => e.type)).toEqual(['wallet.adjusted', 'session.logout'])
  } finally {
    await hereServer.stop()
    await here.close()
    await elsewhere.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
})

// Last in the file: it moves the fast app's clock past every session's end.
test('a session that expires closes its socket at the next ping tick', async () => {
  const a = await signedIn(fast)
  const socket = await watching(a.tokens, undefined, fast, fastServer.wsUrl)
  await socket.until(() => socket.frames.some((f) => f.type === 'ping'), 5000, 'a ping')
  expect(socket.closed).toBeUndefined()
  fast.clock.advance(fast.config.refreshTtlS * 1000 + 1000)
  expect(await socket.untilClosed()).toBe(4001)
})
