// The SDK's device-code sign-in (contract §13, RFC 8628) against the real
// server and its /device page (driven with plain HTTP forms, as a browser
// without script would): the device starts, polls at the interval while the
// player has not answered, slows down by 5 s when told to, and ends signed
// in once the player approves, or with the ApiError of a denial or an abort.
// The server's clock moves 5 s before each poll, so a poll the SDK sends
// after its (shortened) wait is on time by the server's interval.
import { afterAll, describe, expect, test } from 'bun:test'
import { ApiError, NetworkError } from '@arena/sdk'
import { createArenaApp } from '../helpers/arena'
import { registerUser } from '../helpers/auth'
import { answerOnPage } from '../helpers/device-codes'
import { sdkClient, type Interceptor } from '../helpers/sdk'

const ctx = await createArenaApp()
afterAll(() => ctx.close())

const POLL = '/api/v1/auth/device-code/token'

/** Moves the server's clock before each poll (`advance`: one 5 s interval); `then` runs after the n-th poll's answer (from 1). */
function device(then: (poll: number) => Promise<void> | void = () => {}, advance: (poll: number) => number = () => 5_000) {
  let polls = 0
  const intercept: Interceptor = async (request, forward) => {
    if (request.path !== POLL) return forward()
    const poll = ++polls
    ctx.clock.advance(advance(poll))
    const response = await forward()
    await then(poll)
    return response
  }
  return { ...sdkClient(ctx, { intercept }), polls: () => polls }
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => null,
    (e: unknown) => e,
  )
}

describe('auth.startDeviceCode and pollDeviceCode', () => {
  test('pending until the player approves on the page: then the player, signed in on the device', async () => {
    const player = await registerUser(ctx)
    let userCode = ''
    const { client, polls, sent } = device(async (poll) => {
      if (poll === 3) expect((await answerOnPage(ctx, player.username, userCode)).status).toBe(200)
    })
    const code = await client.auth.startDeviceCode()
    userCode = code.userCode
    expect(code).toMatchObject({ interval: 5, expiresIn: 600 })
    expect(code.verificationUriComplete).toBe(`${code.verificationUri}?code=${code.userCode}`)

    const user = await client.auth.pollDeviceCode(code, { interval: 0.02 })
    expect(user.id).toBe(player.id)
    expect(polls()).toBe(4)
    expect(client.auth.signedIn).toBe(true)
    expect((await client.me()).id).toBe(player.id)
    for (const request of sent.filter((r) => r.path === POLL)) expect(JSON.parse(request.body!)).toEqual({ deviceCode: code.deviceCode })
    // The code handed out its tokens once: polling it again is expired_token.
    const spent = (await rejection(client.auth.checkDeviceCode(code.deviceCode))) as ApiError
    expect(spent).toBeInstanceOf(ApiError)
    expect({ status: spent.status, code: spent.code }).toEqual({ status: 400, code: 'expired_token' })
  })

  test('checkDeviceCode polls once: null while pending', async () => {
    const { client } = device()
    const code = await client.auth.startDeviceCode()
    expect(await client.auth.checkDeviceCode(code.deviceCode)).toBeNull()
    expect(client.auth.signedIn).toBe(false)
  })

  test('slow_down: the next poll waits 5 s longer, and the flow goes on', async () => {
    const player = await registerUser(ctx)
    let userCode = ''
    const at: number[] = []
    // The second poll comes before the server's interval (its clock not moved): slow_down, and the
    // server's interval is 10 s from then on, so its clock moves 10 s before the third.
    const { client } = device(
      async (poll) => {
        at.push(Date.now())
        if (poll === 2) expect((await answerOnPage(ctx, player.username, userCode)).status).toBe(200)
      },
      (poll) => [5_000, 0, 10_000][poll - 1] ?? 10_000,
    )
    const code = await client.auth.startDeviceCode()
    userCode = code.userCode
    const user = await client.auth.pollDeviceCode(code.deviceCode, { interval: 0.02 })
    expect(user.id).toBe(player.id)
    expect(at).toHaveLength(3)
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(4_900)
  }, 30_000)

  test('a player who denies it: ApiError 400 access_denied, not signed in', async () => {
    const player = await registerUser(ctx)
    let userCode = ''
    const { client } = device(async (poll) => {
      if (poll === 1) expect((await answerOnPage(ctx, player.username, userCode, 'deny')).status).toBe(200)
    })
    const code = await client.auth.startDeviceCode()
    userCode = code.userCode
    const error = (await rejection(client.auth.pollDeviceCode(code, { interval: 0.02 }))) as ApiError
    expect(error).toBeInstanceOf(ApiError)
    expect({ status: error.status, code: error.code }).toEqual({ status: 400, code: 'access_denied' })
    expect(client.auth.signedIn).toBe(false)
  })

  test('an abort ends the loop with NetworkError, between polls or before the first', async () => {
    const { client, polls } = device()
    const code = await client.auth.startDeviceCode()
    const controller = new AbortController()
    const polling = rejection(client.auth.pollDeviceCode(code, { interval: 0.05, signal: controller.signal }))
    await Bun.sleep(120)
    controller.abort()
    expect(await polling).toBeInstanceOf(NetworkError)
    const seen = polls()
    expect(seen).toBeGreaterThanOrEqual(1)
    await Bun.sleep(120)
    expect(polls()).toBe(seen)
    expect(await rejection(client.auth.pollDeviceCode(code, { signal: controller.signal }))).toBeInstanceOf(NetworkError)
    expect(polls()).toBe(seen)
  })
})
