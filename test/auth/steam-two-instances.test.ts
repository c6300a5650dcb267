// Invariant: one Steam player is one account, whichever instance each of
// their sign-ins reaches and however they race. Several first sign-ins of the
// same new SteamID with `create`, at once on two instances on one database,
// all succeed with one account: exactly one answers `created: true`, and the
// database holds one `steam` identity for the SteamID.
import { afterAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { postJson, type TestApp } from '../helpers/app'
import { twoInstances } from '../helpers/arena'
import { startSteamStub } from '../helpers/steam-stub'

const steam = startSteamStub()
afterAll(() => steam.close())
const { one, two } = await twoInstances(steam.env())
const instance = (i: number): TestApp => (i % 2 === 0 ? one : two)

describe('two instances on one database', () => {
  test('racing first sign-ins of one new Steam player create one account; all of them sign in to it', async () => {
    for (let round = 0; round < 5; round++) {
      const { steamid } = steam.player()
      // A ticket per sign-in, as a game asks for one per attempt.
      const answers = await Promise.all(
        Array.from({ length: 6 }, async (_, i) => {
          const res = await instance(i).handle(postJson('/api/v1/user/login/steam', { ticket: steam.player(steamid).ticket, create: true }))
          return { status: res.status, body: (await res.json()) as { created: boolean; user: { id: string } } }
        }),
      )
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200])
      expect(answers.filter((a) => a.body.created).length).toBe(1)
      expect(new Set(answers.map((a) => a.body.user.id)).size).toBe(1)
      const { identities } = one.peek.tables
      const rows = await one.peek.db.select().from(identities).where(and(eq(identities.provider, 'steam'), eq(identities.subject, steamid)))
      expect(rows.map((r) => r.userId)).toEqual([answers[0]!.body.user.id])
    }
  }, 60_000)
})
