// GET /api/v1/admin/withdrawals and `arena withdrawal list`, on either engine.
// The invariant: following a filter's pages by `cursor` (as `after`) lists
// exactly the withdrawals that match it (status, user by id or by username in
// any case, creation UTC days from and to, inclusive), newest first by
// creation time then id, each once, at most `limit` a page, with ties in
// creation time split across pages correctly; each row is the admin
// withdrawal view (the player's view, its owner and its last change); the
// CLI's --json is the same page. A bad filter, limit or cursor is a 422
// naming its field, an unknown user a 404, never a 500 and never rows.
// The rows are written straight into the table (the list only reads them);
// their times, statuses and owners, and the page sizes, are drawn from a
// printed seed.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { req, tempDir, type TestApp } from '../helpers/app'
import { admin, createArenaApp } from '../helpers/arena'
import { bearer, signedInOperator } from '../helpers/operators'
import { run, SOURCE_COMMAND } from '../helpers/process'
import { chooseSeed, pickWith, seededRandom } from '../helpers/seed'
import { newId } from '../../src/shared/ids'
import { CHANGED_AFTER_MS, DAY, day, newestFirst, seedWithdrawalHistory, START, STATUSES, type HistoryRow, type HistoryWorld } from '../helpers/withdrawal-history'
import { HISTORY_PAGE } from '../../src/modules/operations/service'

const PATH = '/api/v1/admin/withdrawals'

interface Listed {
  id: string
  userId: string
  username: string
  status: string
  createdAt: string
  updatedAt: string
  [field: string]: unknown
}

let app: TestApp
const dataDir = tempDir('arena-withdrawal-list-')
let rows: HistoryRow[] = []
let users: HistoryWorld['users'] = []
const seed = chooseSeed('ARENA_WITHDRAWAL_LIST_SEED', 'admin withdrawal list')
const random = seededRandom(seed)

beforeAll(async () => {
  app = await createArenaApp({}, { dataDir })
  ;({ users, rows } = await seedWithdrawalHistory(app, random, `List${seed & 0xffff}_`))
}, 60_000)
afterAll(async () => {
  await app?.close()
  rmSync(dataDir, { recursive: true, force: true })
})

async function get(query: Record<string, string>, headers: Record<string, string> = admin) {
  const res = await app.handle(req(`${PATH}?${new URLSearchParams(query)}`, { headers }))
  return { status: res.status, body: (await res.json()) as { withdrawals: Listed[]; cursor: string | null; error?: { code: string; status: number; details?: { path: string }[] } } }
}

/** Every page of a filter at `limit` a page, followed by its cursors. */
async function walk(query: Record<string, string>, limit: number): Promise<Listed[][]> {
  const pages: Listed[][] = []
  let after: string | null = null
  do {
    const page = await get({ ...query, limit: String(limit), ...(after === null ? {} : { after }) })
    expect(page.status).toBe(200)
    expect(page.body.withdrawals.length).toBeLessThanOrEqual(limit)
    pages.push(page.body.withdrawals)
    after = page.body.cursor
    expect(pages.length).toBeLessThan(200)
  } while (after !== null)
  return pages
}

const expected = (match: (r: HistoryRow) => boolean): string[] => newestFirst(rows, match).map((r) => r.id)
const ids = (pages: Listed[][]) => pages.flat().map((w) => w.id)

describe('GET /api/v1/admin/withdrawals', () => {
  test('unfiltered, at the default and at a drawn limit: every withdrawal once, newest first, full pages but the last', async () => {
    const byDefault = await walk({}, HISTORY_PAGE)
    expect(byDefault.length).toBe(Math.ceil(rows.length / HISTORY_PAGE))
    expect(ids(byDefault)).toEqual(expected(() => true))
    const first = await get({})
    expect(first.body.withdrawals.map((w) => w.id)).toEqual(expected(() => true).slice(0, HISTORY_PAGE))
    const limit = 1 + Math.floor(random() * 40)
    const pages = await walk({}, limit)
    for (const page of pages.slice(0, -1)) expect(page.length).toBe(limit)
    expect(ids(pages)).toEqual(expected(() => true))
  })

  test('each filter, and filters combined, list exactly what matches, across pages', async () => {
    const limit = 1 + Math.floor(random() * 20)
    for (const status of STATUSES) expect(ids(await walk({ status }, limit))).toEqual(expected((r) => r.status === status))
    const [first, second] = users
    expect(ids(await walk({ user: first!.username.toUpperCase() }, limit))).toEqual(expected((r) => r.userId === first!.id))
    expect(ids(await walk({ user: second!.id }, limit))).toEqual(expected((r) => r.userId === second!.id))
    const from = Math.floor(random() * 5)
    const to = from + Math.floor(random() * 4)
    const inDays = (r: HistoryRow) => r.createdAt.getTime() >= START + from * DAY && r.createdAt.getTime() < START + (to + 1) * DAY
    expect(ids(await walk({ from: day(from), to: day(to) }, limit))).toEqual(expected(inDays))
    expect(ids(await walk({ to: day(from) }, limit))).toEqual(expected((r) => r.createdAt.getTime() < START + (from + 1) * DAY))
    const status = pickWith(random, STATUSES)
    expect(ids(await walk({ status, user: first!.username, from: day(from) }, limit))).toEqual(
      expected((r) => r.status === status && r.userId === first!.id && r.createdAt.getTime() >= START + from * DAY),
    )
    expect(await get({ from: day(30) })).toEqual({ status: 200, body: { withdrawals: [], cursor: null } })
  })

  test('each row is the admin withdrawal view: the player view, its owner by id and name, its last change', async () => {
    const row = pickWith(random, rows)
    const owner = users.find((u) => u.id === row.userId)!
    const page = await get({ user: owner.id, limit: '100' })
    const listed = page.body.withdrawals.find((w) => w.id === row.id)!
    expect(listed).toMatchObject({
      id: row.id,
      status: row.status,
      amount: '1.5',
      asset: 'USDC',
      userId: owner.id,
      username: owner.username,
      createdAt: row.createdAt.toISOString(),
      updatedAt: new Date(row.createdAt.getTime() + CHANGED_AFTER_MS).toISOString(),
    })
    expect(listed.rejectionReason).toBe(row.status === 'rejected' ? 'looked wrong' : undefined)
    expect(listed.failureReason).toBe(row.status === 'failed' ? 'custody refused' : undefined)
  })

  test('a bad filter, limit or cursor is a 422 naming it; an unknown user a 404; never a 500', async () => {
    const refused = async (query: Record<string, string>, status: number, code: string, path?: string) => {
      const page = await get(query)
      expect({ query, status: page.status, code: page.body.error?.code }).toEqual({ query, status, code })
      if (path !== undefined) expect(JSON.stringify(page.body.error?.details)).toContain(path)
      expect(page.body.withdrawals).toBeUndefined()
    }
    await refused({ from: '2026-02-30' }, 422, 'validation_failed', 'query/from')
    await refused({ to: 'yesterday' }, 422, 'validation_failed', 'query/to')
    await refused({ to: '2026-1-5' }, 422, 'validation_failed', 'query/to')
    await refused({ status: 'paid' }, 422, 'validation_failed', 'query/status')
    await refused({ limit: '0' }, 422, 'validation_failed')
    await refused({ limit: '101' }, 422, 'validation_failed')
    await refused({ limit: '2.5' }, 422, 'validation_failed', 'query/limit')
    await refused({ after: 'wdr_nope' }, 422, 'validation_failed', 'query/after')
    await refused({ after: newId('withdrawal') }, 422, 'validation_failed', 'query/after')
    await refused({ user: 'nobody_at_all' }, 404, 'not_found')
    await refused({ user: newId('user') }, 404, 'not_found')
    // Empty fields are no filter, as the console's form sends them.
    expect(ids([(await get({ status: '', user: ' ', from: '', to: '' })).body.withdrawals])).toEqual(expected(() => true).slice(0, HISTORY_PAGE))
  })

  test('every operator role may list (viewer is the lowest); no credential is 401', async () => {
    const viewer = await signedInOperator(app, 'viewer')
    const page = await get({ limit: '3' }, bearer(viewer.token))
    expect(page.status).toBe(200)
    expect(page.body.withdrawals.map((w) => w.id)).toEqual(expected(() => true).slice(0, 3))
    expect((await get({}, {})).status).toBe(401)
    expect((await get({}, { 'x-admin-token': 'wrong-token-of-at-least-32-characters!' })).status).toBe(401)
  })
})

describe('arena withdrawal list', () => {
  const cli = (...args: string[]) => run([...SOURCE_COMMAND, 'withdrawal', 'list', ...args], { ARENA_DATA_DIR: dataDir, ...app.databaseEnv })

  test('--json prints the API\'s pages: a filter walked by --after lists what the route lists', async () => {
    const user = pickWith(random, users)
    const status = pickWith(random, STATUSES)
    const want = expected((r) => r.userId === user.id && r.status === status)
    const listed: string[] = []
    let after: string | null = null
    do {
      const result = await cli('--user', user.username.toLowerCase(), '--status', status, '--limit', '4', '--json', ...(after === null ? [] : ['--after', after]))
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' })
      const page = JSON.parse(result.stdout) as { withdrawals: Listed[]; cursor: string | null }
      const api = await get({ user: user.username.toLowerCase(), status, limit: '4', ...(after === null ? {} : { after }) })
      expect(page).toEqual(api.body)
      listed.push(...page.withdrawals.map((w) => w.id))
      after = page.cursor
      expect(listed.length).toBeLessThanOrEqual(rows.length)
    } while (after !== null)
    expect(listed).toEqual(want)
  }, 120_000)

  test('text is one line a withdrawal and the cursor; a bad day exits 1 naming --from; wrong words exit 2', async () => {
    const text = await cli('--from', day(3), '--to', day(3), '--limit', '100')
    expect({ code: text.code, stderr: text.stderr }).toEqual({ code: 0, stderr: '' })
    const lines = text.stdout.trim().split('\n')
    const want = expected((r) => r.createdAt.getTime() >= START + 3 * DAY && r.createdAt.getTime() < START + 4 * DAY)
    expect(lines.length).toBe(want.length + 1)
    lines.slice(0, -1).forEach((line, i) => expect(line).toContain(want[i]!))
    expect(lines.at(-1)).toStartWith('cursor -')
    const bad = await cli('--from', '2026-13-01')
    expect(bad.code).toBe(1)
    expect(bad.stderr).toContain('--from')
    const nobody = await cli('--user', 'nobody_at_all')
    expect(nobody.code).toBe(1)
    expect(nobody.stderr).toContain('No user')
    expect((await run([...SOURCE_COMMAND, 'withdrawal', 'show'], { ARENA_DATA_DIR: dataDir, ...app.databaseEnv })).code).toBe(2)
  }, 120_000)
})
