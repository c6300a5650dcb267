// Invariant: two instances on one database (two PostgreSQL pools on one
// database, or two SQLite connections on one file) hand out an approved
// device code's tokens once (contract §13, §12): polls of one code racing on
// both instances give exactly one 200, whichever instance asked for the code
// and whichever one the player approved it on.
import { describe, expect, test } from 'bun:test'
import type { TestApp } from '../helpers/app'
import { twoInstances } from '../helpers/arena'
import { me, registerUser } from '../helpers/auth'
import { answerOnPage, expectError, pollDevice, startDevice } from '../helpers/device-codes'

const { one, two } = await twoInstances()
const instance = (i: number): TestApp => (i % 2 === 0 ? one : two)

describe('two instances on one database', () => {
  test('polls of one approved code racing on both instances: exactly one gets tokens, and they work on either', async () => {
    const player = await registerUser(one)
    for (let round = 0; round < 5; round++) {
      const { deviceCode, userCode } = await startDevice(instance(round))
      expect((await answerOnPage(instance(round + 1), player.username, userCode)).status).toBe(200)
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => pollDevice(instance(i), deviceCode)))
      const granted = answers.filter((res) => res.status === 200)
      expect(granted.length).toBe(1)
      expect(answers.filter((res) => res.status !== 200).every((res) => res.status === 400)).toBe(true)
      const tokens = (await granted[0]!.json()) as { accessToken: string; user: { id: string } }
      expect(tokens.user.id).toBe(player.id)
      expect((await me(two, tokens.accessToken)).status).toBe(200)
      expect((await me(one, tokens.accessToken)).status).toBe(200)
      for (const app of [one, two]) app.clock.advance(60_000)
      await expectError(await pollDevice(instance(round + 1), deviceCode), 400, 'expired_token')
    }
  }, 120_000)

  test('a code denied on one instance is access_denied on the other', async () => {
    const player = await registerUser(two)
    const { deviceCode, userCode } = await startDevice(one)
    expect((await answerOnPage(two, player.username, userCode, 'deny')).status).toBe(200)
    await expectError(await pollDevice(one, deviceCode), 400, 'access_denied')
  })
})
