// The operator's view of users (contract §8): GET /admin/users (search and
// pages) and GET /admin/users/{id} (user, sessions, wallet, ban), through HTTP.
import { afterAll, describe, expect, test } from 'bun:test'
import { postJson, req } from '../helpers/app'
import { admin, createArenaApp } from '../helpers/arena'
import { bearer, login, registerUser } from '../helpers/auth'
import { AwayCustody, banUser, deleteUser, searchUsers, userDetail } from '../helpers/accounts'
import { funded, mint, PIN, someAddress, verify } from '../helpers/purchases'

const custody = new AwayCustody()
const ctx = await createArenaApp({}, { custody })
afterAll(() => ctx.close())

const stamp = Date.now().toString(36)
const named = (name: string) => registerUser(ctx, { username: `${name}_${stamp}`, email: `${name}.${stamp}@Example.com` })

describe('GET /admin/users', () => {
  test('pages through every user in creation order; cursor is the last id of a full page, null at the end', async () => {
    const made = [await named('page_a'), await named('page_b'), await named('page_c')]
    const seen: string[] = []
    let after = ''
    for (let page = 0; page < 1000; page++) {
      const res = await searchUsers(ctx, `?limit=2${after}`)
      expect(res.status).toBe(200)
      seen.push(...res.body.users.map((u: { id: string }) => u.id))
      if (res.body.cursor === null) {
        expect(res.body.users.length).toBeLessThan(2)
        break
      }
      expect(res.body.users.length).toBe(2)
      expect(res.body.cursor).toBe(res.body.users[1].id)
      after = `&after=${res.body.cursor}`
    }
    expect(seen).toEqual([...seen].sort())
    expect(new Set(seen).size).toBe(seen.length)
    for (const u of made) expect(seen).toContain(u.id)
  })

  test('finds by id, or a part of the username or email in any case; LIKE wildcards are plain characters', async () => {
    const alice = await named('alice_q')
    const bob = await named('bob_q')
    const byName = await searchUsers(ctx, `?query=${encodeURIComponent(`ALICE_Q_${stamp}`)}`)
    expect(byName.body.users.map((u: { id: string }) => u.id)).toEqual([alice.id])
    expect(byName.body.users[0]).toEqual({
      id: alice.id,
      email: alice.email,
      username: alice.username,
      country: 'DE',
      createdAt: expect.any(String),
      emailVerified: false,
      identities: ['password'],
      ban: null,
      deletedAt: null,
    })
    const byEmail = await searchUsers(ctx, `?query=${encodeURIComponent(`bob_q.${stamp}@example`)}`)
    expect(byEmail.body.users.map((u: { id: string }) => u.id)).toEqual([bob.id])
    expect((await searchUsers(ctx, `?query=${bob.id}`)).body.users.map((u: { id: string }) => u.id)).toEqual([bob.id])
    expect((await searchUsers(ctx, `?query=${encodeURIComponent('%')}`)).body.users).toEqual([])
    expect((await searchUsers(ctx, `?query=_q_${stamp}`)).body.users.length).toBe(2)
    expect((await searchUsers(ctx, `?query=nobody_${stamp}`)).body).toEqual({ users: [], cursor: null })
  })

  test('deleted and banned users are listed, with their ban and deletion', async () => {
    const banned = await named('banned_q')
    const gone = await named('gone_q')
    await banUser(ctx, banned.id, { reason: 'spam' })
    await deleteUser(ctx, gone.id)
    const found = await searchUsers(ctx, `?query=${banned.id}`)
    expect(found.body.users[0].ban).toMatchObject({ reason: 'spam', until: null, inForce: true })
    const erased = await searchUsers(ctx, `?query=${gone.id}`)
    expect(erased.body.users[0]).toMatchObject({ id: gone.id, email: 'erased', username: 'erased', deletedAt: ctx.clock.now().toISOString() })
  })

  test('refuses a malformed cursor, a limit out of range or not whole, a query too long: 422; no token: 401', async () => {
    for (const query of ['?after=nope', '?after=ses_00000000000000000000000000000000', '?limit=0', '?limit=101', '?limit=1.5', '?limit=x', `?query=${'a'.repeat(255)}`]) {
      const res = await searchUsers(ctx, query)
      expect({ query, status: res.status }).toEqual({ query, status: 422 })
    }
    const user = await registerUser(ctx)
    const tokens = await login(ctx, user.username)
    expect((await ctx.handle(req('/api/v1/admin/users', { headers: bearer(tokens.accessToken) }))).status).toBe(401)
  })
})

describe('GET /admin/users/{id}', () => {
  test('the user, every session (live or ended), the wallet with balances and pending withdrawals, the ban', async () => {
    const buyer = await funded(ctx, '40')
    const second = await login(ctx, buyer.username, undefined, { 'user-agent': 'second-device' })
    await ctx.handle(new Request('http://localhost/api/v1/user/s/logout', { method: 'POST', headers: bearer(second.accessToken) }))
    custody.away = true
    try {
      const session = await mint(ctx, buyer)
      const res = await verify(ctx, buyer, session, { pin: PIN, amount: '15', destinationAddress: someAddress(), idempotencyKey: 'pending-one' })
      expect(res.status).toBe(200)
    } finally {
      custody.away = false
    }

    const detail = await userDetail(ctx, buyer.userId)
    expect(detail.status).toBe(200)
    expect(detail.body.user).toMatchObject({ id: buyer.userId, username: buyer.username, ban: null, deletedAt: null })
    expect(detail.body.sessions.length).toBe(2)
    const [newest, oldest] = detail.body.sessions
    expect(newest).toMatchObject({ userAgent: 'second-device', revokedReason: 'logout', live: false })
    expect(oldest).toMatchObject({ revokedAt: null, revokedReason: null, live: true })
    expect(Object.keys(oldest).sort()).toEqual(['createdAt', 'expiresAt', 'id', 'lastUsedAt', 'live', 'revokedAt', 'revokedReason', 'userAgent'])
    expect(detail.body.wallet).toEqual({ address: expect.any(String), balances: [{ asset: 'USDC', balance: '25' }], pendingWithdrawals: 1 })
    expect(detail.body.ban).toBeNull()
  })

  test('a user who never used the wallet: no address, no balances', async () => {
    const user = await registerUser(ctx)
    const detail = await userDetail(ctx, user.id)
    expect(detail.body.wallet).toEqual({ address: null, balances: [], pendingWithdrawals: 0 })
    expect(detail.body.sessions).toEqual([])
  })

  test('an unknown id is 404; an id too long 422', async () => {
    const unknown = await userDetail(ctx, 'usr_00000000000000000000000000000000')
    expect(unknown.status).toBe(404)
    expect(unknown.body.error.code).toBe('not_found')
    expect((await userDetail(ctx, 'x'.repeat(65))).status).toBe(422)
  })
})

describe('a user named by username in the admin API', () => {
  // The CLI and tournaments take a username or an id; so does every admin
  // route with a user in its path: an id's shape (usr_ + 32 hex digits) is an
  // id, anything else a username, in any case.
  test('GET, ban, unban, PIN and unlock, credit, adjust and delete take the username, in any case, and act on that user', async () => {
    const user = await named('by_name')
    const bystander = await named('by_name_other')
    const shouting = user.username.toUpperCase()

    const byName = await userDetail(ctx, shouting)
    expect(byName.status).toBe(200)
    expect(byName.body.user.id).toBe(user.id)
    expect((await userDetail(ctx, user.id)).body).toEqual(byName.body)

    expect((await banUser(ctx, user.username, { reason: 'by name' })).body.user).toMatchObject({ id: user.id, ban: { reason: 'by name', inForce: true } })
    expect((await userDetail(ctx, bystander.id)).body.user.ban).toBeNull()
    expect((await ctx.handle(postJson(`/api/v1/admin/users/${shouting}/unban`, {}, admin))).status).toBe(200)
    expect((await userDetail(ctx, user.id)).body.user.ban).toBeNull()

    const pin = await ctx.handle(req(`/api/v1/admin/users/${user.username}/pin`, { headers: admin }))
    expect(pin.status).toBe(200)
    expect(((await pin.json()) as { pin: { set: boolean } }).pin.set).toBe(false)
    const unlock = await ctx.handle(postJson(`/api/v1/admin/users/${user.username}/pin/unlock`, { reason: 'by name' }, admin))
    expect(unlock.status).toBe(200)

    const credit = await ctx.handle(postJson(`/api/v1/admin/wallets/${user.username}/credit`, { amount: '5', reference: `name-${stamp}` }, admin))
    expect(credit.status).toBe(200)
    expect(await credit.json()).toEqual({ balance: '5' })
    const adjust = await ctx.handle(postJson(`/api/v1/admin/wallets/${shouting}/adjust`, { amount: '-5', reason: 'by name', reference: `name-adj-${stamp}` }, admin))
    expect(adjust.status).toBe(200)
    expect(await adjust.json()).toEqual({ balance: '0' })
    expect((await userDetail(ctx, bystander.id)).body.wallet.balances.every((b: { balance: string }) => b.balance === '0')).toBe(true)

    const deleted = await deleteUser(ctx, user.username)
    expect(deleted.status).toBe(200)
    // A deleted account has no username any more: only its id names it.
    expect((await userDetail(ctx, user.id)).body.user.deletedAt).not.toBeNull()
    expect((await userDetail(ctx, user.username)).status).toBe(404)
  })

  test('a username nobody has, or an id nobody has, is 404 not_found on every route, and nothing is written', async () => {
    const bystander = await named('by_name_still')
    for (const ref of ['nobody_here_at_all', 'usr_' + '0'.repeat(32)]) {
      expect((await userDetail(ctx, ref)).body.error).toMatchObject({ code: 'not_found', status: 404 })
      expect((await banUser(ctx, ref, { reason: 'x' })).status).toBe(404)
      expect((await deleteUser(ctx, ref)).status).toBe(404)
      const credit = await ctx.handle(postJson(`/api/v1/admin/wallets/${ref}/credit`, { amount: '1', reference: `ghost-${ref}` }, admin))
      expect(credit.status).toBe(404)
    }
    expect((await userDetail(ctx, bystander.id)).body.user.ban).toBeNull()
  })
})
