// Upgrading past the formats (migrations 0011-0013 / pg 0004-0006): a
// participant disqualified ahead of a not-yet-known opponent was marked on the
// match (forfeit_participant_id, 0010 / pg 0003); the upgrade carries the mark
// to participants.disqualified_at before dropping the column, so that player
// does not play on. Run on both engines: the migrations up to the old schema,
// a marked match, then the rest.
import { expect, test } from 'bun:test'
import { TEST_ENGINE } from '../helpers/app'
import { engineMigrations, migrationsBefore, upgradeSeeded } from '../helpers/migrations'

const all = engineMigrations()
/** The migrations up to and including the one that added forfeit_participant_id. */
const upToDeadlines = migrationsBefore(all, 'forfeit_participant_id', true)

// The users are left out: the mark is what this test is about (foreign keys
// off for the seeding only). The game and the tournament stay: a later
// migration (0025 / pg 0018) gives each match its tournament's game.
const seed = (now: string) => [
  `INSERT INTO games (id, name, key_hash, key_rotated_at, created_at) VALUES ('gam_1', 'Game', 'hash', ${now}, ${now})`,
  `INSERT INTO tournaments (id, game_id, name, format, status, created_at) VALUES ('trn_1', 'gam_1', 'Cup', 'single_elimination', 'running', ${now})`,
  `INSERT INTO participants (id, tournament_id, user_id, seed) VALUES ('par_out', 'trn_1', 'usr_1', 1), ('par_in', 'trn_1', 'usr_2', 2)`,
  `INSERT INTO matches (id, tournament_id, round, position, status, slot1_participant_id, forfeit_participant_id) VALUES ('mat_1', 'trn_1', 2, 1, 'waiting', 'par_out', 'par_out')`,
]

test(`${TEST_ENGINE}: a forfeit mark on a match becomes the participant's disqualification`, async () => {
  expect(upToDeadlines.length).toBeGreaterThan(0)
  expect(upToDeadlines.length).toBeLessThan(all.length)
  let before = 0
  const seeded = (now: string) => {
    before = Date.now()
    return seed(now)
  }
  await upgradeSeeded(upToDeadlines, all, seeded, {
    sqlite(db) {
      const rows = db.query<{ id: string; disqualified_at: number | null }, []>('SELECT id, disqualified_at FROM participants ORDER BY id').all()
      expect(rows.map((r) => [r.id, r.disqualified_at !== null])).toEqual([['par_in', false], ['par_out', true]])
      expect(rows.find((r) => r.id === 'par_out')!.disqualified_at!).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000)
      expect(db.query("SELECT name FROM pragma_table_info('matches') WHERE name = 'forfeit_participant_id'").all()).toEqual([])
    },
    async postgres(sql) {
      const rows = await sql<{ id: string; out: boolean }[]>`SELECT id, disqualified_at IS NOT NULL AS out FROM participants ORDER BY id`
      expect(rows.map((r) => [r.id, r.out])).toEqual([['par_in', false], ['par_out', true]])
      expect(await sql`SELECT 1 FROM information_schema.columns WHERE table_name = 'matches' AND column_name = 'forfeit_participant_id'`).toHaveLength(0)
    },
  })
})
