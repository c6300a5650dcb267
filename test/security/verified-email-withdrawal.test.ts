// Contract §8: with ARENA_REQUIRE_VERIFIED_EMAIL on, a PIN verify (a
// withdrawal) of an account whose email is unverified answers 403
// email_not_verified, before anything is judged: the PIN session is not
// consumed, no PIN failure is counted, nothing is debited. Once the email is
// verified the same session works.
import { afterAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { createArenaApp } from '../helpers/arena'
import { errorCode, verifyEmail } from '../helpers/account'
import { latestCode } from '../helpers/mail'
import { balance, funded, mint, PIN, someAddress, verify } from '../helpers/purchases'

const ctx = await createArenaApp({ ARENA_REQUIRE_VERIFIED_EMAIL: 'true' })
const off = await createArenaApp()
afterAll(async () => {
  await ctx.close()
  await off.close()
})
const { pinSessions, pinLocks } = ctx.peek.tables

describe('ARENA_REQUIRE_VERIFIED_EMAIL on', () => {
  test('an unverified account: 403 email_not_verified, the session unconsumed; verified, the same session withdraws', async () => {
    const buyer = await funded(ctx, '10')
    const session = await mint(ctx, buyer)
    const body = { pin: PIN, amount: '4', destinationAddress: someAddress(), idempotencyKey: 'verified-email-1' }

    const refused = await verify(ctx, buyer, session, body)
    expect(refused.status).toBe(403)
    expect(await refused.json()).toEqual({
      error: { code: 'email_not_verified', message: 'Verify your email address before withdrawing (POST /api/v1/user/email/verify)', status: 403 },
    })
    const [row] = await ctx.peek.db.select().from(pinSessions).where(eq(pinSessions.id, session.sessionId))
    expect(row!.consumedAt).toBeNull()
    expect(await balance(ctx, buyer)).toBe('10')

    const code = await latestCode(ctx, buyer.tokens.user.email!, 'verify_email')
    expect((await verifyEmail(ctx, buyer.tokens.accessToken, code)).status).toBe(200)

    const accepted = await verify(ctx, buyer, session, body)
    expect(accepted.status).toBe(200)
    expect(await accepted.json()).toMatchObject({ valid: true, withdrawal: { amount: '4', status: 'signed' } })
    expect(await balance(ctx, buyer)).toBe('6')
  })

  test('wrong PINs while unverified are not judged: no failure counted, no lock', async () => {
    const buyer = await funded(ctx, '10')
    const session = await mint(ctx, buyer)
    for (let i = 0; i < 6; i++) {
      const res = await verify(ctx, buyer, session, { pin: '000000', amount: '1', destinationAddress: someAddress(), idempotencyKey: `wrong-${i}` })
      expect(await errorCode(res)).toBe('email_not_verified')
    }
    expect(await ctx.peek.db.select().from(pinLocks).where(eq(pinLocks.userId, buyer.userId))).toEqual([])
    expect((await verifyEmail(ctx, buyer.tokens.accessToken, await latestCode(ctx, buyer.tokens.user.email!, 'verify_email'))).status).toBe(200)
    const res = await verify(ctx, buyer, session, { pin: PIN, amount: '1', destinationAddress: someAddress(), idempotencyKey: 'right' })
    expect(((await res.json()) as { valid: boolean }).valid).toBe(true)
  })
})

test('off (the default outside production): an unverified account withdraws', async () => {
  expect(off.config.requireVerifiedEmail).toBe(false)
  const buyer = await funded(off, '5')
  expect(buyer.tokens.user).toMatchObject({ emailVerified: false })
  const res = await verify(off, buyer, await mint(off, buyer), { pin: PIN, amount: '5', destinationAddress: someAddress(), idempotencyKey: 'unverified-ok' })
  expect(res.status).toBe(200)
  expect(((await res.json()) as { valid: boolean }).valid).toBe(true)
})
