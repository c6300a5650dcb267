// Access-token verification remembers tokens that passed (by SHA-256 of the
// whole token), so a client's repeated requests skip the HMAC and JSON work.
// Invariant: remembering changes nothing a caller can observe: a remembered
// token still expires on time, a token one byte away from a remembered one is
// still refused, and a token evicted from a full cache still verifies.
import { describe, expect, test } from 'bun:test'
import { createAccessTokens, VERIFIED_TOKEN_CACHE } from '../../src/modules/auth/access-tokens'
import { ManualClock } from '../../src/shared/clock'
import { signingKey } from '../../src/secrets'

function tokens(ttlS = 900) {
  const clock = new ManualClock()
  return { clock, at: createAccessTokens({ keys: () => [signingKey('x'.repeat(48))], ttlS, maxExpiredS: 3600, clock }) }
}

describe('access-token verification, remembered', () => {
  test('a remembered token still expires at exp, and the allowExpired window still ends', async () => {
    const { clock, at } = tokens(60)
    const token = await at.sign({ userId: 'usr_1', sessionId: 'ses_1' })
    expect(await at.verify(token)).toEqual({ userId: 'usr_1', sessionId: 'ses_1' })
    clock.advance(59_000)
    expect(await at.verify(token)).toEqual({ userId: 'usr_1', sessionId: 'ses_1' })
    clock.advance(1_000)
    expect(await at.verify(token)).toBeNull()
    expect(await at.verify(token, { allowExpired: true })).toEqual({ userId: 'usr_1', sessionId: 'ses_1' })
    clock.advance(3_600_000)
    expect(await at.verify(token, { allowExpired: true })).toBeNull()
  })

  test('a token that expired before it was first seen is refused, and refused again once remembered', async () => {
    const { clock, at } = tokens(60)
    const token = await at.sign({ userId: 'usr_1', sessionId: 'ses_1' })
    clock.advance(61_000)
    expect(await at.verify(token)).toBeNull()
    expect(await at.verify(token, { allowExpired: true })).not.toBeNull()
    expect(await at.verify(token)).toBeNull()
  })

  test('every one-character change of a remembered token is refused', async () => {
    const { at } = tokens()
    const token = await at.sign({ userId: 'usr_1', sessionId: 'ses_1' })
    expect(await at.verify(token)).not.toBeNull()
    for (let i = 0; i < token.length; i++) {
      const swapped = token[i] === 'A' ? 'B' : 'A'
      expect({ i, claims: await at.verify(token.slice(0, i) + swapped + token.slice(i + 1)) }).toEqual({ i, claims: null })
    }
    expect(await at.verify(`${token}A`)).toBeNull()
    expect(await at.verify(token.slice(0, -1))).toBeNull()
    expect(await at.verify(token)).not.toBeNull()
  })

  test('when more tokens pass than the cache holds, the oldest are evicted and still verify', async () => {
    const { at } = tokens()
    const first = await at.sign({ userId: 'usr_first', sessionId: 'ses_first' })
    expect(await at.verify(first)).toEqual({ userId: 'usr_first', sessionId: 'ses_first' })
    for (let i = 0; i < VERIFIED_TOKEN_CACHE; i++) {
      const token = await at.sign({ userId: `usr_${i}`, sessionId: `ses_${i}` })
      expect((await at.verify(token))?.userId).toBe(`usr_${i}`)
    }
    // `first` was evicted: verified from scratch, with the same answer.
    expect(await at.verify(first)).toEqual({ userId: 'usr_first', sessionId: 'ses_first' })
  })
})
