// The stores written once (src/db/stores) run on both engines, so they may
// only say what both engines' Drizzle say the same way: queries built on the
// scope's `db` over the scope's tables `t`, each awaited (rows as an array).
// SQLite's synchronous `.get()`, `.all()`, `.run()` do not exist on
// PostgreSQL, and PostgreSQL's raw `execute`, row locks and postgres.js do not
// exist on SQLite; an engine's own tables or Drizzle imported here would run
// one engine's SQL on the other. Each of those is a test failure here rather
// than a 500 on the engine the author did not try.
import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

const DIR = join(import.meta.dir, '../../src/db/stores')

const FORBIDDEN: [RegExp, string][] = [
  [/\.(get|all|run)\(\s*\)/, "SQLite's synchronous .get()/.all()/.run(): await the query instead"],
  [/\.execute\(/, "PostgreSQL's raw execute(): build the query with Drizzle"],
  [/\.for\(\s*'/, "a PostgreSQL row lock: it belongs in the PostgreSQL store's subclass"],
  [/from '(drizzle-orm\/(sqlite-core|pg-core|bun-sqlite|postgres-js)|postgres|bun:sqlite)'/, 'an engine library'],
  [/^import (?!type)[^\n]*from '\.\.\/(sqlite|postgres|schema)(\/[^']*)?'/m, "an engine's module or the schema's tables (use the scope's `t`)"],
  [/scope\.(handle|sql)\b/, "an engine's own connection"],
]

describe('stores written once', () => {
  const files = readdirSync(DIR).filter((f) => f.endsWith('.ts'))

  test('there are some, and each is checked', () => {
    expect(files.length).toBeGreaterThan(1)
  })

  for (const file of files) {
    test(`${file} says only what both engines say`, () => {
      // Comments may name what the code may not use.
      const text = readFileSync(join(DIR, file), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '')
      const found = FORBIDDEN.filter(([pattern]) => pattern.test(text)).map(([, why]) => why)
      expect(found).toEqual([])
    })
  }
})
