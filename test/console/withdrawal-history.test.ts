// The withdrawal history of /console/withdrawals over app.handle, on either
// engine. The invariant: walking a filter's pages by their "Older" links
// lists exactly the withdrawals that match it (status, user by id or by
// username in any case, creation days from and to, inclusive), newest first
// by creation time then id, each once, at most HISTORY_PAGE a page, with
// ties in creation time split across pages correctly; the queue of those
// waiting stays first on the page; a bad filter is a 4xx page, never a 500.
// The rows are written straight into the table (the history only reads
// them); their times, statuses and owners are drawn from a printed seed.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { req, type TestApp } from '../helpers/app'
import { createArenaApp } from '../helpers/arena'
import { operatorOf } from '../helpers/browser'
import { chooseSeed, pickWith, seededRandom } from '../helpers/seed'
import { newId } from '../../src/shared/ids'
import { DAY, day, newestFirst, seedWithdrawalHistory, START, STATUSES, type HistoryRow, type HistoryWorld } from '../helpers/withdrawal-history'
import { HISTORY_PAGE } from '../../src/modules/operations/service'

let app: TestApp
let cookie: string
let rows: HistoryRow[] = []
let users: HistoryWorld['users'] = []
const seed = chooseSeed('ARENA_HISTORY_SEED', 'withdrawal history')
const random = seededRandom(seed)

beforeAll(async () => {
  app = await createArenaApp()
  ;({ users, rows } = await seedWithdrawalHistory(app, random, `Hist${seed & 0xffff}_`))
  const viewer = await operatorOf(app, 'viewer')
  const res = await app.handle(
    req('/console/login', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ name: viewer.name, password: viewer.password }).toString() }),
  )
  expect(res.status).toBe(303)
  cookie = res.headers.get('set-cookie')!.split(';')[0]!
}, 60_000)
afterAll(() => app?.close())

async function get(path: string) {
  const res = await app.handle(req(path, { headers: { cookie } }))
  return { status: res.status, html: await res.text() }
}

/** The history's rows of a page, as their destination addresses, and its "Older" link. */
function historyOf(html: string): { addresses: string[]; next: string | null } {
  const history = html.slice(html.indexOf('<h2 id="history">'))
  const addresses = [...history.matchAll(/<td class="mono">([^<]+)<\/td>/g)].map((m) => m[1]!)
  // As a browser follows it: without its #fragment.
  const next = /<a href="([^"#]+)(#[^"]*)?" rel="next">/.exec(history)?.[1]?.replaceAll('&amp;', '&') ?? null
  return { addresses, next }
}

/** Every page of a filter, followed by its links. */
async function walk(query: Record<string, string>): Promise<string[][]> {
  const pages: string[][] = []
  let path: string | null = `/console/withdrawals?${new URLSearchParams(query)}`
  while (path !== null) {
    const page = await get(path)
    expect(page.status).toBe(200)
    const { addresses, next } = historyOf(page.html)
    pages.push(addresses)
    path = next
    expect(pages.length).toBeLessThan(20)
  }
  return pages
}

const expected = (match: (r: HistoryRow) => boolean): string[] => newestFirst(rows, match).map((r) => r.destinationAddress)

describe('console withdrawal history', () => {
  test('unfiltered: every withdrawal once, newest first, HISTORY_PAGE a page', async () => {
    const pages = await walk({})
    expect(pages.length).toBe(Math.ceil(rows.length / HISTORY_PAGE))
    for (const page of pages.slice(0, -1)) expect(page.length).toBe(HISTORY_PAGE)
    expect(pages.flat()).toEqual(expected(() => true))
  })

  test('each filter, and filters combined, list exactly what matches, across pages', async () => {
    for (const status of STATUSES) expect((await walk({ status })).flat()).toEqual(expected((r) => r.status === status))
    const [first, second] = users
    expect((await walk({ user: first!.username.toUpperCase() })).flat()).toEqual(expected((r) => r.userId === first!.id))
    expect((await walk({ user: second!.id })).flat()).toEqual(expected((r) => r.userId === second!.id))
    const from = Math.floor(random() * 5)
    const to = from + 1 + Math.floor(random() * 4)
    const inDays = (r: HistoryRow) => r.createdAt.getTime() >= START + from * DAY && r.createdAt.getTime() < START + (to + 1) * DAY
    expect((await walk({ since: day(from), until: day(to) })).flat()).toEqual(expected(inDays))
    const status = pickWith(random, STATUSES)
    expect((await walk({ status, user: first!.username, since: day(from) })).flat()).toEqual(expected((r) => r.status === status && r.userId === first!.id && r.createdAt.getTime() >= START + from * DAY))
    expect((await walk({ since: day(30) })).flat()).toEqual([])
  })

  test('the waiting queue comes first; an unknown user, a day that does not exist and an unknown status are answered as such, never a 500', async () => {
    const page = await get('/console/withdrawals')
    expect(page.html.indexOf('<h2 id="waiting">')).toBeGreaterThan(-1)
    expect(page.html.indexOf('<h2 id="waiting">')).toBeLessThan(page.html.indexOf('<h2 id="history">'))
    const nobody = await get('/console/withdrawals?user=nobody_at_all')
    expect(nobody.status).toBe(200)
    expect(nobody.html).toContain('No user is named or numbered “nobody_at_all”.')
    // An id is checked too: one that is no user's says so rather than listing nothing.
    const stranger = newId('user')
    expect((await get(`/console/withdrawals?user=${stranger}`)).html).toContain(`No user is named or numbered “${stranger}”.`)
    const badDay = await get('/console/withdrawals?since=2026-02-30')
    expect(badDay.status).toBe(422)
    expect(badDay.html).toContain('query/since')
    expect((await get('/console/withdrawals?until=yesterday')).status).toBe(422)
    expect((await get('/console/withdrawals?status=paid')).status).toBe(422)
    // A cursor that is no withdrawal starts from the newest.
    expect(historyOf((await get('/console/withdrawals?before=wdr_nope')).html).addresses).toEqual(expected(() => true).slice(0, HISTORY_PAGE))
  })
})
