// Shared pieces of the model-based tests: run counts, the fast-check
// parameters, money in minor units written independently of src/shared/money,
// responses read once, and the linearizability search used by the concurrent
// variants (the answers a burst of concurrent requests got must be the answers
// of SOME one-at-a-time order of the same requests, and the state they leave
// must be that order's state).
import fc from 'fast-check'

/**
 * Runs per property: ARENA_MODEL_RUNS, else the CI default given. The long run
 * multiplies it by ten (`ARENA_MODEL_RUNS=<10 x default>`).
 */
export function modelRuns(ciDefault: number): number {
  const raw = process.env.ARENA_MODEL_RUNS
  if (raw === undefined || raw === '') return ciDefault
  const runs = Number(raw)
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`ARENA_MODEL_RUNS must be a positive integer, got "${raw}"`)
  return runs
}

/**
 * fast-check parameters for a property of `runs` runs within `budgetMs`, from
 * `seed` (each model file chooses and prints its own with chooseSeed;
 * ARENA_MODEL_SEED replays it). Shrinking a failure is bounded by the same
 * time budget: an interrupted shrink still reports the smallest counterexample
 * found so far, and a property that cannot finish its runs in the budget fails
 * instead of passing on fewer runs.
 */
export function assertParams(runs: number, budgetMs: number, seed: number): fc.Parameters<unknown> {
  return {
    numRuns: runs,
    interruptAfterTimeLimit: budgetMs,
    markInterruptAsFailure: true,
    seed,
  }
}

/** bun:test timeout for a property whose fast-check budget is `budgetMs`. */
export const testTimeout = (budgetMs: number) => budgetMs + 30_000

// ---- money: contract §0, written here from the spec, not imported ----

const DECIMALS = 6
const UNIT = 10n ** BigInt(DECIMALS)
const GRAMMAR = new RegExp(`^(0|[1-9][0-9]{0,17})(\\.[0-9]{1,${DECIMALS}})?$`)

/** Minor units of a decimal string the contract accepts as an amount, or null (zero included). */
export function minorUnits(text: string): bigint | null {
  if (!GRAMMAR.test(text)) return null
  const [whole, fraction = ''] = text.split('.') as [string, string?]
  const value = BigInt(whole) * UNIT + BigInt(fraction.padEnd(DECIMALS, '0'))
  return value > 0n ? value : null
}

/** Minor units written as the shortest decimal string (no trailing zeros). */
export function decimal(minor: bigint): string {
  const whole = minor / UNIT
  const fraction = (minor % UNIT).toString().padStart(DECIMALS, '0').replace(/0+$/, '')
  return fraction ? `${whole}.${fraction}` : `${whole}`
}

/** A balance as the server writes it, in minor units (the server's own formatting is what is checked). */
export function balanceUnits(text: string): bigint {
  const minor = minorUnits(text)
  if (minor === null) {
    if (/^0(\.0+)?$/.test(text)) return 0n
    throw new Error(`not a balance: ${JSON.stringify(text)}`)
  }
  return minor
}

// ---- responses ----

export interface Observed {
  status: number
  retryAfter: string | null
  /** Parsed JSON (or the raw text). Shapes are checked field by field by the steps. */
  body: any
}

export async function observe(res: Response): Promise<Observed> {
  const text = await res.text()
  let body: unknown = null
  try {
    body = text ? JSON.parse(text) : null
  } catch {
    body = text
  }
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body }
}

/** The error code of an envelope, or null. */
export const codeOf = (o: Observed): string | null => (o.body && typeof o.body === 'object' && o.body.error ? (o.body.error.code as string) : null)

// ---- concurrency ----

/**
 * Sends requests concurrently in an order the fast-check scheduler picks.
 * Each request waits behind a gate; the scheduler opens the gates one by one,
 * and when `pauses[i]` is set, the requests sent so far get one macrotask to
 * run on before the (i+2)-th is sent (without pauses they all start in the
 * same event-loop turn, and claims share one group-commit batch). Every answer is awaited, then returned in the
 * order of `requests`.
 *
 * (Not fc.scheduledModelRun: its commands must not wait for anything the
 * scheduler holds, and these commands wait for the answers to check them.)
 */
export async function inFlight<T>(s: fc.Scheduler, requests: (() => Promise<T>)[], pauses: boolean[], labels: string[]): Promise<T[]> {
  const answers = requests.map((send, i) => s.schedule(Promise.resolve(i), labels[i]).then(() => send()))
  // Nothing is lost if one rejects early: all are awaited below.
  for (const answer of answers) answer.catch(() => {})
  for (let i = 0; i < requests.length; i++) {
    await s.waitOne()
    if (pauses[i]) await new Promise((resolve) => setImmediate(resolve))
  }
  return Promise.all(answers)
}

// ---- linearizability ----

/**
 * Applies one operation to a (cloned, mutable) model state, given the answer
 * the real system gave it (so ids it minted can be bound); returns why that
 * answer is not what the model says, or null when it is.
 */
export type Step<S, Op> = (state: S, op: Op, observed: Observed) => string | null

export interface Linearization<S> {
  order: number[]
  state: S
}

/**
 * Depth-first search for an order of `ops` under which every observed answer
 * is the model's answer; candidate end states are offered to `accept` (a
 * check against the real system's state) and the first accepted one wins.
 * Returns null, with the reasons of the identity order, when none exists.
 */
export function linearize<S, Op>(
  initial: S,
  ops: readonly Op[],
  observed: readonly Observed[],
  step: Step<S, Op>,
  accept: (state: S) => string | null = () => null,
): { found: Linearization<S> } | { found: null; why: string[] } {
  const clone = (s: S): S => structuredClone(s)
  const used = new Array<boolean>(ops.length).fill(false)
  const order: number[] = []
  const rejections: string[] = []
  const search = (state: S): Linearization<S> | null => {
    if (order.length === ops.length) {
      const refused = accept(state)
      if (refused === null) return { order: [...order], state }
      if (rejections.length < 10) rejections.push(`order ${order.join(',')}: end state: ${refused}`)
      return null
    }
    for (let i = 0; i < ops.length; i++) {
      if (used[i]) continue
      const next = clone(state)
      const why = step(next, ops[i]!, observed[i]!)
      if (why !== null) continue
      used[i] = true
      order.push(i)
      const found = search(next)
      if (found) return found
      order.pop()
      used[i] = false
    }
    return null
  }
  const found = search(clone(initial))
  if (found) return { found }
  // What the plain order says, to make a failure readable.
  const why: string[] = [...rejections]
  const state = clone(initial)
  for (let i = 0; i < ops.length; i++) {
    const reason = step(state, ops[i]!, observed[i]!)
    if (reason !== null) why.push(`op ${i} in the given order: ${reason}`)
  }
  return { found: null, why }
}

/** Compares an observed answer with the expected fields; returns the first difference. */
export function differs(observed: Observed, expected: { status: number; code?: string | null; retryAfter?: string | null }): string | null {
  if (observed.status !== expected.status) return `status ${observed.status} (${JSON.stringify(observed.body)}), model says ${expected.status}${expected.code ? ` ${expected.code}` : ''}`
  if (expected.code !== undefined && codeOf(observed) !== expected.code) return `code ${codeOf(observed)}, model says ${expected.code}`
  if (expected.retryAfter !== undefined && observed.retryAfter !== expected.retryAfter) return `Retry-After ${observed.retryAfter}, model says ${expected.retryAfter}`
  return null
}
