// The matchmaking store is written once (src/db/stores/matchmaking.ts);
// SQLite's subclass (src/db/sqlite/stores/matchmaking.ts) compiles the
// matcher's read of a queue's open tickets once per connection. It may be
// faster; it may not answer differently: both run on the same rows here.
import { afterAll, expect } from 'bun:test'
import { MatchmakingQueries } from '../../src/db/stores/matchmaking'
import type { QueryScope } from '../../src/db/stores/scope'
import { testOnEngine } from '../helpers/engine'
import { createArenaApp, createGame, players } from '../helpers/arena'
import { createQueue, joined, leaveQueue } from '../helpers/matchmaking'

const ctx = await createArenaApp()
afterAll(() => ctx.close())

testOnEngine('sqlite', 'waitingTickets: the compiled statement answers as the query written once (order, fields, open ones only)', async () => {
  const { game } = await createGame(ctx, 'Overrides')
  const queue = await createQueue(ctx, game.id)
  const people = await players(ctx, 5)
  for (const [i, p] of people.entries()) {
    await joined(ctx, game.id, 'ranked', p)
    // Two join at the same instant: the id breaks the tie.
    if (i % 2 === 0) ctx.clock.advance(1_500)
  }
  expect((await leaveQueue(ctx, game.id, 'ranked', people[2]!)).status).toBe(200)
  const engine = ctx.storage.read.matchmaking
  expect(engine.constructor.name).not.toBe(MatchmakingQueries.name)
  const once = new MatchmakingQueries((engine as unknown as { scope: QueryScope }).scope)
  const compiled = await engine.waitingTickets(queue.id)
  expect(compiled).toHaveLength(4)
  expect(compiled).toEqual(await once.waitingTickets(queue.id))
  expect(compiled[0]!.waitingSince).toBeInstanceOf(Date)
  expect(await engine.waitingTickets('que_none')).toEqual([])
})
