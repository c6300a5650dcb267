// Invariant: the console's choose-your-password step is reached and posted
// only with the ticket a correct one-time password (and its authenticator
// code, once enrolled) just earned: without it, with a forged or another
// operator's, an expired (PASSWORD_STEP_TTL_MS) or a spent one, or without
// the step's CSRF token, nothing changes and the one-time password still
// stands. One ticket opens at most one session. Choosing a password counts
// towards no sign-in throttle, in the console or (403
// password_change_required) on the API. Over HTTP, on both engines; the
// browser's view of the step: first-sign-in.test.ts.
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { postJson, type TestApp } from '../helpers/app'
import { createArenaApp } from '../helpers/arena'
import { cliActor } from '../helpers/operators'
import { LOGIN_LIMITS } from '../../src/modules/auth/throttle'
import { PASSWORD_STEP_TTL_MS } from '../../src/modules/operators/sessions'
import { totpCode } from '../../src/modules/operators/totp'

const BASE = 'http://localhost'
const STEP_ENDED = '/console/login?notice=password_step_ended'

let ctx: TestApp
beforeEach(async () => {
  ctx = await createArenaApp()
})
afterEach(async () => {
  await ctx.close()
})

function form(path: string, fields: Record<string, string>, cookie?: string): Request {
  return new Request(`${BASE}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) },
    body: new URLSearchParams(fields).toString(),
  })
}

function cookieOf(res: Response, name: string): string | undefined {
  const line = res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`))
  return line === undefined ? undefined : line.slice(name.length + 1, line.indexOf(';'))
}

async function create(name: string) {
  const { operator, password } = await ctx.services.operators.create({ name, role: 'moderator' }, cliActor(ctx))
  return { id: operator.id, name, password }
}

/** The one-time password through the sign-in form: the step's page, its ticket (cookie) and CSRF token. */
async function begin(name: string, password: string, extra: Record<string, string> = {}) {
  const res = await ctx.handle(form('/console/login', { name, password, ...extra }))
  const html = await res.text()
  const ticket = cookieOf(res, 'arena_password_step')
  const csrf = /name="_csrf" value="([0-9a-f]{64})"/.exec(html)?.[1]
  return { res, html, ticket, csrf }
}

function post(ticket: string | undefined, fields: Record<string, string>) {
  return ctx.handle(form('/console/login/password', fields, ticket === undefined ? undefined : `arena_password_step=${ticket}`))
}

async function stillOneTime(id: string) {
  return (await ctx.storage.read.operators.operatorById(id))!.passwordOneTime
}

describe('the step needs the one-time password', () => {
  test('no ticket, a forged one, another operator\'s, a wrong password: no step, and nothing changes', async () => {
    const alice = await create('alice-ops')
    const bob = await create('bob-ops')
    // Without a ticket: the page and the form both send back to the sign-in page.
    const page = await ctx.handle(new Request(`${BASE}/console/login/password`))
    expect(page.status).toBe(303)
    expect(page.headers.get('location')).toBe(STEP_ENDED)
    const fields = { _csrf: 'x'.repeat(64), newPassword: 'chosen by nobody', confirmPassword: 'chosen by nobody' }
    const noTicket = await post(undefined, fields)
    expect(noTicket.status).toBe(303)
    expect(noTicket.headers.get('location')).toBe(STEP_ENDED)

    // A wrong password earns no ticket.
    const wrong = await begin(alice.name, 'not the one-time password')
    expect(wrong.res.status).toBe(401)
    expect(wrong.ticket).toBeUndefined()
    expect(wrong.html).not.toContain('Choose your password')

    const { ticket, csrf } = await begin(alice.name, alice.password)
    expect(ticket).toMatch(/^opr_[0-9a-f]{32}\.n\.[0-9]{13}\.[0-9a-f]{64}$/)
    const [id, step, expires, mac] = ticket!.split('.') as [string, string, string, string]
    const forgeries = [
      // The MAC altered; the expiry pushed out; a made-up MAC; alice's MAC on bob's id.
      `${id}.${step}.${expires}.${mac.slice(0, -1)}${mac.endsWith('0') ? '1' : '0'}`,
      `${id}.${step}.${Number(expires) + 3_600_000}.${mac}`,
      `${bob.id}.n.${expires}.${'0'.repeat(64)}`,
      `${bob.id}.${step}.${expires}.${mac}`,
    ]
    for (const forged of forgeries) {
      const shown = await ctx.handle(new Request(`${BASE}/console/login/password`, { headers: { cookie: `arena_password_step=${forged}` } }))
      expect(shown.headers.get('location')).toBe(STEP_ENDED)
      const posted = await post(forged, { _csrf: ctx.services.operatorSessions.csrfFor(forged), newPassword: 'forged password', confirmPassword: 'forged password' })
      expect(posted.status).toBe(303)
      expect(posted.headers.get('location')).toBe(STEP_ENDED)
      expect(posted.headers.getSetCookie()).toEqual(['arena_password_step=; Path=/console/login; Max-Age=0; HttpOnly; SameSite=Strict'])
    }
    expect(await stillOneTime(alice.id)).toBe(true)
    expect(await stillOneTime(bob.id)).toBe(true)
    // The real ticket still works: it is the step, with its own CSRF token.
    const shown = await ctx.handle(new Request(`${BASE}/console/login/password`, { headers: { cookie: `arena_password_step=${ticket}` } }))
    expect(shown.status).toBe(200)
    expect(await shown.text()).toContain(`value="${csrf}"`)
  })

  test("the step's form needs the step's CSRF token and comes from the console", async () => {
    const carol = await create('carol-ops')
    const dave = await create('dave-ops')
    const { ticket } = await begin(carol.name, carol.password)
    const other = await begin(dave.name, dave.password)
    const fields = { newPassword: 'carol chose this', confirmPassword: 'carol chose this' }
    for (const _csrf of [undefined, '', other.csrf!, ctx.services.operatorSessions.csrfFor('someone else')]) {
      const res = await post(ticket, _csrf === undefined ? fields : { ...fields, _csrf })
      expect(res.status).toBe(403)
      expect(res.headers.getSetCookie().some((c) => c.startsWith('arena_console='))).toBe(false)
    }
    const crossSite = await ctx.handle(
      new Request(`${BASE}/console/login/password`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `arena_password_step=${ticket}`, origin: 'https://evil.example' },
        body: new URLSearchParams({ ...fields, _csrf: ctx.services.operatorSessions.csrfFor(ticket!) }).toString(),
      }),
    )
    expect(crossSite.status).toBe(403)
    expect(await stillOneTime(carol.id)).toBe(true)
  })

  test('with an authenticator: no code, no step; the code proven at the step is spent when the password is chosen', async () => {
    const erin = await create('erin-ops')
    // Erin signed in once, set up an authenticator, then was given a new one-time password.
    const first = await begin(erin.name, erin.password, { newPassword: 'erin first password' })
    expect(first.res.status).toBe(303)
    const { secret } = await ctx.services.operatorTotp.beginTotp(erin.id, 'erin first password')
    const by = ctx.services.audit.actor({ id: erin.id, name: erin.name, role: 'moderator' }, 'console')
    await ctx.services.operatorTotp.confirmTotp(erin.id, totpCode(secret, ctx.clock.now()), by)
    const { password } = await ctx.services.operators.resetPassword(erin.id, cliActor(ctx))
    ctx.clock.advance(30_000)
    const noCode = await begin(erin.name, password)
    expect(noCode.res.status).toBe(401)
    expect(noCode.ticket).toBeUndefined()
    expect(noCode.html).toContain('This operator signs in with a TOTP code')
    const code = totpCode(secret, ctx.clock.now())
    const { ticket, csrf } = await begin(erin.name, password, { totp: code })
    expect(ticket).toMatch(/^opr_[0-9a-f]{32}\.[0-9]+\./)
    const done = await post(ticket, { _csrf: csrf!, newPassword: 'erin second password', confirmPassword: 'erin second password' })
    expect(done.status).toBe(303)
    expect(done.headers.get('location')).toBe('/console?notice=password_chosen')
    // The code was used: the same one does not sign in again.
    const replay = await ctx.handle(form('/console/login', { name: erin.name, password: 'erin second password', totp: code }))
    expect(replay.status).toBe(401)
    expect(await replay.text()).toContain('Wrong TOTP code, or one already used')
  })
})

describe('the step ends', () => {
  test(`after ${PASSWORD_STEP_TTL_MS / 60_000} minutes, when a password was chosen (one session per ticket), and when the password is reset`, async () => {
    const frank = await create('frank-ops')
    const old = await begin(frank.name, frank.password)
    ctx.clock.advance(PASSWORD_STEP_TTL_MS)
    expect((await ctx.handle(new Request(`${BASE}/console/login/password`, { headers: { cookie: `arena_password_step=${old.ticket}` } }))).headers.get('location')).toBe(STEP_ENDED)
    const late = await post(old.ticket, { _csrf: old.csrf!, newPassword: 'too late now', confirmPassword: 'too late now' })
    expect(late.headers.get('location')).toBe(STEP_ENDED)
    expect(await stillOneTime(frank.id)).toBe(true)

    // A new sign-in with the one-time password: a new step, whose cookie lives as long as it does.
    const fresh = await begin(frank.name, frank.password)
    expect(fresh.res.headers.getSetCookie().find((c) => c.startsWith('arena_password_step='))).toEndWith(`; Path=/console/login; Max-Age=${PASSWORD_STEP_TTL_MS / 1000}; HttpOnly; SameSite=Strict`)
    // Two posts racing with one ticket: one session, and the other is told the step has ended.
    const chosen = { _csrf: fresh.csrf!, newPassword: 'frank chose this', confirmPassword: 'frank chose this' }
    const [one, two] = await Promise.all([post(fresh.ticket, chosen), post(fresh.ticket, { ...chosen, newPassword: 'frank chose that', confirmPassword: 'frank chose that' })])
    const locations = [one.headers.get('location'), two.headers.get('location')].sort()
    expect(locations).toEqual(['/console?notice=password_chosen', STEP_ENDED].sort())
    expect((await ctx.storage.read.operators.operatorSessions(frank.id)).length).toBe(1)
    const again = await post(fresh.ticket, chosen)
    expect(again.headers.get('location')).toBe(STEP_ENDED)
    expect(await stillOneTime(frank.id)).toBe(false)

    // A reset while a step is open: that step is dead, the new one-time password opens a new one.
    const { password } = await ctx.services.operators.resetPassword(frank.id, cliActor(ctx))
    const beforeReset = await begin(frank.name, password)
    const { password: newer } = await ctx.services.operators.resetPassword(frank.id, cliActor(ctx))
    expect((await post(beforeReset.ticket, { _csrf: beforeReset.csrf!, newPassword: 'frank again', confirmPassword: 'frank again' })).headers.get('location')).toBe(STEP_ENDED)
    expect((await begin(frank.name, newer)).res.status).toBe(200)
  })
})

describe('choosing a password counts towards no lock-out', () => {
  test('console: more mismatches and short passwords than the name and the address allow, then the step still finishes and the name is not blocked', async () => {
    const gina = await create('gina-ops')
    const { ticket, csrf } = await begin(gina.name, gina.password)
    const tries = Math.max(LOGIN_LIMITS.account.maxFailures, LOGIN_LIMITS.address.maxFailures) + 2
    for (let i = 0; i < tries; i++) {
      const fields = i % 2 === 0 ? { newPassword: 'one password', confirmPassword: 'another password' } : { newPassword: 'short', confirmPassword: 'short' }
      const res = await post(ticket, { _csrf: csrf!, ...fields })
      expect(res.status).toBe(422)
      const html = await res.text()
      expect(html).toContain(i % 2 === 0 ? 'The two passwords are not the same.' : 'A password needs 8 to 128 characters; that one has 5.')
      // Nothing typed is written back, and no field name or error banner is shown.
      expect(html).not.toContain(fields.newPassword)
      expect(html).not.toContain('class="error"')
      expect(html.replace(/<[^>]*>/g, '')).not.toMatch(/newPassword|confirmPassword|body\//)
    }
    // The name is not blocked: the one-time password from anywhere still gets the step.
    expect((await begin(gina.name, gina.password)).res.status).toBe(200)
    const done = await post(ticket, { _csrf: csrf!, newPassword: 'gina chose this', confirmPassword: 'gina chose this' })
    expect(done.status).toBe(303)
    expect(done.headers.getSetCookie().map((c) => c.slice(0, c.indexOf('=')))).toEqual(['arena_console', 'arena_device', 'arena_password_step'])
    expect((await ctx.handle(form('/console/login', { name: gina.name, password: 'gina chose this' }))).status).toBe(303)
  })

  test('the one-shot form (the new password sent with the one-time one) still signs in; a short one there opens the step, saying why', async () => {
    const hal = await create('hal-ops')
    const short = await begin(hal.name, hal.password, { newPassword: 'tiny' })
    expect(short.res.status).toBe(422)
    expect(short.html).toContain('Choose your password')
    expect(short.html).toContain('A password needs 8 to 128 characters; that one has 4.')
    expect(short.ticket).toBeDefined()
    const done = await begin(hal.name, hal.password, { newPassword: 'hal chose this one' })
    expect(done.res.status).toBe(303)
    expect(done.res.headers.get('location')).toBe('/console?notice=password_chosen')
    expect(await stillOneTime(hal.id)).toBe(false)
  })

  test('API: a proven one-time password without newPassword is 403 each time, never 429, and the API sign-in still finishes', async () => {
    const ivy = await create('ivy-ops')
    for (let i = 0; i < LOGIN_LIMITS.account.maxFailures + 3; i++) {
      const res = await ctx.handle(postJson('/api/v1/admin/sessions', { name: ivy.name, password: ivy.password }))
      expect(res.status).toBe(403)
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('password_change_required')
    }
    expect((await ctx.handle(postJson('/api/v1/admin/sessions', { name: ivy.name, password: ivy.password, newPassword: 'ivy chose this one' }))).status).toBe(201)
  })
})
