// The migrations are generated from the one schema (src/db/schema, and
// PostgreSQL's tables built from it), never hand-edited: each engine's last
// migration snapshot must be exactly what drizzle-kit makes of the schema as
// it is now. A column added to the schema without `npm run db:generate`
// fails here, naming the statements the missing migration would hold,
// instead of failing a deployment on its first query.
import { describe, expect, test } from 'bun:test'
import { generateDrizzleJson, generateMigration, generateSQLiteDrizzleJson, generateSQLiteMigration } from 'drizzle-kit/api'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import * as sqliteSchema from '../../src/db/schema'
import * as postgresSchema from '../../src/db/postgres/schema'

const ROOT = join(import.meta.dir, '../..')

function lastSnapshot(folder: string) {
  const meta = join(ROOT, folder, 'meta')
  const newest = readdirSync(meta)
    .filter((f) => f.endsWith('_snapshot.json'))
    .sort()
    .at(-1)
  if (!newest) throw new Error(`no snapshot in ${meta}`)
  return JSON.parse(readFileSync(join(meta, newest), 'utf8'))
}

describe('migrations are fresh', () => {
  test('SQLite: ./drizzle holds the schema as it is (npm run db:generate adds nothing)', async () => {
    const missing = await generateSQLiteMigration(lastSnapshot('drizzle'), await generateSQLiteDrizzleJson(sqliteSchema))
    expect(missing).toEqual([])
  })

  test('PostgreSQL: ./drizzle-postgres holds the schema as it is (npm run db:generate adds nothing)', async () => {
    const missing = await generateMigration(lastSnapshot('drizzle-postgres'), generateDrizzleJson(postgresSchema))
    expect(missing).toEqual([])
  })

  test('every snapshot has its migration file, in order', () => {
    for (const folder of ['drizzle', 'drizzle-postgres']) {
      const journal = JSON.parse(readFileSync(join(ROOT, folder, 'meta', '_journal.json'), 'utf8')) as { entries: { idx: number; tag: string }[] }
      const files = readdirSync(join(ROOT, folder)).filter((f) => f.endsWith('.sql')).sort()
      expect(files).toEqual(journal.entries.map((e) => `${e.tag}.sql`))
      expect(journal.entries.map((e) => e.idx)).toEqual(journal.entries.map((_, i) => i))
    }
  })
})
