// The gate every argon2id hash and verify goes through (passwords.ts). One
// argon2id run holds 19 MiB for ~40 ms of one core; unbounded, a burst of
// logins would pile up memory and latency until the host swaps. The gate
// lets at most `concurrency` run at once and at most `queue` wait, in FIFO
// order; past that a caller is refused AT ONCE with 503 service_unavailable
// and Retry-After, before anything was judged or written, so the caller can
// come back rather than wait behind a backlog.
//
// What must stay true:
// - Admission is synchronous (admit() answers now: a ticket, or a throw), so
//   a caller can be refused before it records anything (login counts its
//   throttle attempt only once admitted).
// - A slot is released exactly once on every path: after the work settles
//   (try/finally, so a throwing hash frees it too), or by cancel() for a
//   ticket whose work will not run. A freed slot goes to the oldest waiter in
//   the same synchronous step, so a newcomer can never overtake the queue.
import { availableParallelism } from 'node:os'
import { AppError } from '../../shared/errors'

/**
 * Hashing in parallel beyond the cores buys no throughput, only memory:
 * one run per core, capped so a many-core host still stays far below
 * 1 GiB (16 × 19 MiB ≈ 300 MiB of argon2 state).
 */
export const MAX_DEFAULT_CONCURRENCY = 16

/**
 * Waiters per slot. A waiter costs a request object and a promise (a few
 * KiB); what the bound buys is latency: the last admitted caller waits at
 * most QUEUE_PER_SLOT + 1 hash durations (≈ 0.4 s at 45 ms), whatever the
 * core count, shorter than the Retry-After a refused caller is told.
 */
export const QUEUE_PER_SLOT = 8

/** Seconds a refused caller is told to wait: by then the queue has drained. */
export const HASH_GATE_RETRY_AFTER_S = 1

/**
 * While the gate refuses, a full garbage collection at most this often. A
 * burst of refused logins (500 clients retrying at once) answers thousands a
 * second, and what each answer leaves (request and response buffers held by
 * objects awaiting collection) piled up between the runtime's own full
 * collections: the 500-login burst took the server from 80 to 250 MiB. One
 * collection every 500 ms kept its peak near 175 MiB for 7 % fewer logins
 * admitted during the burst (docs/performance.md, issue 23).
 */
export const OVERLOAD_COLLECT_EVERY_MS = 500

export interface HashGateOptions {
  /** Hashes running at once (default: the CPUs, at most MAX_DEFAULT_CONCURRENCY). */
  concurrency?: number
  /** Callers waiting for a slot (default: QUEUE_PER_SLOT × concurrency); 0 refuses whenever all slots run. */
  queue?: number
  /** Runs a full garbage collection (default Bun.gc(true)); called on a refusal at most every OVERLOAD_COLLECT_EVERY_MS. */
  collectGarbage?: () => void
  /** Milliseconds of a monotonic clock (default performance.now). */
  now?: () => number
  /**
   * The argon2id cost of the hashes made through this gate. Tests only, and
   * only in code (no setting reaches it): the in-process test apps hash at a
   * token cost so that thousands of sign-ups and logins do not spend minutes
   * of the suite (test/helpers/app.ts); the tests of the hashing itself, of
   * the gate and of timing keep the real cost. Default: PASSWORD_HASH_PARAMS.
   */
  hashCost?: HashCost
}

/** argon2id's memory (KiB) and passes. */
export interface HashCost {
  memoryCost: number
  timeCost: number
}

export interface HashGateStats {
  concurrency: number
  queue: number
  running: number
  waiting: number
  /** Callers refused since start. */
  refused: number
}

/** Something hashing work can be run through: a gate (admits, then runs) or an admitted ticket. */
export interface HashRunner {
  run<T>(work: () => Promise<T>): Promise<T>
  /** The cost of hashes made through this runner, when not the default (HashGateOptions.hashCost). */
  readonly hashCost?: HashCost
}

export function defaultHashConcurrency(): number {
  return Math.max(1, Math.min(availableParallelism(), MAX_DEFAULT_CONCURRENCY))
}

function positiveInteger(value: number, name: string, min: number): number {
  if (!Number.isInteger(value) || value < min) throw new RangeError(`${name} must be an integer >= ${min}, got ${value}`)
  return value
}

export class HashGate implements HashRunner {
  readonly concurrency: number
  readonly queue: number
  readonly hashCost: HashCost | undefined
  private running = 0
  private refused = 0
  /** FIFO of admitted tickets waiting for a slot (short: at most `queue`). */
  private readonly waiting: HashTicket[] = []

  private readonly collectGarbage: () => void
  private readonly now: () => number
  private lastCollected = -Infinity

  constructor(options: HashGateOptions = {}) {
    this.concurrency = positiveInteger(options.concurrency ?? defaultHashConcurrency(), 'concurrency', 1)
    this.queue = positiveInteger(options.queue ?? QUEUE_PER_SLOT * this.concurrency, 'queue', 0)
    this.collectGarbage = options.collectGarbage ?? (() => Bun.gc(true))
    this.now = options.now ?? (() => performance.now())
    this.hashCost = options.hashCost
  }

  /**
   * Takes a slot or a place in the queue now, or throws 503 (with
   * Retry-After) when both are full. The ticket must then be either run()
   * or cancel()led, exactly once.
   */
  admit(): HashTicket {
    if (this.running < this.concurrency && this.waiting.length === 0) {
      this.running++
      return new HashTicket(this, true)
    }
    if (this.waiting.length < this.queue) {
      const ticket = new HashTicket(this, false)
      this.waiting.push(ticket)
      return ticket
    }
    throw this.refusal()
  }

  /**
   * Throws the 503 admit() would throw now, without taking anything. A
   * caller that does work before admitting (a lookup, a unit of work) calls
   * this first: in a burst most callers are refused, and each refusal cost
   * that work, the CPU the admitted hashes need. A slot that frees up in
   * between is taken by the next caller.
   */
  refuseIfFull(): void {
    if (this.waiting.length >= this.queue && !(this.running < this.concurrency && this.waiting.length === 0)) throw this.refusal()
  }

  private refusal(): AppError {
    this.refused++
    const now = this.now()
    if (now - this.lastCollected >= OVERLOAD_COLLECT_EVERY_MS) {
      this.lastCollected = now
      this.collectGarbage()
    }
    return new AppError('service_unavailable', 'Too many password checks in progress; try again shortly', {
      headers: { 'retry-after': String(HASH_GATE_RETRY_AFTER_S) },
    })
  }

  /** admit() then run: rejects with the 503 at once (admission is decided in this call), or runs `work` when a slot is free. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    return this.admit().run(work)
  }

  stats(): HashGateStats {
    return { concurrency: this.concurrency, queue: this.queue, running: this.running, waiting: this.waiting.length, refused: this.refused }
  }

  /** @internal A ticket gives its slot back. */
  release(): void {
    this.running--
    // Hand the slot on in this same step: nobody can slip in between.
    while (this.running < this.concurrency && this.waiting.length > 0) {
      this.running++
      this.waiting.shift()!.grant()
    }
  }

  /** @internal A queued ticket leaves the queue without running. */
  withdraw(ticket: HashTicket): void {
    const index = this.waiting.indexOf(ticket)
    if (index !== -1) this.waiting.splice(index, 1)
  }
}

/** One admission: holds a slot, or waits in the queue for one. */
export class HashTicket implements HashRunner {
  private state: 'waiting' | 'holding' | 'running' | 'done'
  private readonly granted: Promise<void>
  private onGrant: (() => void) | undefined

  constructor(
    private readonly gate: HashGate,
    holding: boolean,
  ) {
    this.state = holding ? 'holding' : 'waiting'
    this.granted = holding ? Promise.resolve() : new Promise<void>((resolve) => (this.onGrant = resolve))
  }

  get hashCost(): HashCost | undefined {
    return this.gate.hashCost
  }

  /** @internal Called by the gate when a slot is handed to this ticket. */
  grant(): void {
    if (this.state === 'waiting') this.state = 'holding'
    this.onGrant?.()
  }

  /** Waits for the slot, runs `work`, and frees the slot however `work` ends. Once per ticket. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.state === 'running' || this.state === 'done') throw new Error('HashTicket used twice')
    const wasWaiting = this.state === 'waiting'
    this.state = 'running'
    try {
      if (wasWaiting) await this.granted
      return await work()
    } finally {
      this.state = 'done'
      this.gate.release()
    }
  }

  /** Gives the slot or queue place back without running. Safe to call on any path; a no-op once run or cancelled. */
  cancel(): void {
    if (this.state === 'holding') this.gate.release()
    else if (this.state === 'waiting') this.gate.withdraw(this)
    if (this.state !== 'running') this.state = 'done'
  }
}

let processGate: HashGate | undefined

/**
 * The process's gate: memory is per process, so every service shares one
 * unless a caller (a test) passes its own.
 */
export function defaultHashGate(): HashGate {
  processGate ??= new HashGate()
  return processGate
}
