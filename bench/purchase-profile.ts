// CPU of one PIN purchase (the bench's "PIN purchase" scenario: mint a PIN
// session, verify it with the PIN, an amount and an address, which debits,
// records and signs a withdrawal with local FROST custody), split by phase,
// in-process: the real app and services as the tests build them
// (test/helpers/app.ts), purchases one after another through app.handle.
//
//   taskset -c 1 npx bun bench/purchase-profile.ts            (SQLite)
//   ARENA_TEST_ENGINE=postgres taskset -c 1 npx bun bench/purchase-profile.ts
//
// BENCH_PURCHASES (200) purchases after BENCH_WARMUP (30), then BENCH_SIGNS
// (300) custody signatures alone, with the FROST steps timed one by one.
// BENCH_DETAIL=1 (SQLite) times every store method as a phase of its own;
// BENCH_DETAIL_PARENT=1 also names the phase each ran in.
//
// CPU is process.cpuUsage(), every thread: the argon2id verify runs on a
// worker thread while the event loop waits, and one purchase at a time keeps
// each phase's CPU its own. A phase's figure excludes the phases inside it
// (the writes inside the mint, the custody call inside the signing), so the
// column adds up to the whole. On one core the purchase rate is bounded by
// 1000 / (CPU ms of one purchase); the target is the argon2id line alone
// taking ≥ 85 % of it.
import { base58 } from '@scure/base'
import { createTestApp, postJson, req, TEST_ENGINE, type TestApp } from '../test/helpers/app'
import { readShare } from '../src/modules/wallet/key-shares'
import { custodySharesFor } from '../src/services'
import { aggregate, signRound1, signRound2, withdrawalMessage, type KeyShare } from '../src/modules/wallet/frost'
import { verifyWithdrawalSignature, type WithdrawalSigning } from '../src/modules/wallet/withdrawal-signing'
import type { CustodyClient } from '../src/modules/wallet/custody'

const PURCHASES = Number(process.env.BENCH_PURCHASES ?? 200)
const WARMUP = Number(process.env.BENCH_WARMUP ?? 30)
const SIGNS = Number(process.env.BENCH_SIGNS ?? 300)
const ADMIN_TOKEN = 'bench-admin-token-of-at-least-32-chars!!'
const PIN = '482916'
const PASSWORD = 'correct horse battery'

const cpuNow = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

// ---------------------------------------------------------------------------
// Phase accounting: a stack of open phases; each closes with its CPU and wall
// time minus its children's. One purchase at a time, so phases nest properly.

interface Tally {
  cpu: number
  wall: number
  calls: number
}
const tallies = new Map<string, Tally>()
const stack: { name: string; cpu0: number; wall0: number; childCpu: number; childWall: number }[] = []

function tally(name: string): Tally {
  let t = tallies.get(name)
  if (!t) tallies.set(name, (t = { cpu: 0, wall: 0, calls: 0 }))
  return t
}

async function phase<T>(name: string, run: () => Promise<T>): Promise<T> {
  const frame = { name, cpu0: cpuNow(), wall0: performance.now(), childCpu: 0, childWall: 0 }
  stack.push(frame)
  try {
    return await run()
  } finally {
    stack.pop()
    const cpu = cpuNow() - frame.cpu0
    const wall = performance.now() - frame.wall0
    const t = tally(name)
    t.cpu += cpu - frame.childCpu
    t.wall += wall - frame.childWall
    t.calls++
    const parent = stack.at(-1)
    if (parent) {
      parent.childCpu += cpu
      parent.childWall += wall
    }
  }
}

/** Replaces `obj[method]` (on this instance only) by the same call inside a phase. */
function instrument<T extends object>(obj: T, method: keyof T & string, name: (parent: string | undefined) => string): void {
  const original = obj[method] as unknown as (...args: unknown[]) => Promise<unknown>
  ;(obj as Record<string, unknown>)[method] = function (this: unknown, ...args: unknown[]) {
    return phase(name(stack.at(-1)?.name), () => original.apply(this, args))
  }
}

// ---------------------------------------------------------------------------
// The app, a buyer with a PIN and money, a destination

const app: TestApp = await createTestApp({ env: { ARENA_ADMIN_TOKEN: ADMIN_TOKEN, ARENA_LOG_LEVEL: 'info' } })
const admin = { 'x-admin-token': ADMIN_TOKEN }

async function call<T>(request: Request, status: number): Promise<T> {
  const res = await app.handle(request)
  if (res.status !== status) throw new Error(`${request.method} ${new URL(request.url).pathname}: ${res.status} ${await res.text()}`)
  return (await res.json()) as T
}

async function player(name: string): Promise<{ userId: string; bearer: Record<string, string> }> {
  const username = `${name}_${Math.floor(Math.random() * 1e6)}`
  const { user } = await call<{ user: { id: string } }>(postJson('/api/v1/user/register', { email: `${username}@bench.test`, username, password: PASSWORD, country: 'DE', accept_terms: true }), 201)
  const { accessToken } = await call<{ accessToken: string }>(postJson('/api/v1/user/login', { identifier: username, password: PASSWORD }), 200)
  return { userId: user.id, bearer: { authorization: `Bearer ${accessToken}` } }
}

const buyer = await player('buyer')
const seller = await player('seller')
await call(new Request('http://localhost/api/v1/security/pin', { method: 'PUT', headers: { ...buyer.bearer, 'content-type': 'application/json' }, body: JSON.stringify({ pin: PIN, password: PASSWORD }) }), 200)
await call(postJson(`/api/v1/admin/wallets/${buyer.userId}/credit`, { amount: '1000000', reference: 'bench' }, admin), 200)
await call(req('/api/v1/wallet', { headers: buyer.bearer }), 200)
const destination = (await call<{ address: string }>(req('/api/v1/wallet', { headers: seller.bearer }), 200)).address

// ---------------------------------------------------------------------------
// The phases of a purchase

const { services } = app
const deps = (services.withdrawals as unknown as { deps: { custody: CustodyClient } }).deps
const signing = (services.withdrawals as unknown as { signing: WithdrawalSigning }).signing
instrument(services.pins, 'mint', () => 'mint: service (session lock, PIN set?, token)')
instrument(services.withdrawals, 'verify', () => 'verify: checks before the hash (session, funds, address, wallet)')
instrument(signing, 'sign', () => 'verify: sign (read, message, signature check)')
instrument(services.pins.hashGate, 'run', () => 'verify: argon2id (PIN hash)')
instrument(deps.custody, 'signWithdrawal', () => 'verify: custody.signWithdrawal (FROST)')
instrument(services.storage, 'write', (parent) =>
  parent?.startsWith('mint') ? 'mint: unit of work (session row)' : parent?.startsWith('verify: sign') ? 'verify: unit of work (signed, event)' : 'verify: unit of work (debit, withdrawal, session, event)',
)

// BENCH_DETAIL=1: every store method of the path as a phase of its own (SQLite).
if (process.env.BENCH_DETAIL === '1') {
  const stores = {
    security: (await import('../src/db/sqlite/stores/security')).SqliteSecurityStore,
    wallet: (await import('../src/db/sqlite/stores/wallet')).SqliteWalletStore,
    events: (await import('../src/db/sqlite/stores/events')).SqliteEventsStore,
    auth: (await import('../src/db/sqlite/stores/auth')).SqliteAuthStore,
    jobs: (await import('../src/db/sqlite/stores/jobs')).SqliteJobsStore,
  }
  for (const [store, cls] of Object.entries(stores)) {
    // The engine's class and the classes it extends (a store written once, src/db/stores): each method once, where it is defined.
    const seen = new Set<string>()
    for (let proto = cls.prototype as object; proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
      for (const method of Object.getOwnPropertyNames(proto)) {
        if (method === 'constructor' || seen.has(method) || typeof Object.getOwnPropertyDescriptor(proto, method)?.value !== 'function') continue
        seen.add(method)
        instrument(proto as unknown as Record<string, unknown>, method, (parent) => `${parent?.split(":")[0] ?? "?"}: store ${store}.${method}${process.env.BENCH_DETAIL_PARENT ? ` in ${parent}` : ""}`)
      }
    }
  }
}

let serial = 0
async function purchase(): Promise<void> {
  const session = await phase('mint: HTTP (route, bearer, schema, JSON)', () =>
    call<{ sessionId: string; sessionToken: string }>(postJson('/api/v1/security/pin-session', {}, buyer.bearer), 201),
  )
  serial++
  const body = { pin: PIN, amount: '0.01', destinationAddress: destination, idempotencyKey: `profile-${serial}` }
  const answer = await phase('verify: HTTP (route, bearer, schema, JSON)', () =>
    call<{ valid: boolean; withdrawal?: { status: string } }>(
      postJson(`/api/v1/security/pin-session/${session.sessionId}/verify`, body, { ...buyer.bearer, 'x-secure-session': session.sessionToken }),
      200,
    ),
  )
  if (!answer.valid || answer.withdrawal?.status !== 'signed') throw new Error(`purchase ${serial}: ${JSON.stringify(answer)}`)
}

for (let i = 0; i < WARMUP; i++) await purchase()
tallies.clear()
Bun.gc(true)
const cpu0 = cpuNow()
const wall0 = performance.now()
for (let i = 0; i < PURCHASES; i++) await purchase()
const totalCpu = cpuNow() - cpu0
const totalWall = performance.now() - wall0
const inPhases = [...tallies.values()].reduce((s, t) => s + t.cpu, 0)
tally('outside requests (timers, afterResponse, GC)').cpu += totalCpu - inPhases

const fmt = (n: number, d = 2) => n.toFixed(d).padStart(7)
console.log(`\nPIN purchase, ${TEST_ENGINE}, ${PURCHASES} purchases one at a time (after ${WARMUP} warm-up), Bun ${Bun.version}`)
console.log(`${'phase'.padEnd(64)} ${'cpu ms'.padStart(7)} ${'wall ms'.padStart(7)} calls`)
for (const [name, t] of [...tallies.entries()].sort((a, b) => a[0].localeCompare(b[0]))) {
  console.log(`${name.padEnd(64)} ${fmt(t.cpu / PURCHASES)} ${fmt(t.wall / PURCHASES)} ${(t.calls / PURCHASES).toFixed(1).padStart(5)}`)
}
const argon = tallies.get('verify: argon2id (PIN hash)')?.cpu ?? 0
console.log(`${'total per purchase'.padEnd(64)} ${fmt(totalCpu / PURCHASES)} ${fmt(totalWall / PURCHASES)}`)
console.log(`${'all but argon2id'.padEnd(64)} ${fmt((totalCpu - argon) / PURCHASES)}`)
console.log(`one core: ${(1000 / (totalCpu / PURCHASES)).toFixed(1)} purchases/s; argon2id alone ${(1000 / (argon / PURCHASES)).toFixed(1)}/s; ratio ${(argon / totalCpu).toFixed(2)}`)

// ---------------------------------------------------------------------------
// Custody alone: the FROST steps of one signature, timed one by one, on the
// buyer's key (shares read once), and the whole signWithdrawal as the server
// calls it.

const wallet = (await services.storage.read.wallet.wallet(buyer.userId))!
const shareStore = custodySharesFor(app.config, services.storage)
const server = (await readShare(shareStore, wallet.keyRef, 'server')) as KeyShare
const cosigner = (await readShare(shareStore, wallet.keyRef, 'cosigner')) as KeyShare
const steps = new Map<string, number>()
const step = <T>(name: string, run: () => T): T => {
  const c = cpuNow()
  const out = run()
  steps.set(name, (steps.get(name) ?? 0) + cpuNow() - c)
  return out
}
for (let i = 0; i < SIGNS + 20; i++) {
  if (i === 20) steps.clear()
  const message = withdrawalMessage({ id: `withdrawal_${i}`, asset: 'USDC', amount: '10000', destinationAddress: destination })
  const a = step('signRound1 x2', () => signRound1(server))
  const b = step('signRound1 x2', () => signRound1(cosigner))
  const commitments = [a.commitment, b.commitment]
  const shares = [step('signRound2 x2', () => signRound2(server, a.nonces, commitments, message)), step('signRound2 x2', () => signRound2(cosigner, b.nonces, commitments, message))]
  const signature = step('aggregate (with its final check)', () => aggregate(server, commitments, message, shares))
  if (!step('withdrawal signature check (withdrawal-signing.ts)', () => verifyWithdrawalSignature(base58.encode(signature), message, wallet.address))) throw new Error('signature does not verify')
}
const message = withdrawalMessage({ id: 'withdrawal_x', asset: 'USDC', amount: '10000', destinationAddress: destination })
for (let i = 0; i < 20; i++) await deps.custody.signWithdrawal(wallet.keyRef, message)
const c = cpuNow()
for (let i = 0; i < SIGNS; i++) await deps.custody.signWithdrawal(wallet.keyRef, message)
steps.set('custody.signWithdrawal, whole (reads the shares)', cpuNow() - c)
console.log(`\nFROST custody, ${SIGNS} signatures`)
for (const [name, ms] of steps) console.log(`${name.padEnd(64)} ${fmt(ms / SIGNS, 3)}`)

await app.close()
