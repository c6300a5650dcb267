// Model-based tests of PIN sessions and the single-shot verify (contract §3,
// README "Wallets and secure purchases"), through the real HTTP routes of a
// real app over a real database (SQLite, or PostgreSQL under
// ARENA_TEST_ENGINE=postgres); expiry and locks move with the ManualClock.
//
// What must stay true, checked against a small model after every command:
// - mint answers 201 with a session living ARENA_PIN_SESSION_TTL_S, or 429
//   pin_locked with the exact Retry-After while the PIN is locked, or 429
//   rate_limited while MAX_LIVE_PIN_SESSIONS are live (Retry-After: until
//   the soonest of them expires);
// - verify answers 401 (wrong x-secure-session, another user's bearer), 410
//   (expired or consumed), 429 (locked), 422 (bad amount, bad destination,
//   insufficient funds) and 409 (idempotency key reused with other
//   parameters) without consuming the session or counting a failure; a wrong
//   PIN is 200 valid:false with the consecutive-failure count, and the 5th in
//   a row answers locked:true and locks the PIN for 15 min x 2^(locks so far), at most 24 h;
//   a correct PIN resets both, consumes the session and debits the wallet
//   once per idempotency key;
// - the wallet balance is what was credited minus what was withdrawn; every
//   withdrawal belongs to exactly one consumed session;
// - concurrent mints and verifies answer as SOME one-at-a-time order of the
//   same requests would, and leave that order's state (stored failure count,
//   lock, balance, consumed sessions): so never a second debit for one
//   session or key, never more than 5 failures before a lock, none counted
//   while locked.
import { afterAll, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { and, eq, inArray, isNull } from 'drizzle-orm'
import { MAX_LIVE_PIN_SESSIONS } from '../../src/modules/security/pin-service'
import { checkLedger } from '../../src/modules/wallet/ledger'
import { postJson, req } from '../helpers/app'
import { admin, createArenaApp, players, type Player } from '../helpers/arena'
import { bearer, login, PASSWORD, rotate, type Tokens } from '../helpers/auth'
import { PIN, someAddress } from '../helpers/purchases'
import { chooseSeed } from '../helpers/seed'
import { assertParams, balanceUnits, codeOf, decimal, differs, inFlight, linearize, minorUnits, modelRuns, observe, testTimeout, type Observed, type Step } from './support'

const SESSION_TTL_S = 300
const ACCESS_TTL_S = 86_400
const REFRESH_TTL_S = 365 * 86_400
/** Contract §3 defaults: 5 consecutive failures, 15 minutes, then doubling, never beyond a day (issue 33). */
const MAX_ATTEMPTS = 5
const LOCK_BASE_MS = 15 * 60_000
const LOCK_MAX_MS = 24 * 3_600_000

const RUNS = modelRuns(12)
const CONCURRENT_RUNS = RUNS
const SEED = chooseSeed('ARENA_MODEL_SEED', 'pin-sessions model')

const ctx = await createArenaApp({
  ARENA_PIN_SESSION_TTL_S: String(SESSION_TTL_S),
  ARENA_ACCESS_TTL_S: String(ACCESS_TTL_S),
  ARENA_REFRESH_TTL_S: String(REFRESH_TTL_S),
})
afterAll(() => ctx.close())
const { pinLocks, pinSessions, withdrawals } = ctx.peek.tables

/** PINs a user may set (none is common) and PINs that are never set. */
const SETTABLE_PINS = [PIN, '5820', '73519', '604172', '29583'] as const
const WRONG_PINS = ['999000', '4829', '11223344'] as const
const COMMON_PINS = ['1234', '0000', '2580', '987654'] as const
const DESTINATIONS = [someAddress(), someAddress(), someAddress()] as const
const BAD_DESTINATIONS = ['not-an-address', '11111111111111111111111111111111'] as const
const GOOD_AMOUNTS = ['1', '2.5', '10', '0.000001', '7.25'] as const
const BAD_AMOUNTS = ['0', '-1', '1e2', '00.1', '0.1234567', '', '1.'] as const

// ---- accounts: made once (argon2 is slow), kept signed in across clock jumps ----

interface Account {
  player: Player
  issuedAt: number
  loggedInAt: number
}

async function account(): Promise<Account> {
  const [player] = await players(ctx, 1)
  const now = ctx.clock.now().getTime()
  return { player: player!, issuedAt: now, loggedInAt: now }
}

/** Rotates (cheap) before the access token expires; logs in again before the session's absolute end. */
async function keepSignedIn(a: Account): Promise<void> {
  const now = ctx.clock.now().getTime()
  if (now - a.loggedInAt >= (REFRESH_TTL_S - 7 * 86_400) * 1000) {
    a.player.tokens = await login(ctx, a.player.username)
    a.loggedInAt = a.issuedAt = now
  } else if (now - a.issuedAt >= (ACCESS_TTL_S - 3600) * 1000) {
    const res = await rotate(ctx, a.player.tokens)
    expect(res.status).toBe(200)
    a.player.tokens = (await res.json()) as Tokens
    a.issuedAt = now
  }
}

const auth = (a: Account) => bearer(a.player.tokens.accessToken)

function putPin(a: Account, pin: string) {
  return ctx.handle(new Request('http://localhost/api/v1/security/pin', { method: 'PUT', headers: { ...auth(a), 'content-type': 'application/json' }, body: JSON.stringify({ pin, password: PASSWORD }) }))
}

async function walletBalance(a: Account): Promise<bigint> {
  const o = await observe(await ctx.handle(req('/api/v1/wallet', { headers: auth(a) })))
  expect(o.status).toBe(200)
  return balanceUnits(o.body.balance)
}

const user = await account()
const other = await account() // only its bearer is used: another user's bearer on user's sessions
expect((await putPin(user, PIN)).status).toBe(200)
/** The user's PIN as the server holds it (changed by SetPin commands). */
let currentPin: string = PIN
/** Every amount credited to user, for the end-of-file balance check. */
let creditedTotal = 0n
let runCounter = 0

// ---- the model ----

interface SessionM {
  id: string
  token: string
  expiresAt: number
  consumed: boolean
}

interface WithdrawalM {
  id: string
  amount: bigint
  destination: string
  sessionId: string
}

interface PinModel {
  now: number
  pin: string
  /** Consecutive failures since the last success or lock. */
  failures: number
  /** Locks since the last success: the next one lasts 15 min x 2^locks. */
  locks: number
  lockedUntil: number | null
  balance: bigint
  sessions: SessionM[]
  /** By idempotency key. */
  withdrawals: Record<string, WithdrawalM>
  /** Credits of this run, by reference. */
  credits: Record<string, bigint>
}

interface PinReal {
  tag: string
  scheduler?: fc.Scheduler
}

const isLocked = (m: PinModel) => m.lockedUntil !== null && m.lockedUntil > m.now
const retryAfter = (m: PinModel) => String(Math.max(1, Math.ceil((m.lockedUntil! - m.now) / 1000)))
const live = (m: PinModel) => m.sessions.filter((s) => !s.consumed && s.expiresAt > m.now)

type PinOp =
  | { kind: 'mint' }
  | {
      kind: 'verify'
      sessionId: string
      token: string
      as: 'own' | 'wrong-token' | 'other-user'
      pin: string
      pinRight: boolean
      amount: string
      destination: string
      destinationValid: boolean
      key: string
    }

const describeOp = (op: PinOp) =>
  op.kind === 'mint'
    ? 'mint'
    : `verify(${op.sessionId.slice(-6)},${op.as},${op.pinRight ? 'right' : 'wrong'},${JSON.stringify(op.amount)},${op.destinationValid ? op.destination.slice(0, 4) : op.destination.slice(0, 6)},${op.key})`

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/** The model's answer to one operation, compared with the real one; mutates the model. */
const step: Step<PinModel, PinOp> = (m, op, o) => {
  if (op.kind === 'mint') {
    if (isLocked(m)) return differs(o, { status: 429, code: 'pin_locked', retryAfter: retryAfter(m) })
    const held = live(m)
    if (held.length >= MAX_LIVE_PIN_SESSIONS) {
      const soonest = Math.min(...held.map((x) => x.expiresAt))
      return differs(o, { status: 429, code: 'rate_limited', retryAfter: String(Math.max(1, Math.ceil((soonest - m.now) / 1000))) })
    }
    const bad = differs(o, { status: 201 })
    if (bad) return bad
    const expiresAt = m.now + SESSION_TTL_S * 1000
    const b = o.body
    if (b.expiresAt !== new Date(expiresAt).toISOString()) return `mint expiresAt ${b.expiresAt}, model says ${new Date(expiresAt).toISOString()}`
    if (b.maxAttempts !== MAX_ATTEMPTS) return `mint maxAttempts ${b.maxAttempts}`
    if (typeof b.sessionId !== 'string' || !/^pns_[0-9a-f]{32}$/.test(b.sessionId) || m.sessions.some((s) => s.id === b.sessionId)) return `mint sessionId ${b.sessionId} is not a new pns_ id`
    if (typeof b.sessionToken !== 'string' || b.sessionToken.length < 43) return 'mint sessionToken too short'
    m.sessions.push({ id: b.sessionId, token: b.sessionToken, expiresAt, consumed: false })
    return null
  }

  if (op.as !== 'own') return differs(o, { status: 401, code: 'unauthorized' })
  const s = m.sessions.find((x) => x.id === op.sessionId)!
  if (s.consumed || m.now >= s.expiresAt) return differs(o, { status: 410, code: 'session_expired' })
  if (isLocked(m)) return differs(o, { status: 429, code: 'pin_locked', retryAfter: retryAfter(m) })
  const amount = minorUnits(op.amount)
  if (amount === null) return differs(o, { status: 422, code: 'validation_failed' })
  if (!op.destinationValid) return differs(o, { status: 422, code: 'invalid_destination' })
  const earlier = m.withdrawals[op.key]
  if (earlier && (earlier.amount !== amount || earlier.destination !== op.destination)) return differs(o, { status: 409, code: 'idempotency_key_reused' })
  if (!earlier && m.balance < amount) return differs(o, { status: 422, code: 'insufficient_funds' })

  if (!op.pinRight) {
    const attempt = m.failures + 1
    const locked = attempt >= MAX_ATTEMPTS
    if (locked) {
      m.lockedUntil = m.now + Math.min(LOCK_MAX_MS, LOCK_BASE_MS * 2 ** m.locks)
      m.locks += 1
      m.failures = 0
    } else {
      m.failures = attempt
    }
    const bad = differs(o, { status: 200 })
    if (bad) return bad
    return sameJson(o.body, { valid: false, locked, attempt }) ? null : `wrong PIN answered ${JSON.stringify(o.body)}, model says ${JSON.stringify({ valid: false, locked, attempt })}`
  }

  m.failures = 0
  m.locks = 0
  m.lockedUntil = null
  s.consumed = true
  const bad = differs(o, { status: 200 })
  if (bad) return bad
  const b = o.body
  if (b.valid !== true || b.locked !== false || b.attempt !== 0) return `right PIN answered ${JSON.stringify({ valid: b.valid, locked: b.locked, attempt: b.attempt })}`
  const w = b.withdrawal
  if (!w || w.status !== 'signed' || w.asset !== 'USDC' || typeof w.signature !== 'string') return `withdrawal ${JSON.stringify(w)} is not a signed USDC withdrawal`
  if (minorUnits(w.amount) !== amount || w.destinationAddress !== op.destination || w.idempotencyKey !== op.key) return `withdrawal ${JSON.stringify(w)} is not ${op.amount} to ${op.destination} under ${op.key}`
  if (earlier) return w.id === earlier.id ? null : `idempotent replay answered ${w.id}, the first withdrawal was ${earlier.id}`
  if (typeof w.id !== 'string' || !/^wdr_[0-9a-f]{32}$/.test(w.id) || Object.values(m.withdrawals).some((x) => x.id === w.id)) return `withdrawal id ${w.id} is not a new wdr_ id`
  m.balance -= amount
  m.withdrawals[op.key] = { id: w.id, amount, destination: op.destination, sessionId: s.id }
  return null
}

// ---- what commands ask for, resolved against the model when they run ----

/** `same`: the amount and destination of the key's first withdrawal (an idempotent replay), when it has one. */
type AmountSpec = { kind: 'ok' | 'bad'; text: string } | { kind: 'over' } | { kind: 'all' } | { kind: 'same' }
type DestinationSpec = { kind: 'ok'; index: number } | { kind: 'bad'; text: string }
interface VerifySpec {
  pick: 'live' | 'any'
  index: number
  as: 'own' | 'wrong-token' | 'other-user'
  pin: 'right' | 'wrong'
  wrongIndex: number
  amount: AmountSpec
  destination: DestinationSpec
  key: number
}
type OpSpec = { kind: 'mint' } | ({ kind: 'verify' } & VerifySpec)

function resolve(m: PinModel, r: PinReal, spec: OpSpec): PinOp {
  if (spec.kind === 'mint') return { kind: 'mint' }
  const pool = spec.pick === 'live' && live(m).length > 0 ? live(m) : m.sessions
  const s = pool[spec.index % pool.length]!
  const key = `${r.tag}-k${spec.key}`
  const earlier = spec.amount.kind === 'same' ? m.withdrawals[key] : undefined
  const amount = earlier
    ? decimal(earlier.amount)
    : spec.amount.kind === 'over'
      ? decimal(m.balance + 1n)
      : spec.amount.kind === 'all'
        ? m.balance > 0n
          ? decimal(m.balance)
          : '1'
        : spec.amount.kind === 'same'
          ? '1'
          : spec.amount.text
  const destination = earlier ? earlier.destination : spec.destination.kind === 'ok' ? DESTINATIONS[spec.destination.index % DESTINATIONS.length]! : spec.destination.text
  return {
    kind: 'verify',
    sessionId: s.id,
    token: s.token,
    as: spec.as,
    pin: spec.pin === 'right' ? m.pin : WRONG_PINS[spec.wrongIndex % WRONG_PINS.length]!,
    pinRight: spec.pin === 'right',
    amount,
    destination,
    destinationValid: earlier !== undefined || spec.destination.kind === 'ok',
    key,
  }
}

async function send(op: PinOp): Promise<Observed> {
  if (op.kind === 'mint') return observe(await ctx.handle(postJson('/api/v1/security/pin-session', {}, auth(user))))
  const caller = op.as === 'other-user' ? other : user
  const secure = op.as === 'wrong-token' ? `${op.token.slice(0, -2)}xx` : op.token
  const body = { pin: op.pin, amount: op.amount, destinationAddress: op.destination, idempotencyKey: op.key }
  return observe(await ctx.handle(postJson(`/api/v1/security/pin-session/${op.sessionId}/verify`, body, { ...auth(caller), 'x-secure-session': secure })))
}

// ---- the real state the model must match ----

interface Stored {
  balance: bigint
  lock: { failures: number; locks: number; lockedUntil: number | null }
  consumed: Record<string, boolean>
  withdrawalIds: string[]
}

/** The user's rows behind the model's state, read once: a burst compares many candidate orders' states with them. */
interface UserRows {
  lock: { failures: number; locks: number; lockedUntil: Date | null } | undefined
  /** consumed_at of each of the user's PIN sessions, by id. */
  consumedAt: Map<string, Date | null>
  withdrawals: { id: string; pinSessionId: string }[]
}

async function userRows(): Promise<UserRows> {
  const userId = user.player.userId
  const [lock] = await ctx.peek.db.select().from(pinLocks).where(eq(pinLocks.userId, userId))
  const sessions = await ctx.peek.db.select({ id: pinSessions.id, consumedAt: pinSessions.consumedAt }).from(pinSessions).where(eq(pinSessions.userId, userId))
  const rows = await ctx.peek.db.select({ id: withdrawals.id, pinSessionId: withdrawals.pinSessionId }).from(withdrawals).where(eq(withdrawals.userId, userId))
  return { lock, consumedAt: new Map(sessions.map((s) => [s.id, s.consumedAt])), withdrawals: rows }
}

/** The stored state of what the model knows, from the user's rows and the balance read over HTTP beforehand. */
function stored(m: PinModel, balance: bigint, rows: UserRows): Stored {
  const row = rows.lock
  const consumed: Record<string, boolean> = {}
  for (const s of m.sessions) consumed[s.id] = rows.consumedAt.get(s.id) != null
  const sessionIds = new Set(m.sessions.map((s) => s.id))
  const withdrawalIds = rows.withdrawals
    .filter((w) => sessionIds.has(w.pinSessionId))
    .map((w) => w.id)
    .sort()
  return {
    balance,
    lock: { failures: row?.failures ?? 0, locks: row?.locks ?? 0, lockedUntil: row?.lockedUntil?.getTime() ?? null },
    consumed,
    withdrawalIds,
  }
}

/** Why the stored state is not the model's, or null. */
function storedDiffers(m: PinModel, real: Stored): string | null {
  const expected: Stored = {
    balance: m.balance,
    lock: { failures: m.failures, locks: m.locks, lockedUntil: m.lockedUntil },
    consumed: Object.fromEntries(m.sessions.map((s) => [s.id, s.consumed])),
    withdrawalIds: Object.values(m.withdrawals).map((w) => w.id).sort(),
  }
  const show = (s: Stored) => JSON.stringify(s, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))
  return show(expected) === show(real) ? null : `stored state ${show(real)}, model says ${show(expected)}`
}

/** The invariants that hold whatever happened: the lock rule and one withdrawal per consumed session. */
async function checkInvariants(): Promise<void> {
  const [row] = await ctx.peek.db.select().from(pinLocks).where(eq(pinLocks.userId, user.player.userId))
  expect(row?.failures ?? 0).toBeLessThan(MAX_ATTEMPTS)
  const rows = await ctx.peek.db.select().from(withdrawals).where(eq(withdrawals.userId, user.player.userId))
  const sessions = new Set<string>()
  for (const w of rows) {
    expect(sessions.has(w.pinSessionId)).toBe(false)
    sessions.add(w.pinSessionId)
  }
  const consumed = new Map(
    rows.length === 0
      ? []
      : (await ctx.peek.db.select({ id: pinSessions.id, consumedAt: pinSessions.consumedAt }).from(pinSessions).where(inArray(pinSessions.id, [...sessions]))).map((s) => [s.id, s.consumedAt]),
  )
  for (const w of rows) expect(consumed.get(w.pinSessionId)).not.toBeNull()
}

async function checkAll(m: PinModel): Promise<void> {
  const balance = await walletBalance(user)
  const why = storedDiffers(m, stored(m, balance, await userRows()))
  if (why) throw new Error(why)
  await checkInvariants()
}

/** What the runs went through, printed at the end (coverage of the model's branches). */
const seen = new Map<string, number>()
function tally(op: PinOp, o: Observed): void {
  const what =
    op.kind === 'mint'
      ? `mint ${o.status}`
      : o.status === 200
        ? o.body.valid
          ? 'verify 200 valid'
          : `verify 200 invalid${o.body.locked ? ' locked' : ''}`
        : `verify ${o.status} ${codeOf(o)}`
  seen.set(what, (seen.get(what) ?? 0) + 1)
}

/** One request, answered as the model says. */
async function one(m: PinModel, r: PinReal, spec: OpSpec): Promise<void> {
  const op = resolve(m, r, spec)
  const replay = op.kind === 'verify' && m.withdrawals[op.key] !== undefined
  const o = await send(op)
  const why = step(m, op, o)
  if (why) throw new Error(`${describeOp(op)}: ${why}`)
  tally(op, o)
  if (replay && o.status === 200 && o.body.valid) seen.set('verify 200 valid (idempotent replay)', (seen.get('verify 200 valid (idempotent replay)') ?? 0) + 1)
  await checkAll(m)
}

// ---- commands ----

class Mint implements fc.AsyncCommand<PinModel, PinReal> {
  check = () => true
  run = (m: PinModel, r: PinReal) => one(m, r, { kind: 'mint' })
  toString = () => 'Mint'
}

class Verify implements fc.AsyncCommand<PinModel, PinReal> {
  constructor(readonly spec: VerifySpec) {}
  check = (m: Readonly<PinModel>) => m.sessions.length > 0
  run = (m: PinModel, r: PinReal) => one(m, r, { kind: 'verify', ...this.spec })
  toString = () => `Verify(${JSON.stringify(this.spec)})`
}

/** Guesses in a row: wrong PINs on live sessions (a fresh one when none is left), each answered as the model says. */
class Guesses implements fc.AsyncCommand<PinModel, PinReal> {
  constructor(
    readonly count: number,
    readonly spec: VerifySpec,
  ) {}
  check = () => true
  async run(m: PinModel, r: PinReal) {
    for (let i = 0; i < this.count; i++) {
      if (live(m).length === 0) await one(m, r, { kind: 'mint' })
      if (m.sessions.length === 0) return // locked before any session was minted
      await one(m, r, { kind: 'verify', ...this.spec, pick: 'live', as: 'own', pin: 'wrong', index: this.spec.index + i })
    }
  }
  toString = () => `Guesses(${this.count}, ${JSON.stringify(this.spec)})`
}

type AdvanceSpec = { kind: 'ms'; ms: number } | { kind: 'session-expiry'; delta: number } | { kind: 'lock-end'; delta: number }

function advanceTarget(m: Readonly<PinModel>, spec: AdvanceSpec): number | null {
  if (spec.kind === 'ms') return m.now + spec.ms
  if (spec.kind === 'lock-end') return m.lockedUntil !== null && m.lockedUntil + spec.delta > m.now ? m.lockedUntil + spec.delta : null
  const next = live(m as PinModel).map((s) => s.expiresAt + spec.delta).filter((t) => t > m.now)
  return next.length > 0 ? Math.min(...next) : null
}

/** Moves the clock: to a session's expiry or a lock's end (give or take), or by a while. */
class Advance implements fc.AsyncCommand<PinModel, PinReal> {
  constructor(readonly spec: AdvanceSpec) {}
  check = (m: Readonly<PinModel>) => advanceTarget(m, this.spec) !== null
  async run(m: PinModel) {
    const target = advanceTarget(m, this.spec)!
    ctx.clock.advance(target - m.now)
    m.now = target
    await keepSignedIn(user)
    await keepSignedIn(other)
    // A lock that ended lets mint through again; one that did not still refuses it.
    await checkAll(m)
  }
  toString = () => `Advance(${JSON.stringify(this.spec)})`
}

type CreditSpec = { kind: 'new'; amount: string } | { kind: 'repeat' } | { kind: 'conflict' }

/** An operator credit: a new reference credits once; the same reference again credits nothing; with another amount, 409. */
class Credit implements fc.AsyncCommand<PinModel, PinReal> {
  constructor(readonly spec: CreditSpec) {}
  check = (m: Readonly<PinModel>) => this.spec.kind === 'new' || Object.keys(m.credits).length > 0
  async run(m: PinModel, r: PinReal) {
    const refs = Object.keys(m.credits)
    const [reference, amount] =
      this.spec.kind === 'new'
        ? [`${r.tag}-c${refs.length}`, this.spec.amount]
        : [refs[0]!, this.spec.kind === 'repeat' ? decimal(m.credits[refs[0]!]!) : decimal(m.credits[refs[0]!]! + 1n)]
    const o = await observe(await ctx.handle(postJson(`/api/v1/admin/wallets/${user.player.userId}/credit`, { amount, reference }, admin)))
    if (this.spec.kind === 'conflict') {
      expect(differs(o, { status: 409, code: 'conflict' })).toBeNull()
    } else {
      expect(differs(o, { status: 200 })).toBeNull()
      if (this.spec.kind === 'new') {
        m.credits[reference] = minorUnits(amount)!
        m.balance += m.credits[reference]!
        creditedTotal += m.credits[reference]!
      }
      expect(balanceUnits(o.body.balance)).toBe(m.balance)
    }
    await checkAll(m)
  }
  toString = () => `Credit(${JSON.stringify(this.spec)})`
}

/** Changing the PIN (re-authenticated by password): the new PIN is the right one from then on, the lock, count and doubling lifted; a common PIN is refused and lifts nothing. */
class SetPin implements fc.AsyncCommand<PinModel, PinReal> {
  constructor(readonly pin: string) {}
  check = () => true
  async run(m: PinModel) {
    const o = await observe(await putPin(user, this.pin))
    if ((COMMON_PINS as readonly string[]).includes(this.pin)) {
      expect(differs(o, { status: 422, code: 'validation_failed' })).toBeNull()
    } else {
      expect(differs(o, { status: 200 })).toBeNull()
      m.pin = currentPin = this.pin
      m.failures = 0
      m.locks = 0
      m.lockedUntil = null
    }
    await checkAll(m)
  }
  toString = () => `SetPin(${this.pin})`
}

/**
 * Several mints and verifies in flight at once. The scheduler decides the
 * order in which they are sent; the pauses decide which of them share an
 * event-loop turn. Their answers must be those of one serial order, and the
 * stored state afterwards that order's state.
 */
class Burst implements fc.AsyncCommand<PinModel, PinReal> {
  constructor(
    readonly specs: OpSpec[],
    readonly pauses: boolean[],
  ) {}
  check = (m: Readonly<PinModel>) => m.sessions.length > 0 || this.specs.every((spec) => spec.kind === 'mint')
  async run(m: PinModel, r: PinReal) {
    const ops = this.specs.map((spec) => resolve(m, r, spec))
    const observed = await inFlight(r.scheduler!, ops.map((op) => () => send(op)), this.pauses, ops.map(describeOp))
    const balance = await walletBalance(user)
    const rows = await userRows()
    const result = linearize(m, ops, observed, step, (end) => storedDiffers(end, stored(end, balance, rows)))
    if (!result.found) {
      const lines = ops.map((op, i) => `  ${describeOp(op)} -> ${observed[i]!.status} ${JSON.stringify(observed[i]!.body)}`)
      throw new Error(`no serial order explains the burst:\n${lines.join('\n')}\n${result.why.join('\n')}`)
    }
    Object.assign(m, result.found.state)
    ops.forEach((op, i) => tally(op, observed[i]!))
    seen.set(`burst of ${ops.length}`, (seen.get(`burst of ${ops.length}`) ?? 0) + 1)
    await checkAll(m)
  }
  toString = () =>
    `Burst([${this.specs.map((spec) => (spec.kind === 'mint' ? 'mint' : `verify(${JSON.stringify(spec)})`)).join(', ')}], pauses ${JSON.stringify(this.pauses)})`
}

// ---- arbitraries ----

const amountArb: fc.Arbitrary<AmountSpec> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...GOOD_AMOUNTS).map((text) => ({ kind: 'ok' as const, text })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'over' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'all' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'same' as const }) },
  { weight: 1, arbitrary: fc.constantFrom(...BAD_AMOUNTS).map((text) => ({ kind: 'bad' as const, text })) },
)

const destinationArb: fc.Arbitrary<DestinationSpec> = fc.oneof(
  { weight: 8, arbitrary: fc.nat(DESTINATIONS.length - 1).map((index) => ({ kind: 'ok' as const, index })) },
  { weight: 1, arbitrary: fc.constantFrom(...BAD_DESTINATIONS).map((text) => ({ kind: 'bad' as const, text })) },
)

const verifySpecArb: fc.Arbitrary<VerifySpec> = fc.record({
  pick: fc.oneof({ weight: 4, arbitrary: fc.constant('live' as const) }, { weight: 1, arbitrary: fc.constant('any' as const) }),
  index: fc.nat(20),
  as: fc.oneof({ weight: 12, arbitrary: fc.constant('own' as const) }, { weight: 1, arbitrary: fc.constantFrom('wrong-token' as const, 'other-user' as const) }),
  pin: fc.oneof({ weight: 2, arbitrary: fc.constant('right' as const) }, { weight: 3, arbitrary: fc.constant('wrong' as const) }),
  wrongIndex: fc.nat(WRONG_PINS.length - 1),
  amount: amountArb,
  destination: destinationArb,
  key: fc.nat(3),
})

const advanceArb: fc.Arbitrary<AdvanceSpec> = fc.oneof(
  fc.integer({ min: 1, max: 120_000 }).map((ms) => ({ kind: 'ms' as const, ms })),
  fc.constantFrom(-1, 0, 1).map((delta) => ({ kind: 'session-expiry' as const, delta })),
  fc.constantFrom(-1000, -1, 0, 1).map((delta) => ({ kind: 'lock-end' as const, delta })),
)

const creditArb: fc.Arbitrary<CreditSpec> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('5', '20', '0.5').map((amount) => ({ kind: 'new' as const, amount })) },
  { weight: 1, arbitrary: fc.constantFrom({ kind: 'repeat' as const }, { kind: 'conflict' as const }) },
)

const sequentialCommands = fc.commands(
  [
    fc.constant(new Mint()),
    verifySpecArb.map((spec) => new Verify(spec)),
    verifySpecArb.map((spec) => new Verify(spec)),
    verifySpecArb.map((spec) => new Verify(spec)),
    fc.tuple(fc.integer({ min: 2, max: 5 }), verifySpecArb).map(([count, spec]) => new Guesses(count, spec)),
    advanceArb.map((spec) => new Advance(spec)),
    fc.oneof({ weight: 3, arbitrary: creditArb.map((spec) => new Credit(spec)) }, { weight: 1, arbitrary: fc.constantFrom(...SETTABLE_PINS, ...COMMON_PINS).map((pin) => new SetPin(pin)) }),
  ],
  { maxCommands: 30, size: 'max' },
)

const burstArb = fc
  .array(
    fc.oneof(
      { weight: 1, arbitrary: fc.constant<OpSpec>({ kind: 'mint' }) },
      { weight: 4, arbitrary: verifySpecArb.map((spec): OpSpec => ({ kind: 'verify', ...spec })) },
    ),
    { minLength: 2, maxLength: 5 },
  )
  .chain((specs) => fc.array(fc.boolean(), { minLength: specs.length, maxLength: specs.length }).map((pauses) => new Burst(specs, pauses)))

const concurrentCommands = fc.commands(
  [
    fc.constant(new Mint()),
    fc.constant(new Mint()),
    advanceArb.map((spec) => new Advance(spec)),
    creditArb.map((spec) => new Credit(spec)),
    burstArb,
    burstArb,
  ],
  { maxCommands: 16, size: 'max' },
)

// ---- runs ----

/**
 * Each run starts from the real state as it is, with the failure count and
 * lock reset (a direct write: the same reset a correct PIN makes, without
 * spending a hash), a signed-in user and a balance worth withdrawing from.
 */
async function setup(scheduler?: fc.Scheduler): Promise<{ model: PinModel; real: PinReal }> {
  const tag = `run${++runCounter}`
  await ctx.peek.db.delete(pinLocks).where(eq(pinLocks.userId, user.player.userId))
  // The model starts with no sessions: the ones earlier runs left live would count against MAX_LIVE_PIN_SESSIONS.
  await ctx.peek.db.update(pinSessions).set({ consumedAt: ctx.clock.now() }).where(and(eq(pinSessions.userId, user.player.userId), isNull(pinSessions.consumedAt)))
  await keepSignedIn(user)
  await keepSignedIn(other)
  let balance = await walletBalance(user)
  if (balance < 40_000_000n) {
    const res = await ctx.handle(postJson(`/api/v1/admin/wallets/${user.player.userId}/credit`, { amount: '60', reference: `${tag}-topup` }, admin))
    expect(res.status).toBe(200)
    creditedTotal += 60_000_000n
    balance += 60_000_000n
  }
  const model: PinModel = { now: ctx.clock.now().getTime(), pin: currentPin, failures: 0, locks: 0, lockedUntil: null, balance, sessions: [], withdrawals: {}, credits: {} }
  return { model, real: { tag, ...(scheduler ? { scheduler } : {}) } }
}

const SEQUENTIAL_BUDGET_MS = RUNS * 6_000 + 60_000
const CONCURRENT_BUDGET_MS = CONCURRENT_RUNS * 6_000 + 60_000

describe('PIN sessions against a model', () => {
  test(
    `mint / verify (right, wrong, bad amount or destination, consumed, foreign) / clock / credit / PIN change: ${RUNS} runs`,
    async () => {
      await fc.assert(
        fc.asyncProperty(sequentialCommands, async (cmds) => {
          await fc.asyncModelRun(() => setup(), cmds)
        }),
        assertParams(RUNS, SEQUENTIAL_BUDGET_MS, SEED),
      )
    },
    testTimeout(SEQUENTIAL_BUDGET_MS),
  )

  test(
    `concurrent mints and verifies, in scheduler-chosen orders, answer as some serial order: ${CONCURRENT_RUNS} runs`,
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.scheduler(), concurrentCommands, async (s, cmds) => {
          await fc.asyncModelRun(() => setup(s), cmds)
        }),
        assertParams(CONCURRENT_RUNS, CONCURRENT_BUDGET_MS, SEED),
      )
    },
    testTimeout(CONCURRENT_BUDGET_MS),
  )

  test('over all runs: balance = credits - withdrawals, and the ledger balances', async () => {
    const rows = await ctx.peek.db.select().from(withdrawals).where(eq(withdrawals.userId, user.player.userId))
    const withdrawn = rows.filter((w) => w.status !== 'failed').reduce((sum, w) => sum + BigInt(w.amount), 0n)
    expect(await walletBalance(user)).toBe(creditedTotal - withdrawn)
    expect((await checkLedger(ctx.services.storage.read.wallet)).ok).toBe(true)
    await checkInvariants()
    console.log(`pin-sessions model (seed ${SEED}): ${runCounter} runs (shrinks included); answers seen:\n${[...seen].sort().map(([k, n]) => `  ${k}: ${n}`).join('\n')}`)
  })
})
