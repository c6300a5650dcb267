// Upgrading past matchmaking (migration 0025 / pg 0018): every match stored
// before it gets its tournament's game and the kind `tournament`, nothing
// else of it changes, and its participants keep their tournament. On SQLite
// the migration rebuilds both tables; on PostgreSQL it adds the column,
// fills it, then makes it NOT NULL. Run on both engines.
import { expect, test } from 'bun:test'
import { TEST_ENGINE } from '../helpers/app'
import { engineMigrations, migrationsBefore, upgradeSeeded } from '../helpers/migrations'

const all = engineMigrations()
const beforeMatchmaking = migrationsBefore(all, 'challenge_rake')

const seed = (now: string) => [
  `INSERT INTO games (id, name, key_hash, key_rotated_at, created_at) VALUES ('gam_a', 'A', 'ha', ${now}, ${now}), ('gam_b', 'B', 'hb', ${now}, ${now})`,
  `INSERT INTO tournaments (id, game_id, name, format, status, created_at) VALUES ('trn_a', 'gam_a', 'Cup A', 'single_elimination', 'running', ${now}), ('trn_b', 'gam_b', 'Cup B', 'round_robin', 'running', ${now})`,
  `INSERT INTO participants (id, tournament_id, user_id, seed) VALUES ('par_1', 'trn_a', 'usr_1', 1), ('par_2', 'trn_a', 'usr_2', 2), ('par_3', 'trn_b', 'usr_3', 1)`,
  `INSERT INTO matches (id, tournament_id, round, position, status, slot1_participant_id, slot2_participant_id, claim_round) VALUES ('mat_a', 'trn_a', 1, 1, 'running', 'par_1', 'par_2', 2), ('mat_b', 'trn_b', 1, 1, 'waiting', 'par_3', NULL, 1)`,
]

const EXPECTED = [
  { id: 'mat_a', game_id: 'gam_a', kind: 'tournament', tournament_id: 'trn_a', status: 'running', slot1: 'par_1', slot2: 'par_2', claim_round: 2, stake: null, terms: null },
  { id: 'mat_b', game_id: 'gam_b', kind: 'tournament', tournament_id: 'trn_b', status: 'waiting', slot1: 'par_3', slot2: null, claim_round: 1, stake: null, terms: null },
]
const MATCHES = 'SELECT id, game_id, kind, tournament_id, status, slot1_participant_id AS slot1, slot2_participant_id AS slot2, claim_round, stake, terms FROM matches ORDER BY id'
const PARTICIPANTS = 'SELECT id, tournament_id FROM participants ORDER BY id'

test(`${TEST_ENGINE}: every match stored before matchmaking gets its tournament's game and the kind tournament`, async () => {
  expect(beforeMatchmaking.length).toBeGreaterThan(0)
  expect(beforeMatchmaking.length).toBeLessThan(all.length)
  await upgradeSeeded(beforeMatchmaking, all, seed, {
    sqlite(db) {
      expect(db.query(MATCHES).all()).toEqual(EXPECTED)
      expect(db.query(PARTICIPANTS).all()).toEqual([
        { id: 'par_1', tournament_id: 'trn_a' },
        { id: 'par_2', tournament_id: 'trn_a' },
        { id: 'par_3', tournament_id: 'trn_b' },
      ])
      expect(db.query("SELECT \"notnull\" AS nn FROM pragma_table_info('matches') WHERE name = 'game_id'").get()).toEqual({ nn: 1 })
    },
    async postgres(sql) {
      expect([...(await sql.unsafe<Record<string, unknown>[]>(MATCHES))].map((r) => ({ ...r }))).toEqual(EXPECTED)
      expect([...(await sql.unsafe<{ id: string; tournament_id: string }[]>(PARTICIPANTS))].map((r) => ({ id: r.id, tournament_id: r.tournament_id }))).toEqual([
        { id: 'par_1', tournament_id: 'trn_a' },
        { id: 'par_2', tournament_id: 'trn_a' },
        { id: 'par_3', tournament_id: 'trn_b' },
      ])
      const [column] = await sql<{ is_nullable: string }[]>`SELECT is_nullable FROM information_schema.columns WHERE table_name = 'matches' AND column_name = 'game_id'`
      expect(column?.is_nullable).toBe('NO')
    },
  })
})
