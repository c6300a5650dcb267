// Invariant: batchTurn answers every call with its own output: the calls made
// in one event-loop turn go to `run` together, in call order, and each gets the
// output at its index; a batch holds at most maxSize calls; a batch that fails
// (run throws, rejects, or answers the wrong number of outputs) rejects its own
// callers and no one else's; nothing of one batch is kept for the next.
import { describe, expect, test } from 'bun:test'
import { batchTurn } from '../../src/shared/batch'

/** A `run` that records each batch and answers each input doubled. */
function recorder() {
  const batches: number[][] = []
  const run = async (inputs: readonly number[]) => {
    batches.push([...inputs])
    return inputs.map((n) => n * 2)
  }
  return { batches, run }
}

describe('batchTurn', () => {
  test('the calls of one turn make one batch, in call order, each answered with its own output', async () => {
    const { batches, run } = recorder()
    const double = batchTurn(run, { maxSize: 100 })
    const answers = await Promise.all([1, 2, 3, 4, 5].map((n) => double(n)))
    expect(answers).toEqual([2, 4, 6, 8, 10])
    expect(batches).toEqual([[1, 2, 3, 4, 5]])
  })

  test('calls made from separate timers (separate turns) are separate batches', async () => {
    const { batches, run } = recorder()
    const double = batchTurn(run, { maxSize: 100 })
    const first = double(1)
    await Bun.sleep(5)
    const second = double(2)
    expect(await Promise.all([first, second])).toEqual([2, 4])
    expect(batches).toEqual([[1], [2]])
  })

  test('calls made in the turn of promise callbacks (after an await) join the same batch', async () => {
    const { batches, run } = recorder()
    const double = batchTurn(run, { maxSize: 100 })
    const later = async (n: number) => {
      await Promise.resolve()
      await Promise.resolve()
      return double(n)
    }
    expect(await Promise.all([double(1), later(2), later(3)])).toEqual([2, 4, 6])
    expect(batches).toEqual([[1, 2, 3]])
  })

  test('a batch holds at most maxSize calls: the call that fills it sends it, the next starts another', async () => {
    const { batches, run } = recorder()
    const double = batchTurn(run, { maxSize: 3 })
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => double(i)))
    expect(answers).toEqual([0, 2, 4, 6, 8, 10, 12, 14])
    expect(batches).toEqual([[0, 1, 2], [3, 4, 5], [6, 7]])
  })

  test("a failed batch rejects its own callers with run's error, and no one else's", async () => {
    let calls = 0
    const failing = new Error('the statement failed')
    const run = async (inputs: readonly number[]) => {
      calls++
      if (inputs.includes(13)) throw failing
      return inputs.map((n) => n * 2)
    }
    const double = batchTurn(run, { maxSize: 2 })
    const results = await Promise.allSettled([double(1), double(2), double(13), double(4), double(5)])
    expect(calls).toBe(3)
    expect(results).toEqual([
      { status: 'fulfilled', value: 2 },
      { status: 'fulfilled', value: 4 },
      { status: 'rejected', reason: failing },
      { status: 'rejected', reason: failing },
      { status: 'fulfilled', value: 10 },
    ])
    // The failure is not kept: the next turn's batch runs afresh.
    expect(await double(6)).toBe(12)
  })

  test('a run that throws synchronously rejects its batch (it does not throw at the caller)', async () => {
    const failing = new Error('thrown before any promise')
    const fail = batchTurn<number, number>(() => {
      throw failing
    }, { maxSize: 10 })
    const results = await Promise.allSettled([fail(1), fail(2)])
    expect(results).toEqual([
      { status: 'rejected', reason: failing },
      { status: 'rejected', reason: failing },
    ])
  })

  test('a run that answers the wrong number of outputs rejects every call of its batch rather than answering one with another’s', async () => {
    const short = batchTurn(async (inputs: readonly number[]) => inputs.slice(1), { maxSize: 10 })
    const results = await Promise.allSettled([short(1), short(2), short(3)])
    expect(results.every((result) => result.status === 'rejected')).toBe(true)
    expect(String((results[0] as PromiseRejectedResult).reason)).toContain('3 calls answered with 2 outputs')
  })

  test('batches run concurrently: a slow batch does not hold the next one', async () => {
    const { promise: slowGate, resolve: openSlow } = Promise.withResolvers<void>()
    const run = async (inputs: readonly number[]) => {
      if (inputs[0] === 1) await slowGate
      return inputs
    }
    const echo = batchTurn(run, { maxSize: 10 })
    const slow = echo(1)
    await Bun.sleep(5)
    expect(await echo(2)).toBe(2)
    openSlow()
    expect(await slow).toBe(1)
  })

  test('maxSize below 1 is refused', () => {
    expect(() => batchTurn(async (inputs: readonly number[]) => inputs, { maxSize: 0 })).toThrow('maxSize')
  })
})
