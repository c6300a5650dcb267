// Model-based test of the ledger (contract §10, issue 20), through the real
// HTTP routes of a real app over a real database (SQLite, or PostgreSQL under
// ARENA_TEST_ENGINE=postgres).
//
// Random batches of credits, signed adjustments (with replayed references),
// PIN withdrawals (some above ARENA_WITHDRAWAL_APPROVAL_ABOVE, so awaiting
// approval), approvals, rejections, tournament registrations with an entry
// fee, leaving (the refund), pool funding, and at the end of each run the
// tournament started and played out (prizes paid, the rest to the house) or
// cancelled (fees refunded). The commands of a batch are sent concurrently;
// their answers must be those of SOME one-at-a-time order of them, and the
// state they leave must be that order's state.
//
// What must stay true, checked after every batch:
// - each player's GET /wallet balance is the model's, and never below zero;
// - each player's GET /wallet/transactions (every page) is the model's
//   movements: kinds, signed amounts, running balanceAfter, in order;
// - the tournament's escrow holds the fees and funding the model says;
// - checkLedger is ok (every transaction balances, balances are the sums of
//   postings, balanceAfter is the running sum, one reversal per rejected
//   withdrawal, settled escrows empty), and the postings of every account
//   together sum to zero.
//
// 30 runs by default (ARENA_MODEL_RUNS for more); the seed is printed and
// ARENA_MODEL_SEED replays it; what the runs exercised (each command's
// answers, batch sizes, tournament endings) is printed at the end.
import { afterAll, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { checkLedger, escrowAccountId } from '../../src/modules/wallet/ledger'
import { postJson, req } from '../helpers/app'
import { admin, createArenaApp, createGame, playOut, tournament, type Player, type TournamentView } from '../helpers/arena'
import { funded, mint, PIN, someAddress, verify } from '../helpers/purchases'
import { login } from '../helpers/auth'
import { chooseSeed } from '../helpers/seed'
import { assertParams, balanceUnits, decimal, differs, linearize, modelRuns, observe, testTimeout, type Observed, type Step } from './support'

const U = 1_000_000n
const APPROVAL_ABOVE = 20n * U
const FEE = 2n * U
const PRIZES = [3n * U, 1n * U]
const PRIZES_TOTAL = PRIZES.reduce((a, b) => a + b, 0n)
const PLAYERS = 3

const RUNS = modelRuns(30)
const BUDGET_MS = Math.max(60_000, RUNS * 4_000)
const SEED = chooseSeed('ARENA_MODEL_SEED', 'ledger model')

const ctx = await createArenaApp({
  ARENA_WITHDRAWAL_APPROVAL_ABOVE: decimal(APPROVAL_ABOVE),
  ARENA_ACCESS_TTL_S: String(86_400),
  // Three players meet run after run: pair_limit would hold the prizes this model pays (held payouts: test/integrity/*).
  ARENA_INTEGRITY_SIGNALS: 'none',
})
afterAll(() => ctx.close())
const wallet = ctx.services.storage.read.wallet
const { game, gameKey } = await createGame(ctx, 'Ledger Model Duel')

const people: Player[] = []
for (let i = 0; i < PLAYERS; i++) people.push(await funded(ctx, '0'))
const bearer = (p: Player) => ({ authorization: `Bearer ${p.tokens.accessToken}` })
/** The clock moves about 12 minutes a run; the players sign in again well before their 24 h bearers end. */
let signedInAt = ctx.clock.now().getTime()
async function keepSignedIn() {
  if (ctx.clock.now().getTime() - signedInAt < 12 * 3600_000) return
  for (const p of people) p.tokens = await login(ctx, p.username)
  signedInAt = ctx.clock.now().getTime()
}

// ---- the model ----

type Entry = [kind: string, amount: bigint, balanceAfter: bigint]

interface WithdrawalM {
  user: number
  amount: bigint
  status: 'signed' | 'awaiting_approval' | 'approved' | 'rejected'
}

interface LedgerModel {
  balances: bigint[]
  history: Entry[][]
  /** By real withdrawal id. */
  withdrawals: Record<string, WithdrawalM>
  /** Adjustment references that moved money. */
  adjusted: Record<string, true>
  /** The current tournament: who is registered, what its escrow holds. */
  joined: boolean[]
  escrow: bigint
}

type Op =
  | { kind: 'credit'; user: number; amount: bigint; reference: string }
  | { kind: 'adjust'; user: number; amount: bigint; reference: string }
  | { kind: 'withdraw'; user: number; amount: bigint }
  | { kind: 'approve' | 'reject'; id: string }
  | { kind: 'join' | 'leave'; user: number }
  | { kind: 'fund'; amount: bigint; reference: string }

const describeOp = (op: Op) => JSON.stringify(op, (_k, v) => (typeof v === 'bigint' ? decimal(v) : v))

function move(m: LedgerModel, user: number, kind: string, amount: bigint) {
  m.balances[user]! += amount
  m.history[user]!.push([kind, amount, m.balances[user]!])
}

function balanceIs(o: Observed, m: LedgerModel, user: number): string | null {
  if (o.body?.balance === undefined) return null
  const said = balanceUnits(o.body.balance)
  return said === m.balances[user] ? null : `answered balance ${o.body.balance}, model says ${decimal(m.balances[user]!)}`
}

const step: Step<LedgerModel, Op> = (m, op, o) => {
  switch (op.kind) {
    case 'credit': {
      const bad = differs(o, { status: 200 })
      if (bad) return bad
      move(m, op.user, 'credit', op.amount)
      // Not compared: a credit answers the balance read after its commit, which
      // may already hold a concurrent command's movement (an adjustment answers
      // the one its unit of work left, and is compared).
      return null
    }
    case 'adjust': {
      if (m.adjusted[op.reference]) return differs(o, { status: 200 }) ?? balanceIs(o, m, op.user)
      if (m.balances[op.user]! + op.amount < 0n) return differs(o, { status: 422, code: 'insufficient_funds' })
      const bad = differs(o, { status: 200 })
      if (bad) return bad
      move(m, op.user, 'adjustment', op.amount)
      m.adjusted[op.reference] = true
      return balanceIs(o, m, op.user)
    }
    case 'withdraw': {
      if (m.balances[op.user]! < op.amount) return differs(o, { status: 422, code: 'insufficient_funds' })
      const bad = differs(o, { status: 200 })
      if (bad) return bad
      const w = o.body?.withdrawal
      const awaiting = op.amount > APPROVAL_ABOVE
      if (!w || typeof w.id !== 'string') return `no withdrawal in ${JSON.stringify(o.body)}`
      if (awaiting ? w.status !== 'awaiting_approval' : w.status !== 'signed') return `withdrawal status ${w.status} for ${decimal(op.amount)}`
      if (w.amount !== decimal(op.amount)) return `withdrawal amount ${w.amount}`
      move(m, op.user, 'withdrawal', -op.amount)
      m.withdrawals[w.id] = { user: op.user, amount: op.amount, status: awaiting ? 'awaiting_approval' : 'signed' }
      return null
    }
    case 'approve':
    case 'reject': {
      const w = m.withdrawals[op.id]!
      const done = op.kind === 'approve' ? 'approved' : 'rejected'
      if (w.status !== 'awaiting_approval' && w.status !== done) return differs(o, { status: 409, code: op.kind === 'approve' ? 'withdrawal_not_awaiting_approval' : 'withdrawal_signing_started' })
      const bad = differs(o, { status: 200 })
      if (bad) return bad
      const status = o.body?.withdrawal?.status
      if (status !== (op.kind === 'approve' ? 'signed' : 'rejected')) return `${op.kind} answered status ${status}`
      if (w.status === 'awaiting_approval') {
        w.status = done
        if (op.kind === 'reject') move(m, w.user, 'withdrawal_reversal', w.amount)
      }
      return null
    }
    case 'join': {
      if (m.joined[op.user]) return differs(o, { status: 409, code: 'already_registered' })
      if (m.balances[op.user]! < FEE) return differs(o, { status: 422, code: 'insufficient_funds' })
      const bad = differs(o, { status: 201 })
      if (bad) return bad
      m.joined[op.user] = true
      m.escrow += FEE
      move(m, op.user, 'entry_fee', -FEE)
      return null
    }
    case 'leave': {
      if (!m.joined[op.user]) return differs(o, { status: 409, code: 'not_registered' })
      const bad = differs(o, { status: 200 })
      if (bad) return bad
      m.joined[op.user] = false
      m.escrow -= FEE
      move(m, op.user, 'entry_fee_refund', FEE)
      return null
    }
    case 'fund': {
      const bad = differs(o, { status: 200 })
      if (bad) return bad
      m.escrow += op.amount
      return null
    }
  }
}

// ---- the real system ----

interface Real {
  balances: bigint[]
  history: Entry[][]
  escrow: bigint
}

async function transactions(p: Player): Promise<Entry[]> {
  const out: Entry[] = []
  let after: string | null = null
  for (let page = 0; page < 1000; page++) {
    const o = await observe(await ctx.handle(req(`/api/v1/wallet/transactions?limit=7${after ? `&after=${encodeURIComponent(after)}` : ''}`, { headers: bearer(p) })))
    expect(o.status).toBe(200)
    for (const t of o.body.transactions as { kind: string; amount: string; balanceAfter: string }[]) {
      const negative = t.amount.startsWith('-')
      const size = balanceUnits(negative ? t.amount.slice(1) : t.amount)
      out.push([t.kind, negative ? -size : size, balanceUnits(t.balanceAfter)])
    }
    // The cursor always names where to go on from: an empty page is the end.
    if (o.body.transactions.length === 0) return out
    after = o.body.cursor
  }
  throw new Error('history never ended')
}

async function real(tournamentId: string): Promise<Real> {
  const balances: bigint[] = []
  const history: Entry[][] = []
  for (const p of people) {
    const o = await observe(await ctx.handle(req('/api/v1/wallet', { headers: bearer(p) })))
    expect(o.status).toBe(200)
    expect(String(o.body.balance).startsWith('-')).toBe(false)
    balances.push(balanceUnits(o.body.balance))
    history.push(await transactions(p))
  }
  return { balances, history, escrow: await wallet.postingsTotal(escrowAccountId(tournamentId, 'USDC')) }
}

const show = (e: Entry[]) => e.map(([k, a, b]) => `${k} ${decimal(a < 0n ? -a : a)}${a < 0n ? '-' : ''} =${decimal(b)}`).join(', ')

function matches(m: LedgerModel, r: Real): string | null {
  for (let i = 0; i < PLAYERS; i++) {
    if (m.balances[i] !== r.balances[i]) return `player ${i}: balance ${decimal(r.balances[i]!)}, model says ${decimal(m.balances[i]!)}`
    const want = show(m.history[i]!)
    const got = show(r.history[i]!)
    if (want !== got) return `player ${i}: history\n  real:  ${got}\n  model: ${want}`
  }
  if (m.escrow !== r.escrow) return `escrow ${r.escrow}, model says ${m.escrow}`
  return null
}

async function ledgerHolds() {
  const report = await checkLedger(wallet)
  expect(report.problems).toEqual([])
  expect(report.ok).toBe(true)
  const { postings, accounts } = await wallet.ledgerSnapshot()
  expect(postings.reduce((sum, p) => sum + p.amount, 0n)).toBe(0n)
  for (const a of accounts) if (a.userId !== null) expect(a.balance >= 0n).toBe(true)
}

function send(op: Op, tournamentId: string): Promise<Observed> {
  const p = 'user' in op ? people[op.user]! : null
  switch (op.kind) {
    case 'credit':
      return ctx.handle(postJson(`/api/v1/admin/wallets/${p!.userId}/credit`, { amount: decimal(op.amount), reference: op.reference }, admin)).then(observe)
    case 'adjust': {
      const amount = op.amount < 0n ? `-${decimal(-op.amount)}` : decimal(op.amount)
      return ctx.handle(postJson(`/api/v1/admin/wallets/${p!.userId}/adjust`, { amount, reason: 'model', reference: op.reference }, admin)).then(observe)
    }
    case 'withdraw':
      return mint(ctx, p!).then((session) =>
        verify(ctx, p!, session, { pin: PIN, amount: decimal(op.amount), destinationAddress: someAddress(), idempotencyKey: `w-${crypto.randomUUID()}` }).then(observe),
      )
    case 'approve':
      return ctx.handle(postJson(`/api/v1/admin/withdrawals/${op.id}/approve`, {}, admin)).then(observe)
    case 'reject':
      return ctx.handle(postJson(`/api/v1/admin/withdrawals/${op.id}/reject`, { reason: 'model says no' }, admin)).then(observe)
    case 'join':
      return ctx.handle(postJson(`/api/v1/tournaments/${tournamentId}/registration`, {}, bearer(p!))).then(observe)
    case 'leave':
      return ctx.handle(req(`/api/v1/tournaments/${tournamentId}/registration`, { method: 'DELETE', headers: bearer(p!) })).then(observe)
    case 'fund':
      return ctx.handle(postJson(`/api/v1/admin/tournaments/${tournamentId}/fund`, { amount: decimal(op.amount), reference: op.reference }, admin)).then(observe)
  }
}

// ---- generated commands (targets resolved against the model when sent) ----

type Gen =
  | { kind: 'credit'; user: number; amount: bigint }
  | { kind: 'adjust'; user: number; amount: bigint; ref: number }
  | { kind: 'withdraw'; user: number; amount: bigint }
  /** A share (percent) of the balance, as the model has it before the batch: two of them race for it. */
  | { kind: 'withdraw'; user: number; share: bigint }
  | { kind: 'approve' | 'reject'; pick: number }
  | { kind: 'join' | 'leave'; user: number }
  | { kind: 'fund'; amount: bigint }

const user = fc.integer({ min: 0, max: PLAYERS - 1 })
const small = fc.bigInt({ min: 1n, max: 15n * U })
const gen: fc.Arbitrary<Gen> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('credit' as const), user, amount: fc.oneof(small, fc.bigInt({ min: 20n * U, max: 60n * U })) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('adjust' as const), user, amount: fc.oneof(small, small.map((a) => -a)), ref: fc.integer({ min: 0, max: 4 }) }) },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('withdraw' as const), user, amount: fc.oneof(fc.bigInt({ min: 1n, max: APPROVAL_ABOVE }), fc.bigInt({ min: APPROVAL_ABOVE + 1n, max: 40n * U })) }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('withdraw' as const), user, share: fc.bigInt({ min: 30n, max: 110n }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constantFrom('approve' as const, 'reject' as const), pick: fc.nat(20) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('join' as const), user }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('leave' as const), user }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('fund' as const), amount: fc.bigInt({ min: 1n, max: 3n * U }) }) },
)
const batches = fc.array(fc.array(gen, { minLength: 1, maxLength: 4 }), { minLength: 3, maxLength: 8 })

let runNo = 0
/** What the runs exercised (op kind and answer status, tournament endings), printed at the end. */
const seen = new Map<string, number>()
const saw = (what: string) => seen.set(what, (seen.get(what) ?? 0) + 1)
let references = 0

describe('the ledger against a model', () => {
  const model: LedgerModel = { balances: people.map(() => 0n), history: people.map(() => []), withdrawals: {}, adjusted: {}, joined: [], escrow: 0n }
  /** Each adjustment reference's body, so a replay sends the same one. */
  const adjustBodies = new Map<string, { user: number; amount: bigint }>()

  test(
    `credits, adjustments, withdrawals, approvals, rejections, fees, refunds, funding and payouts, in concurrent batches (${RUNS} runs)`,
    async () => {
      await fc.assert(
        fc.asyncProperty(batches, async (plan) => {
          const run = ++runNo
          await keepSignedIn()
          const at = (ms: number) => new Date(ctx.clock.now().getTime() + ms).toISOString()
          const created = await observe(
            await ctx.handle(
              postJson(
                '/api/v1/admin/tournaments',
                { gameId: game.id, name: `Ledger Cup ${run}`, format: 'single_elimination', registration: { closesAt: at(300_000), maxPlayers: PLAYERS }, startsAt: at(360_000), entryFee: decimal(FEE), prizes: PRIZES.map(decimal) },
                admin,
              ),
            ),
          )
          expect(created.status).toBe(201)
          const t = created.body.tournament as TournamentView & { registration: { closesAt: string } }
          // The model lives on from run to run, as the players and their ledger do
          // (withdrawals of earlier runs still awaiting approval may be decided now).
          model.joined = people.map(() => false)
          model.escrow = 0n
          const log: string[] = []
          let settledRun = false
          try {

            const apply = async (ops: Op[]) => {
              const before = structuredClone(model)
              const observed = await Promise.all(ops.map((op) => send(op, t.id)))
              const now = await real(t.id)
              const result = linearize(before, ops, observed, step, (s) => matches(s, now))
              log.push(ops.map((op, i) => `${describeOp(op)} -> ${observed[i]!.status}`).join(' | '))
              ops.forEach((op, i) => saw(`${op.kind} ${observed[i]!.status}${observed[i]!.body?.withdrawal?.status ? ` ${observed[i]!.body.withdrawal.status}` : ''}`))
              if (ops.length > 1) saw(`batch of ${ops.length}`)
              if (!result.found) throw new Error(`run ${run}: no one-at-a-time order explains the batch:\n${log.join('\n')}\n${result.why.join('\n')}`)
              Object.assign(model, result.found.state)
              await ledgerHolds()
            }

            for (const batch of plan) {
              const awaiting = Object.entries(model.withdrawals).filter(([, w]) => w.status === 'awaiting_approval').map(([id]) => id)
              const ops: Op[] = []
              for (const g of batch) {
                switch (g.kind) {
                  case 'credit':
                    ops.push({ ...g, reference: `model-credit-${SEED}-${++references}` })
                    break
                  case 'adjust': {
                    const reference = `model-adjust-${SEED}-${run}-${g.ref}`
                    if (adjustBodies.has(reference)) saw('adjust replayed reference')
                    const body = adjustBodies.get(reference) ?? { user: g.user, amount: g.amount }
                    adjustBodies.set(reference, body)
                    ops.push({ kind: 'adjust', reference, ...body })
                    break
                  }
                  case 'approve':
                  case 'reject':
                    if (awaiting.length > 0) ops.push({ kind: g.kind, id: awaiting[g.pick % awaiting.length]! })
                    break
                  case 'fund':
                    ops.push({ ...g, reference: `model-fund-${SEED}-${++references}` })
                    break
                  case 'withdraw': {
                    const amount = 'share' in g ? (model.balances[g.user]! * g.share) / 100n : g.amount
                    ops.push({ kind: 'withdraw', user: g.user, amount: amount > 0n ? amount : 1n })
                    break
                  }
                  case 'join':
                  case 'leave':
                    ops.push({ kind: g.kind, user: g.user })
                    break
                }
              }
              if (ops.length > 0) await apply(ops)
            }

            // The end of the run: the tournament plays out (prizes), or is cancelled (refunds).
            const registered = model.joined.filter(Boolean).length
            if (registered >= 2) {
              if (model.escrow < PRIZES_TOTAL) await apply([{ kind: 'fund', amount: PRIZES_TOTAL - model.escrow, reference: `model-fund-${SEED}-${++references}` }])
              ctx.clock.set(t.registration.closesAt)
              const started = await observe(await ctx.handle(postJson(`/api/v1/admin/tournaments/${t.id}/start`, {}, admin)))
              expect(started.status).toBe(200)
              for (;;) {
                const now = await tournament(ctx, t.id)
                const running = now.matches.filter((x) => x.status === 'running')
                if (running.length === 0) break
                for (const x of running) await playOut(ctx, game.id, gameKey, now, people, x, x.slot1ParticipantId!)
              }
              await ctx.runJobs()
              const done = (await tournament(ctx, t.id)) as TournamentView & { standings: { participantId: string; rank: number }[] }
              expect(done.status).toBe('completed')
              saw(`tournament of ${registered} paid out`)
              PRIZES.forEach((prize, i) => {
                const participant = done.standings.find((s) => s.rank === i + 1)!.participantId
                const userId = done.participants.find((x) => x.id === participant)!.userId
                move(model, people.findIndex((p) => p.userId === userId), 'prize', prize)
              })
            } else {
              const cancelled = await observe(await ctx.handle(postJson(`/api/v1/admin/tournaments/${t.id}/cancel`, { reason: 'model run over' }, admin)))
              expect(cancelled.status).toBe(200)
              saw(`tournament of ${registered} cancelled`)
              model.joined.forEach((joined, i) => joined && move(model, i, 'entry_fee_refund', FEE))
            }
            model.escrow = 0n
            model.joined = people.map(() => false)
            const settled = matches(model, await real(t.id))
            if (settled) throw new Error(`run ${run}: after the tournament: ${settled}\n${log.join('\n')}`)
            settledRun = true
            await ledgerHolds()
          } finally {
            // A failed run's tournament is cancelled, so no later job settles it behind the model's back.
            if (!settledRun) await ctx.handle(postJson(`/api/v1/admin/tournaments/${t.id}/cancel`, { reason: 'model run failed' }, admin))
            // The next run's tournament opens later.
            ctx.clock.advance(400_000)
          }
        }),
        // No shrinking: the players and their ledger live on from run to run, so a
        // shrunk plan replays on another state; the first failure, with its run's
        // log of batches and answers, is the report (the seed replays it).
        { ...assertParams(RUNS, BUDGET_MS, SEED), endOnFailure: true },
      )
      console.log(`ledger model: ${[...seen].sort().map(([k, n]) => `${k}: ${n}`).join(', ')}`)
    },
    testTimeout(BUDGET_MS),
  )
})
