// Invariant: argon2id work runs through a gate that lets at most K hashes run
// at once and at most Q wait, first come first served; the next caller is
// refused at once with 503 service_unavailable + Retry-After; a slot is
// released exactly once on every path (work done, work thrown, cancelled).
import { describe, expect, test } from 'bun:test'
import { availableParallelism } from 'node:os'
import { defaultHashConcurrency, HashGate, MAX_DEFAULT_CONCURRENCY, OVERLOAD_COLLECT_EVERY_MS, QUEUE_PER_SLOT } from '../../src/modules/auth/hash-gate'
import { hashPassword, PASSWORD_HASH_PARAMS, verifyAgainstDummy, verifyPassword } from '../../src/modules/auth/passwords'
import { TEST_HASH_COST } from '../helpers/app'
import { AppError } from '../../src/shared/errors'

/** A promise the test resolves by hand. */
function latch() {
  let open!: () => void
  const opened = new Promise<void>((resolve) => (open = resolve))
  return { opened, open }
}

function refusal(fn: () => unknown): AppError {
  try {
    fn()
  } catch (error) {
    expect(error).toBeInstanceOf(AppError)
    return error as AppError
  }
  throw new Error('expected a refusal')
}

async function refusalOf(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(AppError)
  return error as AppError
}

describe('HashGate', () => {
  test('never more than K run at once, and K do run together', async () => {
    const gate = new HashGate({ concurrency: 3, queue: 100 })
    let running = 0
    let peak = 0
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        gate.run(async () => {
          running++
          peak = Math.max(peak, running)
          await Bun.sleep(1 + (i % 4))
          running--
        }),
      ),
    )
    expect(peak).toBe(3)
    expect(gate.stats()).toMatchObject({ running: 0, waiting: 0, refused: 0 })
  })

  test('waiters get their slot in arrival order; a newcomer never overtakes the queue', async () => {
    const gate = new HashGate({ concurrency: 1, queue: 10 })
    const first = latch()
    const order: number[] = []
    const holder = gate.run(async () => {
      await first.opened
      order.push(0)
    })
    const waiters = [1, 2, 3, 4, 5].map((n) => gate.run(async () => void order.push(n)))
    expect(gate.stats()).toMatchObject({ running: 1, waiting: 5 })
    first.open()
    await holder
    // The slot went straight to waiter 1; a caller arriving now queues behind 2..5.
    const late = gate.run(async () => void order.push(6))
    await Promise.all([...waiters, late])
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6])
  })

  test('with K running and Q waiting the next caller is refused at once: 503 service_unavailable, Retry-After', async () => {
    const gate = new HashGate({ concurrency: 1, queue: 2 })
    const held = latch()
    const admitted = [0, 1, 2].map(() => gate.run(() => held.opened))
    const error = refusal(() => gate.admit())
    expect(error.status).toBe(503)
    expect(error.code).toBe('service_unavailable')
    expect(error.headers).toEqual({ 'retry-after': '1' })
    // run() refuses the same way, without running the work.
    let ran = false
    expect((await refusalOf(gate.run(async () => void (ran = true)))).code).toBe('service_unavailable')
    expect(ran).toBe(false)
    expect(gate.stats()).toEqual({ concurrency: 1, queue: 2, running: 1, waiting: 2, refused: 2 })
    held.open()
    await Promise.all(admitted)
    // Drained: admitted again.
    await gate.run(async () => undefined)
    expect(gate.stats()).toMatchObject({ running: 0, waiting: 0 })
  })

  test('queue 0 refuses whenever every slot runs', async () => {
    const gate = new HashGate({ concurrency: 2, queue: 0 })
    const a = gate.admit()
    const b = gate.admit()
    expect(refusal(() => gate.admit()).status).toBe(503)
    a.cancel()
    b.cancel()
    expect(gate.stats()).toMatchObject({ running: 0, waiting: 0 })
  })

  test('a throwing hash releases its slot, whether it ran at once or after waiting', async () => {
    const gate = new HashGate({ concurrency: 1, queue: 1 })
    const held = latch()
    const first = gate.run(async () => {
      await held.opened
      throw new Error('argon2 failed')
    })
    const second = gate.run(async () => {
      throw new Error('second failed')
    })
    expect(gate.stats()).toMatchObject({ running: 1, waiting: 1 })
    held.open()
    const [a, b] = await Promise.allSettled([first, second])
    expect(a.status === 'rejected' && String(a.reason)).toBe('Error: argon2 failed')
    expect(b.status === 'rejected' && String(b.reason)).toBe('Error: second failed')
    expect(gate.stats()).toMatchObject({ running: 0, waiting: 0 })
    expect(await gate.run(async () => 'still works')).toBe('still works')
  })

  test('tickets: cancel frees a held slot or a queue place, once; a ticket runs at most once', async () => {
    const gate = new HashGate({ concurrency: 1, queue: 1 })
    const holding = gate.admit()
    const waiting = gate.admit()
    expect(refusal(() => gate.admit()).status).toBe(503)
    waiting.cancel()
    waiting.cancel()
    expect(gate.stats()).toMatchObject({ running: 1, waiting: 0 })
    holding.cancel()
    holding.cancel()
    expect(gate.stats()).toMatchObject({ running: 0, waiting: 0 })

    const ticket = gate.admit()
    expect(await ticket.run(async () => 7)).toBe(7)
    ticket.cancel() // after run: nothing to give back
    expect(gate.stats()).toMatchObject({ running: 0, waiting: 0 })
    await expect(ticket.run(async () => 8)).rejects.toThrow('HashTicket used twice')
    expect(gate.stats()).toMatchObject({ running: 0, waiting: 0 })
  })

  test('a cancelled waiter hands no slot: the next waiter is served', async () => {
    const gate = new HashGate({ concurrency: 1, queue: 2 })
    const holder = gate.admit()
    const leaving = gate.admit()
    const staying = gate.admit()
    leaving.cancel()
    const result = staying.run(async () => 'served')
    holder.cancel()
    expect(await result).toBe('served')
    expect(gate.stats()).toMatchObject({ running: 0, waiting: 0 })
  })

  test('defaults: one slot per CPU (capped), eight waiters per slot; sizes are validated', () => {
    const gate = new HashGate()
    expect(gate.concurrency).toBe(Math.min(availableParallelism(), MAX_DEFAULT_CONCURRENCY))
    expect(gate.concurrency).toBe(defaultHashConcurrency())
    expect(gate.queue).toBe(QUEUE_PER_SLOT * gate.concurrency)
    expect(new HashGate({ concurrency: 4 }).queue).toBe(32)
    expect(() => new HashGate({ concurrency: 0 })).toThrow(RangeError)
    expect(() => new HashGate({ concurrency: 1, queue: -1 })).toThrow(RangeError)
    expect(() => new HashGate({ concurrency: 1.5 })).toThrow(RangeError)
  })
})

describe('argon2id through the gate', () => {
  test('a gate hashes at PASSWORD_HASH_PARAMS unless given a hashCost (test apps, test/helpers/app.ts), which its tickets and dummy use too', async () => {
    const real = new HashGate({ concurrency: 1 })
    expect(real.hashCost).toBeUndefined()
    expect(await hashPassword('correct horse battery', real)).toStartWith(`$argon2id$v=19$m=${PASSWORD_HASH_PARAMS.memoryCost},t=${PASSWORD_HASH_PARAMS.timeCost},`)
    expect(await hashPassword('correct horse battery')).toStartWith(`$argon2id$v=19$m=${PASSWORD_HASH_PARAMS.memoryCost},t=${PASSWORD_HASH_PARAMS.timeCost},`)
    const cheap = new HashGate({ concurrency: 1, hashCost: TEST_HASH_COST })
    const hash = await hashPassword('correct horse battery', cheap)
    expect(hash).toStartWith(`$argon2id$v=19$m=${TEST_HASH_COST.memoryCost},t=${TEST_HASH_COST.timeCost},`)
    expect(await hashPassword('correct horse battery', cheap.admit())).toStartWith(`$argon2id$v=19$m=${TEST_HASH_COST.memoryCost},`)
    // Verified from the stored parameters, through any gate.
    expect(await verifyPassword('correct horse battery', hash, real)).toBe(true)
    expect(await verifyPassword('wrong horse battery', hash, cheap)).toBe(false)
    expect(await verifyAgainstDummy('correct horse battery', cheap)).toBe(false)
    expect(await verifyAgainstDummy('correct horse battery', cheap.admit())).toBe(false)
  })

  test('hashPassword, verifyPassword and verifyAgainstDummy each take a slot and are refused alike when it is full', async () => {
    const gate = new HashGate({ concurrency: 1, queue: 0 })
    const hash = await hashPassword('correct horse battery', gate)
    expect(hash).toStartWith('$argon2id$')
    expect(await verifyPassword('correct horse battery', hash, gate)).toBe(true)
    expect(await verifyAgainstDummy('correct horse battery', gate)).toBe(false)

    const blocker = gate.admit()
    const refusals = await Promise.all([
      refusalOf(hashPassword('x', gate)),
      refusalOf(verifyPassword('x', hash, gate)),
      // An unknown user is refused exactly like a known one.
      refusalOf(verifyAgainstDummy('x', gate)),
    ])
    for (const error of refusals) {
      expect(error.toEnvelope()).toEqual({ error: { code: 'service_unavailable', message: error.message, status: 503 } })
      expect(error.headers).toEqual({ 'retry-after': '1' })
    }
    blocker.cancel()
    expect(await verifyPassword('wrong', hash, gate)).toBe(false)
    expect(gate.stats()).toMatchObject({ running: 0, waiting: 0, refused: 3 })
  })

  test('refuseIfFull refuses exactly when admit would, with the same 503, and takes nothing', () => {
    for (const [concurrency, queue] of [[1, 0], [1, 2], [2, 0], [2, 3]] as const) {
      const gate = new HashGate({ concurrency, queue })
      const tickets = []
      for (let i = 0; i < concurrency + queue + 2; i++) {
        const { running, waiting } = gate.stats()
        let early: AppError | undefined
        try {
          gate.refuseIfFull()
        } catch (error) {
          early = error as AppError
        }
        expect(gate.stats()).toMatchObject({ running, waiting })
        if (early) {
          expect(early.code).toBe('service_unavailable')
          expect(early.headers).toEqual({ 'retry-after': '1' })
          expect(() => gate.admit()).toThrow()
        } else {
          tickets.push(gate.admit())
        }
      }
      expect(tickets.length).toBe(concurrency + queue)
      for (const ticket of tickets) ticket.cancel()
      expect(() => gate.refuseIfFull()).not.toThrow()
    }
  })

  test('while it refuses, the gate collects garbage at most once every OVERLOAD_COLLECT_EVERY_MS, and never while it admits', () => {
    let clock = 1000
    let collections = 0
    const gate = new HashGate({ concurrency: 1, queue: 0, collectGarbage: () => collections++, now: () => clock })
    const held = gate.admit()
    expect(collections).toBe(0)
    for (let i = 0; i < 100; i++) expect(() => gate.refuseIfFull()).toThrow()
    expect(() => gate.admit()).toThrow()
    expect(collections).toBe(1)
    clock += OVERLOAD_COLLECT_EVERY_MS - 1
    expect(() => gate.admit()).toThrow()
    expect(collections).toBe(1)
    clock += 1
    expect(() => gate.refuseIfFull()).toThrow()
    expect(collections).toBe(2)
    held.cancel()
    clock += 10 * OVERLOAD_COLLECT_EVERY_MS
    gate.admit().cancel()
    expect(collections).toBe(2)
  })

  test('a hash that throws inside argon2 releases its slot', async () => {
    const gate = new HashGate({ concurrency: 1, queue: 0 })
    // Not a PHC string: Bun.password.verify throws.
    await expect(verifyPassword('x', 'not-a-hash', gate)).rejects.toThrow()
    await expect(verifyPassword('x', 'not-a-hash', gate)).rejects.toThrow()
    expect(gate.stats()).toMatchObject({ running: 0, waiting: 0, refused: 0 })
  })
})
