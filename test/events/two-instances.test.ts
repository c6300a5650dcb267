// Invariant: with two instances writing to one database, a poll's cursor never
// skips an event: an event that commits after another never carries a lower
// seq. And a poll waiting on one instance wakes when the other writes.
import { describe, expect, test } from 'bun:test'
import type { TestApp } from '../helpers/app'
import { describeOnEngine } from '../helpers/engine'
import { twoInstances, players } from '../helpers/arena'

const { one, two } = await twoInstances()

const credited = (reference: string) => ({ topic: 'wallet', type: 'wallet.credited', data: { asset: 'USDC', amount: '1', reference, balance: '1' } }) as const

/** Appends an event for `userId` on `app`, then holds its unit of work open until `release` resolves. */
function appendAndHold(app: TestApp, userId: string, reference: string, release: Promise<void>) {
  return app.services.storage.write(async (tx) => {
    await tx.events.append({ userId, ...credited(reference) }, app.clock.now())
    await release
  })
}

// PostgreSQL only: on SQLite one writer at a time gives this by itself, and
// two apps in one process cannot show it (bun:sqlite waits for the file lock
// on the JavaScript thread, so the holder never gets to commit).
describeOnEngine('postgres', 'two instances on one database', () => {
  test('an event appended first but committed last is not skipped by a cursor read in between', async () => {
    const [p] = await players(one, 1)
    const userId = p!.userId
    const start = (await one.services.storage.read.events.page(userId, 0, ['wallet'], 100)).at(-1)?.seq ?? 0
    let release!: () => void
    // The first instance appends (its seq drawn) and keeps its transaction open...
    const first = appendAndHold(one, userId, 'first', new Promise((resolve) => (release = resolve)))
    await Bun.sleep(100)
    // ...while the second appends and tries to commit.
    const second = appendAndHold(two, userId, 'second', Promise.resolve())
    await Bun.sleep(300)
    // A poll now takes its cursor from what has committed. Had the second
    // event committed with the higher seq, the cursor would be past the first.
    const midway = await two.services.storage.read.events.page(userId, start, ['wallet'], 100)
    const cursor = midway.at(-1)?.seq ?? start
    release()
    await Promise.all([first, second])
    const rest = await one.services.storage.read.events.page(userId, cursor, ['wallet'], 100)
    const seen = [...midway, ...rest].map((e) => e.data.reference)
    expect(seen.sort()).toEqual(['first', 'second'])
    // Commit order is seq order.
    expect(rest.map((e) => e.data.reference)).toEqual(['first', 'second'])
  })

  test('a poll waiting on one instance wakes within 100 ms of a commit on the other', async () => {
    const [p] = await players(one, 1)
    const { cursor } = await two.services.events.poll({ userId: p!.userId, waitS: 0 })
    const waiting = two.services.events.poll({ userId: p!.userId, after: cursor, waitS: 5 })
    await Bun.sleep(150)
    const wrote = performance.now()
    await one.services.storage.write((tx) => tx.events.append({ userId: p!.userId, ...credited('across') }, one.clock.now()))
    const page = await waiting
    // Far under the 1 s re-read that finds what no wake-up announced.
    expect(performance.now() - wrote).toBeLessThan(100 + 50) // the write itself included
    expect(page.events.map((e) => e.data.reference)).toEqual(['across'])
  })
})
