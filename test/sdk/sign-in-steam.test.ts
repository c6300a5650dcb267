// The SDK's Steam sign-in (contract §13) against the real server, which
// checks each ticket with a stand-in for the Steam Web API on loopback (the
// one boundary arena does not own): a new Steam player is created only with
// `create`, signs in again to the same account, a banned one is refused with
// its code, and a guest links its Steam identity.
import { afterAll, describe, expect, test } from 'bun:test'
import { ApiError } from '@arena/sdk'
import { createArenaApp } from '../helpers/arena'
import { startSteamStub } from '../helpers/steam-stub'
import { apiError, sdkClient } from '../helpers/sdk'

const steam = startSteamStub()
const ctx = await createArenaApp(steam.env({ ARENA_GUEST_CREATE_PER_HOUR: '1000' }))
afterAll(async () => {
  await ctx.close()
  await steam.close()
})


describe('auth.loginWithSteam', () => {
  test('a new Steam player: ApiError 401 invalid_credentials without create; created with it, the same account next time', async () => {
    const { ticket, steamid } = steam.player()
    const { client, sent } = sdkClient(ctx)
    const unknown = await apiError(client.auth.loginWithSteam(ticket))
    expect({ status: unknown.status, code: unknown.code }).toEqual({ status: 401, code: 'invalid_credentials' })
    expect(client.auth.signedIn).toBe(false)

    const first = await client.auth.loginWithSteam(steam.player(steamid).ticket, { create: true })
    expect(first.created).toBe(true)
    expect(first.user).toMatchObject({ email: null, identities: ['steam'] })
    expect(JSON.parse(sent.at(-1)!.body!)).toEqual({ ticket: expect.any(String), create: true })
    expect((await client.me()).id).toBe(first.user.id)
    expect((await client.identities.list())[0]).toMatchObject({ provider: 'steam', subject: steamid })

    const again = await sdkClient(ctx).client.auth.loginWithSteam(steam.player(steamid).ticket)
    expect(again).toEqual({ user: first.user, created: false })
  })

  test('a VAC-banned Steam account is ApiError 403 platform_banned, and no account is made', async () => {
    const { client } = sdkClient(ctx)
    const error = await apiError(client.auth.loginWithSteam(steam.player(undefined, { vacbanned: true }).ticket, { create: true }))
    expect({ status: error.status, code: error.code }).toEqual({ status: 403, code: 'platform_banned' })
    expect(client.auth.signedIn).toBe(false)
  })

  test('a guest links its Steam identity, then signs in with Steam to the same account', async () => {
    const { client } = sdkClient(ctx)
    const guest = await client.auth.loginAsGuest()
    const { ticket, steamid } = steam.player()
    expect((await client.identities.link('steam', { ticket })).map((i) => i.provider)).toEqual(['device', 'steam'])
    await client.auth.logout()
    expect((await client.auth.loginWithSteam(steam.player(steamid).ticket)).user.id).toBe(guest.user.id)
  })
})
