// Upgrading past the rating chains (migration 0024 / pg 0017): a player's
// history, numbered by `seq` and found through a per-player index before,
// becomes a chain: each row gets an id and points at the player's previous
// row in the game, and the rating points at the last. Run on both engines:
// the migrations up to the ratings, the rows of two players in two games
// (inserted out of order, as concurrent decisions commit), then the rest.
import { expect, test } from 'bun:test'
import { TEST_ENGINE } from '../helpers/app'
import { engineMigrations, migrationsBefore, upgradeSeeded } from '../helpers/migrations'

const all = engineMigrations()
/** The migrations before the one that added ratings.history_id. */
const beforeChains = migrationsBefore(all, 'history_id')

/** [game, user, seq]: two players' chains in game g1 (3 and 2 rows), one in g2, interleaved as commits would. */
const ROWS: [string, string, number][] = [
  ['g1', 'u1', 1],
  ['g1', 'u2', 1],
  ['g2', 'u1', 1],
  ['g1', 'u2', 2],
  ['g1', 'u1', 2],
  ['g1', 'u1', 3],
]
const LAST: Record<string, number> = { 'g1 u1': 3, 'g1 u2': 2, 'g2 u1': 1 }

function seed(now: string): string[] {
  const history = ROWS.map(
    ([g, u, seq], i) =>
      `('${g}', '${u}', ${seq}, 's_${g}', 'match', 'm${i}', 'other', 'win', 1500, 350, 0.06, ${1500 + seq}, 300, 0.06, ${now})`,
  )
  const ratings = Object.entries(LAST).map(([key, seq]) => {
    const [g, u] = key.split(' ')
    return `('${g}', '${u}', 's_${g}', ${1500 + seq}, 300, 0.06, ${seq}, ${seq}, ${now}, 900, NULL, ${now})`
  })
  return [
    `INSERT INTO rating_history (game_id, user_id, seq, season_id, kind, match_id, opponent_user_id, outcome, rating_before, deviation_before, volatility_before, rating_after, deviation_after, volatility_after, created_at) VALUES ${history.join(', ')}`,
    `INSERT INTO ratings (game_id, user_id, season_id, rating, deviation, volatility, matches, seq, last_rated_at, board_display, board_decay_at, updated_at) VALUES ${ratings.join(', ')}`,
  ]
}

interface Linked {
  id: number
  game: string
  user: string
  seq: number
  previous: number | null
}

/** Every chain is linked as numbered, and every rating points at its chain's last row. */
function expectChains(history: Linked[], ratings: { game: string; user: string; history: number | null }[]) {
  expect(history).toHaveLength(ROWS.length)
  const byKey = new Map(history.map((h) => [`${h.game} ${h.user} ${h.seq}`, h]))
  for (const h of history) {
    const previous = h.seq === 1 ? null : byKey.get(`${h.game} ${h.user} ${h.seq - 1}`)!.id
    expect({ row: `${h.game} ${h.user} ${h.seq}`, previous: h.previous }).toEqual({ row: `${h.game} ${h.user} ${h.seq}`, previous })
  }
  expect(ratings.map((r) => ({ key: `${r.game} ${r.user}`, history: r.history }))).toEqual(
    Object.entries(LAST).map(([key, seq]) => ({ key, history: byKey.get(`${key} ${seq}`)!.id })),
  )
  // Ids are distinct and new rows would follow them.
  expect(new Set(history.map((h) => h.id)).size).toBe(ROWS.length)
}

test(`${TEST_ENGINE}: the history rows already stored become one chain per player and game`, async () => {
  expect(beforeChains.length).toBeGreaterThan(0)
  expect(beforeChains.length).toBeLessThan(all.length)
  await upgradeSeeded(beforeChains, all, seed, {
    sqlite(db) {
      const history = db.query<Linked, []>('SELECT id, game_id AS game, user_id AS user, seq, previous_id AS previous FROM rating_history ORDER BY id').all()
      const ratings = db.query<{ game: string; user: string; history: number | null }, []>('SELECT game_id AS game, user_id AS user, history_id AS history FROM ratings ORDER BY game_id, user_id').all()
      expectChains(history, ratings)
      // The index the backfill used is gone: nothing indexes the history but its id.
      expect(db.query("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'rating_history'").all()).toEqual([])
    },
    async postgres(sql) {
      const history = (await sql<{ id: string; game: string; user: string; seq: number; previous: string | null }[]>`
        SELECT id, game_id AS game, user_id AS user, seq, previous_id AS previous FROM rating_history ORDER BY id`).map((h) => ({ ...h, id: Number(h.id), previous: h.previous === null ? null : Number(h.previous) }))
      const ratings = (await sql<{ game: string; user: string; history: string | null }[]>`
        SELECT game_id AS game, user_id AS user, history_id AS history FROM ratings ORDER BY game_id, user_id`).map((r) => ({ ...r, history: r.history === null ? null : Number(r.history) }))
      expectChains(history, ratings)
      expect(await sql`SELECT indexname FROM pg_indexes WHERE tablename = 'rating_history' AND indexname <> 'rating_history_pkey'`).toHaveLength(0)
    },
  })
})
