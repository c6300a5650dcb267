// Invariant: the security-event chain never forks, even when two instances
// on one PostgreSQL flush at once. Each flush reads the head and appends
// after it in one transaction; were two flushes to read the same head, both
// would chain from it and `security verify-log` would fail. Two storages on
// one database here, each with its own pool, as two instances would have.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { PostgresStorage } from '../../src/db/postgres/storage'
import { chainHash, GENESIS_HASH, SecurityEventLog, verifySecurityLog } from '../../src/modules/security/event-log'
import type { ChainedSecurityEvent, ChainLink, SecurityEvent } from '../../src/modules/security/store'
import { inProcessWakeups } from '../../src/modules/events/wakeups'
import { systemClock } from '../../src/shared/clock'
import { createLogger } from '../../src/shared/logger'
import { testDatabaseEnv } from '../helpers/app'
import { describeOnEngine } from '../helpers/engine'

const KEY = 'chain-key-shared-by-both-instances'
const logger = createLogger('silent')

/**
 * `ids` as events chained onto `head`. Their details have keys out of any
 * sorted order, nesting and a NUL: the chain hashes them as written, so they
 * must come back as written.
 */
function chained(head: ChainLink | null, ids: string[]): ChainedSecurityEvent[] {
  let prev = head?.hash ?? GENESIS_HASH
  return ids.map((id) => {
    const event: SecurityEvent = { id, userId: null, source: 'server', kind: 'TEST', level: 'SAFE', details: { id, where: { zone: 'b', at: [1, null] }, note: 'nul \u0000 kept' }, occurredAt: new Date(), receivedAt: new Date() }
    const hash = chainHash(KEY, prev, event)
    const link = { ...event, prevHash: prev, hash }
    prev = hash
    return link
  })
}

describeOnEngine('postgres', 'two instances appending to one security-event chain', () => {
  let a!: PostgresStorage
  let b!: PostgresStorage
  beforeAll(async () => {
    const { ARENA_DATABASE_URL: url } = await testDatabaseEnv()
    a = await PostgresStorage.open({ url: url!, pool: 4, wakeups: inProcessWakeups(), logger })
    b = await PostgresStorage.open({ url: url!, pool: 4, wakeups: inProcessWakeups(), logger })
  })
  afterAll(async () => {
    await a?.close()
    await b?.close()
  })

  test('a flush that reads the head while another holds it chains after that one, never beside it', async () => {
    await a.write(async (tx) => void (await tx.security.appendChained(chained(await tx.security.chainHead(), ['first']))))
    const retriesBefore = a.retries + b.retries
    let headRead!: () => void
    const aHasHead = new Promise<void>((resolve) => (headRead = resolve))
    // A reads the head and keeps its transaction open a while before appending;
    // B reads the head in the meantime, on its own connection and pool.
    const first = a.write(async (tx) => {
      const head = await tx.security.chainHead()
      headRead()
      await Bun.sleep(300)
      await tx.security.appendChained(chained(head, ['a1', 'a2']))
    })
    await aHasHead
    const second = b.write(async (tx) => {
      await tx.security.appendChained(chained(await tx.security.chainHead(), ['b1']))
    })
    await Promise.all([first, second])

    const rows = await a.read.security.securityEventsAfter(0, 100)
    expect(rows.map((row) => row.id)).toEqual(['first', 'a1', 'a2', 'b1'])
    expect(rows[3]!.prevHash).toBe(rows[2]!.hash)
    // B lost the race once and ran again from the new head.
    expect(a.retries + b.retries - retriesBefore).toBe(1)
    expect(await verifySecurityLog(b.read.security, KEY)).toEqual({ ok: true, rows: 4 })
  })

  test('two event logs flushing small batches as fast as they can: one unbroken chain of every event', async () => {
    const logs = [a, b].map((storage) => new SecurityEventLog({ storage, clock: systemClock, logger, key: KEY }, { batchSize: 7, flushMs: 2 }))
    const before = (await verifySecurityLog(a.read.security, KEY)).rows
    const perLog = 400
    await Promise.all(
      logs.map(async (log, n) => {
        for (let i = 0; i < perLog; i++) {
          log.record({ userId: null, source: 'server', kind: 'TEST', level: 'SAFE', details: { log: n, i } })
          if (i % 5 === 0) await Bun.sleep(1)
        }
        await log.close()
      }),
    )
    expect(logs.map((log) => log.stats().shed)).toEqual([0, 0])
    expect(await verifySecurityLog(a.read.security, KEY)).toEqual({ ok: true, rows: before + 2 * perLog })
  }, 30_000)
})
