// Invariant: an event page (EventsStore.page: a user's events after a cursor,
// in its topics, at most `limit`, oldest first) is the same whether it is read
// alone, with other pages of the same turn (on PostgreSQL one statement for
// the turn, src/db/postgres/stores/events.ts) or in a unit of work; pages asked
// together never answer with another user's, cursor's or topic's events, and
// a page asked twice gives each caller its own events.
import { afterAll, expect, test } from 'bun:test'
import { createArenaApp } from '../helpers/arena'
import type { EventTopic } from '../../src/modules/events/catalogue'

const ctx = await createArenaApp()
afterAll(() => ctx.close())

test('pages read together are each the page read alone', async () => {
  const now = new Date('2026-04-05T06:07:08.901Z')
  const [ann, ben] = ['usr_' + '7a'.repeat(16), 'usr_' + '8b'.repeat(16)]
  await ctx.storage.write(async (tx) => {
    for (const [id, name] of [[ann, 'ann_pages'], [ben, 'ben_pages']] as const) {
      await tx.auth.createUser({ id, email: `${name}@example.test`, emailKey: `${name}@example.test`, username: name, usernameKey: name, country: 'DE', createdAt: now, emailVerifiedAt: null, passwordHash: 'x', identityProviders: 'password' })
    }
  })
  // Each user: session and account events, interleaved, one unit of work each.
  for (let i = 0; i < 6; i++) {
    for (const userId of [ann, ben]) {
      await ctx.storage.write(async (tx) => {
        if (i % 2 === 0) await tx.events.append({ userId, topic: 'session', type: 'session.login', data: { sessionId: `ses_${userId}_${i}`, newDevice: i === 0 } }, now)
        else await tx.events.append({ userId, topic: 'account', type: 'account.password_changed', data: { revoked: i } }, now)
      })
    }
  }
  const { events } = ctx.storage.read
  const first = await events.page(ann, 0, ['session', 'account'], 100)
  expect(first).toHaveLength(6)
  const asks: [string, number, EventTopic[], number][] = [
    [ann, 0, ['session', 'account'], 100],
    [ben, 0, ['session'], 100],
    [ann, first[1]!.seq, ['account'], 100],
    [ann, 0, ['session', 'account'], 2],
    [ben, 0, ['wallet'], 100],
    ['usr_' + '9c'.repeat(16), 0, ['session'], 100],
    [ann, first[5]!.seq, ['session', 'account'], 100],
    [ann, 0, ['session', 'account'], 100],
  ]
  const alone = []
  for (const ask of asks) alone.push(await events.page(...ask))
  const together = await Promise.all(asks.map((ask) => events.page(...ask)))
  expect(together).toEqual(alone)
  expect(alone.map((page) => page.length)).toEqual([6, 3, 2, 2, 0, 0, 0, 6])
  expect(together[1]!.every((event) => event.topic === 'session' && (event.data.sessionId as string).startsWith(`ses_${ben}`))).toBe(true)
  expect(together[2]!.map((event) => event.data.revoked)).toEqual([3, 5])
  // The same page asked twice: equal, and neither caller holds the other's objects.
  expect(together[7]![0]).not.toBe(together[0]![0])
  expect(together[7]![0]!.data).not.toBe(together[0]![0]!.data)
  // In a unit of work, on its own transaction: the same page.
  expect(await ctx.storage.write((tx) => tx.events.page(ben, 0, ['session'], 100))).toEqual(alone[1]!)
})
