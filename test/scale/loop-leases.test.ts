// Background loops on several instances (housekeeping, the withdrawal
// resumer): one runner at a time among every instance on the database, and
// a runner that dies hands the loop over. On SQLite a data dir has one
// server, and the loops are leased within the process (checked too).
import { describe, expect, test } from 'bun:test'
import { testOnEngine } from '../helpers/engine'
import { twoInstances } from '../helpers/arena'

const { one, two } = await twoInstances()

/** A tick that runs until released. */
function heldTick() {
  let release!: () => void
  let started!: () => void
  const running = new Promise<void>((resolve) => (started = resolve))
  const released = new Promise<void>((resolve) => (release = resolve))
  return { running, release, work: async () => void (started(), await released) }
}

describe('loop leases', () => {
  test('within one instance a loop does not run twice at once', async () => {
    const tick = heldTick()
    const first = one.storage.loopLeases.runExclusive('housekeeping', tick.work)
    await tick.running
    let ran = false
    expect(await one.storage.loopLeases.runExclusive('housekeeping', async () => void (ran = true))).toBe(false)
    expect(ran).toBe(false)
    tick.release()
    expect(await first).toBe(true)
    expect(await one.storage.loopLeases.runExclusive('housekeeping', async () => void (ran = true))).toBe(true)
    expect(ran).toBe(true)
  })

  testOnEngine('postgres', 'two instances: one runner at a time per loop, other loops free; released, the other runs', async () => {
    const tick = heldTick()
    const first = one.storage.loopLeases.runExclusive('withdrawal resume', tick.work)
    await tick.running
    let ranOnTwo = 0
    expect(await two.storage.loopLeases.runExclusive('withdrawal resume', async () => void ranOnTwo++)).toBe(false)
    // Another loop is its own lock.
    expect(await two.storage.loopLeases.runExclusive('housekeeping', async () => void ranOnTwo++)).toBe(true)
    expect(ranOnTwo).toBe(1)
    tick.release()
    expect(await first).toBe(true)
    expect(await two.storage.loopLeases.runExclusive('withdrawal resume', async () => void ranOnTwo++)).toBe(true)
    expect(ranOnTwo).toBe(2)
  })

  testOnEngine('postgres', 'an instance that dies holding a loop hands it over: its lock goes with its connection', async () => {
    const tick = heldTick()
    const held = one.storage.loopLeases.runExclusive('housekeeping', tick.work)
    await tick.running
    expect(await two.storage.loopLeases.runExclusive('housekeeping', async () => {})).toBe(false)
    // The holder's connection is cut, as when its process is killed.
    const [terminated] = await two.postgres.sql<{ cut: number }[]>`
      SELECT count(pg_terminate_backend(pid))::int AS cut FROM pg_stat_activity
      WHERE datname = current_database() AND application_name = 'arena loops' AND pid IN (SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted)`
    expect(terminated?.cut).toBe(1)
    let taken = false
    for (let i = 0; i < 50 && !taken; i++) {
      taken = await two.storage.loopLeases.runExclusive('housekeeping', async () => {})
      if (!taken) await Bun.sleep(20)
    }
    expect(taken).toBe(true)
    tick.release()
    await held
  })
})
