// The console's ratings pages (issue 38) over app.handle: a game's page shows
// its rating settings, its seasons and the live leaderboard ranked as the
// player API ranks it, paged; an admin schedules a season through a
// confirmation page that changes nothing, whose CSRF-checked form schedules
// it (audited `season.create` via the console) and whose job starts it at
// its time, the ended season's board readable with ?season=; lower roles and
// a form without its token are refused and change nothing; a user's page
// shows their rating per game and their latest changes. Both engines.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { TestApp } from '../helpers/app'
import { createArenaApp, playedCup, players, type Player } from '../helpers/arena'
import { consoleAs, textOf } from '../helpers/operators'
import { NOTICES } from '../../src/console/notices'
import { BOARD_PAGE } from '../../src/console/pages/game-ratings'
import { seedRatings } from '../helpers/ratings'

let app: TestApp
let game: { id: string; name: string }
let people: Player[]
beforeAll(async () => {
  // Guests fill the long board: many from the one test address.
  app = await createArenaApp({ ARENA_GUEST_CREATE_PER_HOUR: '1000' })
  // A cup of 4 played out: three rated matches.
  const cup = await playedCup(app, 'Glicko Chess')
  game = cup.game
  people = cup.people
}, 60_000)
afterAll(() => app?.close())

const gamePage = () => `/console/games/${game.id}`
const auditHead = async () => (await app.storage.read.audit.auditHead()).seq
const boardNames = (html: string) => [...html.slice(html.indexOf('id="leaderboard"')).matchAll(/<a href="\/console\/users\/[^"]+" title="[^"]+">([^<]+)<\/a>/g)].map((m) => m[1]!)
const ranks = (html: string) => [...html.slice(html.indexOf('id="leaderboard"')).matchAll(/<tr><td class="num">(\d+)<\/td>/g)].map((m) => Number(m[1]))

describe("a game's page", () => {
  test('the games list links each game to its page; it shows τ, the inactivity period, the seasons and the live board in the API\'s order', async () => {
    const viewer = await consoleAs(app, 'viewer')
    expect((await viewer.get('/console/games')).html).toContain(`href="${gamePage()}"`)
    const page = await viewer.get(gamePage())
    expect(page.status).toBe(200)
    const text = textOf(page.html)
    expect(text).toContain('τ (volatility constant) 0.5')
    expect(text).toContain('604800 s (7 days)')
    expect(text).toMatch(/Season 1 .*current/)
    const api = await app.services.ratings.leaderboard(game.id, {})
    expect(api.entries.length).toBe(4)
    expect(boardNames(page.html)).toEqual(api.entries.map((e) => e.username!))
    expect(ranks(page.html)).toEqual([1, 2, 3, 4])
    // The display the API reports is on the page.
    expect(text).toContain(api.entries[0]!.rating.display.toFixed(2))
    // A viewer reads; scheduling is an admin's.
    expect(page.html).not.toContain('/seasons"')
    expect(text).toContain('Scheduling a season needs the admin role.')
  })

  test('an unknown game or season is a 404 page', async () => {
    const viewer = await consoleAs(app, 'viewer')
    expect((await viewer.get('/console/games/gam_00000000000000000000000000000000')).status).toBe(404)
    expect((await viewer.get(`${gamePage()}?season=ssn_nope`)).status).toBe(404)
  })
})

describe('scheduling a season (admin)', () => {
  const form = { name: 'Winter', startsAt: '2026-11-23T10:00', reset: 'soft' }
  const confirmPath = () => `${gamePage()}/seasons?${new URLSearchParams(form)}`

  test('moderators and viewers: no form, the confirmation page and the form are 403, nothing scheduled or recorded', async () => {
    const before = await auditHead()
    for (const role of ['viewer', 'moderator', 'finance'] as const) {
      const op = await consoleAs(app, role)
      expect((await op.get(gamePage())).html).not.toContain('/seasons"')
      expect((await op.get(confirmPath())).status).toBe(403)
      expect((await op.post(`${gamePage()}/seasons`, { ...form, startsAt: '2026-11-23T10:00:00.000Z' })).status).toBe(403)
    }
    // (Creating the operators is audited itself: compare the seasons and the season records.)
    expect((await app.services.ratings.seasons(game.id)).seasons).toHaveLength(1)
    const records = await app.storage.read.audit.auditAfter(before, 100)
    expect(records.filter((r) => r.action === 'season.create')).toEqual([])
  })

  test('the form opens a confirmation page that changes nothing; without the CSRF token the post is 403; with it the season is scheduled, audited via the console, and starts at its time', async () => {
    const admin = await consoleAs(app, 'admin')
    const page = await admin.get(gamePage())
    expect(page.html).toContain(`<form method="get" action="${gamePage()}/seasons"`)

    const before = await auditHead()
    const confirm = await admin.get(confirmPath())
    expect(confirm.status).toBe(200)
    const text = textOf(confirm.html)
    expect(text).toContain('Schedule Winter for Glicko Chess?')
    expect(text).toContain('At 2026-11-23 10:00:00 UTC every rating of Glicko Chess is reset, soft: each player is moved half-way back to 1500')
    expect(confirm.html).toContain(`<form method="post" action="${gamePage()}/seasons"`)
    expect(confirm.html).toContain('name="_csrf"')
    expect(confirm.html).toContain('value="2026-11-23T10:00:00.000Z"')
    expect(await auditHead()).toBe(before)
    expect((await app.services.ratings.seasons(game.id)).seasons).toHaveLength(1)

    const fields = { name: 'Winter', startsAt: '2026-11-23T10:00:00.000Z', reset: 'soft' }
    expect((await admin.post(`${gamePage()}/seasons`, fields, null)).status).toBe(403)
    expect((await admin.post(`${gamePage()}/seasons`, fields, 'forged-token')).status).toBe(403)
    expect(await auditHead()).toBe(before)

    const done = await admin.post(`${gamePage()}/seasons`, fields)
    expect(done.status).toBe(303)
    expect(done.location).toBe(`${gamePage()}?notice=season_scheduled#seasons`)
    const [winter, first] = (await app.services.ratings.seasons(game.id)).seasons
    expect(winter).toMatchObject({ name: 'Winter', status: 'scheduled', reset: 'soft', startsAt: '2026-11-23T10:00:00.000Z', number: 2 })
    const records = (await app.storage.read.audit.auditAfter(before, 10)).filter((r) => r.action === 'season.create')
    expect(records).toEqual([expect.objectContaining({ target: winter!.id, operatorName: admin.op.operator.name, role: 'admin', via: 'console', details: { gameId: game.id, name: 'Winter', startsAt: '2026-11-23T10:00:00.000Z', reset: 'soft' } })])
    const after = await admin.get(`${gamePage()}?notice=season_scheduled`)
    expect(after.html).toContain(NOTICES.season_scheduled)
    expect(textOf(after.html)).toMatch(/Winter .*scheduled/)

    // The final board of Season 1, as it was, once Winter starts.
    const final = boardNames(after.html)
    app.clock.set('2026-11-23T10:00:01.000Z')
    expect(await app.runJobs()).toBeGreaterThanOrEqual(1)
    // (A day on: the console session has ended; a new one reads the pages.)
    const later = await consoleAs(app, 'viewer')
    const started = await later.get(gamePage())
    expect(textOf(started.html)).toMatch(/Winter .*current/)
    expect(textOf(started.html)).toContain('Nobody is rated in this season yet.')
    const past = await later.get(`${gamePage()}?season=${first!.id}`)
    expect(past.status).toBe(200)
    expect(textOf(past.html)).toContain('Season 1, final')
    expect(boardNames(past.html)).toEqual(final)
  })

  test('a refused schedule (a start in the past) comes back to the game page with the reason; nothing is scheduled', async () => {
    const admin = await consoleAs(app, 'admin')
    const count = (await app.services.ratings.seasons(game.id)).seasons.length
    const refused = await admin.post(`${gamePage()}/seasons`, { name: 'Yesterday', startsAt: '2026-11-20T10:00:00.000Z', reset: 'hard' })
    expect(refused.status).toBe(303)
    expect(refused.location).toContain('error=')
    const shown = await admin.get(refused.location!)
    expect(textOf(shown.html)).toContain('Must not be in the past')
    expect((await app.services.ratings.seasons(game.id)).seasons).toHaveLength(count)
    // A start the confirmation page cannot read: said, never a 500.
    expect((await admin.get(`${gamePage()}/seasons?name=X&startsAt=tomorrow&reset=soft`)).status).toBe(422)
    expect((await admin.get(`${gamePage()}/seasons?name=X&startsAt=2026-12-01T10:00&reset=medium`)).status).toBe(422)
  })
})

test(`the live board pages by ${BOARD_PAGE}: the next link continues the ranks, the first page comes back, a cursor not issued here starts at the top`, async () => {
  // Rated players enough for two pages (guests: cheap accounts), each on the board at a distinct display.
  const guests: string[] = []
  for (let i = 0; i < BOARD_PAGE + 3; i++) {
    const res = await app.handle(new Request('http://localhost/api/v1/user/login/device', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ deviceSecret: `board-secret-${i}-`.padEnd(43, 'x'), create: true }) }))
    expect(res.status).toBe(200)
    guests.push(((await res.json()) as { user: { id: string } }).user.id)
  }
  await seedRatings(app, game.id, guests.map((userId, i) => ({ userId, glicko: { rating: 1500 + i * 10, deviation: 100, volatility: 0.06 }, matches: 1 })))

  const viewer = await consoleAs(app, 'viewer')
  const first = await viewer.get(gamePage())
  expect(ranks(first.html)).toEqual(Array.from({ length: BOARD_PAGE }, (_, i) => i + 1))
  const api = await app.services.ratings.leaderboard(game.id, { limit: 100 })
  expect(boardNames(first.html)).toEqual(api.entries.slice(0, BOARD_PAGE).map((e) => e.username!))
  const next = /<a href="([^"]+)" rel="next">Next players<\/a>/.exec(first.html)?.[1]?.replaceAll('&amp;', '&')
  expect(next).toStartWith(`${gamePage()}?after=`)
  const second = await viewer.get(next!)
  expect(second.status).toBe(200)
  expect(ranks(second.html)).toEqual(Array.from({ length: api.entries.length - BOARD_PAGE }, (_, i) => BOARD_PAGE + i + 1))
  expect(boardNames(second.html)).toEqual(api.entries.slice(BOARD_PAGE).map((e) => e.username!))
  expect(second.html).not.toContain('rel="next"')
  expect(second.html).toContain(`href="${gamePage()}#leaderboard">Top of the board</a>`)
  const foreign = await viewer.get(`${gamePage()}?after=not-a-cursor`)
  expect(foreign.status).toBe(200)
  expect(ranks(foreign.html)[0]).toBe(1)
})

test("a user's page shows their rating in each game and their latest changes, newest first; a player never rated says so", async () => {
  const viewer = await consoleAs(app, 'viewer')
  const { rating } = await app.services.ratings.mine(game.id, people[0]!.userId)
  const page = await viewer.get(`/console/users/${people[0]!.userId}`)
  expect(page.status).toBe(200)
  const section = page.html.slice(page.html.indexOf('id="ratings"'), page.html.indexOf('id="sessions"'))
  const text = textOf(section)
  expect(section).toContain(`href="${gamePage()}#leaderboard"`)
  expect(text).toContain(`Rating ${rating.rating.toFixed(2)} ± ${rating.deviation.toFixed(2)}`)
  expect(text).toContain(`Display ${rating.display.toFixed(2)}`)
  const history = await app.services.ratings.history(game.id, people[0]!.userId, {})
  const kinds = [...section.matchAll(/<td>(match|correction|season reset)<\/td>/g)].map((m) => m[1])
  expect(kinds).toEqual(history.history.map((h) => h.kind.replace('_', ' ')).reverse().slice(0, 5))
  expect(kinds[0]).toBe('season reset')
  // Opponents by name, linked to their pages.
  const opponent = history.history.find((h) => h.opponentUserId !== null)!.opponentUserId!
  expect(section).toContain(`href="/console/users/${opponent}" title="${opponent}">${people.find((p) => p.userId === opponent)!.username}</a>`)

  const [unrated] = await players(app, 1)
  expect(textOf((await viewer.get(`/console/users/${unrated!.userId}`)).html)).toContain('Never rated in any game.')
})
