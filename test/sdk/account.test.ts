// The SDK's account calls (contract §8) against the real server: verify the
// e-mail, resend the code, change the password, forgot and reset.
import { afterAll, describe, expect, test } from 'bun:test'
import { ApiError } from '@arena/sdk'
import { createTestApp } from '../helpers/app'
import { login, PASSWORD, registerUser } from '../helpers/auth'
import { latestCode, mailTo } from '../helpers/mail'
import { apiError, sdkClient } from '../helpers/sdk'

const ctx = await createTestApp()
afterAll(() => ctx.close())

async function signedIn() {
  const user = await registerUser(ctx)
  const sdk = sdkClient(ctx)
  await sdk.client.auth.login(user.username, PASSWORD)
  return { user, ...sdk }
}


describe('SDK account calls', () => {
  test('verifyEmail: the user, now verified; a wrong code is ApiError 400 invalid_verification_code', async () => {
    const { client, user } = await signedIn()
    const wrong = await apiError(client.auth.verifyEmail('ZZZZZ-ZZZZZ'))
    expect({ status: wrong.status, code: wrong.code }).toEqual({ status: 400, code: 'invalid_verification_code' })
    const verified = await client.auth.verifyEmail(await latestCode(ctx, user.email, 'verify_email'))
    expect(verified).toMatchObject({ id: user.id, emailVerified: true })
    expect((await client.me()).emailVerified).toBe(true)
  })

  test('resendVerification: a new code mailed; once verified, ApiError 409 conflict', async () => {
    const { client, user } = await signedIn()
    await client.auth.resendVerification()
    expect(await mailTo(ctx, user.email)).toHaveLength(2)
    await client.auth.verifyEmail(await latestCode(ctx, user.email, 'verify_email'))
    const error = await apiError(client.auth.resendVerification())
    expect({ status: error.status, code: error.code }).toEqual({ status: 409, code: 'conflict' })
  })

  test('changePassword: { revoked } other sessions; this client stays signed in; a wrong password is ApiError 403', async () => {
    const { client, user } = await signedIn()
    await login(ctx, user.username)
    const wrong = await apiError(client.auth.changePassword('not it', 'a new passphrase'))
    expect({ status: wrong.status, code: wrong.code }).toEqual({ status: 403, code: 'invalid_credentials' })
    expect(client.auth.signedIn).toBe(true)
    expect(await client.auth.changePassword(PASSWORD, 'a new passphrase')).toEqual({ revoked: 1 })
    expect((await client.me()).id).toBe(user.id)
    await login(ctx, user.username, 'a new passphrase')
  })

  test('forgotPassword and resetPassword need no sign-in and never send the bearer; the reset ends every session', async () => {
    const { client, user, sent } = await signedIn()
    await client.auth.forgotPassword(user.email)
    await client.auth.forgotPassword(`nobody.${user.username}@example.com`)
    const code = await latestCode(ctx, user.email, 'reset_password')
    const bad = await apiError(client.auth.resetPassword(user.email, 'ZZZZZ-ZZZZZ', 'reset passphrase'))
    expect({ status: bad.status, code: bad.code }).toEqual({ status: 400, code: 'invalid_reset_code' })
    expect(await client.auth.resetPassword(user.email, code, 'reset passphrase')).toEqual({ revoked: 1 })
    for (const request of sent.filter((r) => r.path.startsWith('/api/v1/user/password/'))) expect(request.headers.get('authorization')).toBeNull()

    // This client's session was one of them: the next call finds it over and drops the tokens.
    const ended = await apiError(client.me())
    expect(ended.status).toBe(401)
    expect(client.auth.signedIn).toBe(false)
    expect((await client.auth.login(user.username, 'reset passphrase')).id).toBe(user.id)
  })

  test('a client that never signed in can ask for and use a reset code', async () => {
    const user = await registerUser(ctx)
    const { client } = sdkClient(ctx)
    await client.auth.forgotPassword(user.email)
    const result = await client.auth.resetPassword(user.email, await latestCode(ctx, user.email, 'reset_password'), 'fresh passphrase')
    expect(result).toEqual({ revoked: 0 })
    expect(client.auth.signedIn).toBe(false)
    expect((await client.auth.login(user.email, 'fresh passphrase')).emailVerified).toBe(true)
  })
})
