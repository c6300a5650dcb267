// U+0000 in text: SQLite stores it, PostgreSQL refuses it (22021). Either way
// the client gets an answer in the envelope, never a 500: on PostgreSQL a 422
// naming the character, on SQLite whatever the route answers for that value.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { onEngine, postJson, req, type TestApp } from '../helpers/app'
import { admin, createArenaApp } from '../helpers/arena'

let ctx!: TestApp
beforeAll(async () => {
  ctx = await createArenaApp()
})
afterAll(() => ctx.close())

async function envelopeOf(res: Response) {
  const body = (await res.json()) as { error?: { code: string; status: number } }
  return { status: res.status, code: body.error?.code }
}

test('a game named with U+0000: created on SQLite, 422 validation_failed on PostgreSQL', async () => {
  const res = await ctx.handle(postJson('/api/v1/admin/games', { name: 'duel\u0000' }, admin))
  if (onEngine('postgres')) expect(await envelopeOf(res)).toEqual({ status: 422, code: 'validation_failed' })
  else expect(res.status).toBe(201)
})

test('U+0000 in a path parameter and in a login identifier is never a 500', async () => {
  const lookup = await ctx.handle(req('/api/v1/tournaments/trn_%00', { headers: admin }))
  expect(lookup.status).toBeGreaterThanOrEqual(400)
  expect(lookup.status).toBeLessThan(500)
  const login = await ctx.handle(postJson('/api/v1/user/login', { identifier: 'a\u0000b', password: 'correct horse battery' }))
  expect(login.status).toBeGreaterThanOrEqual(400)
  expect(login.status).toBeLessThan(500)
})
