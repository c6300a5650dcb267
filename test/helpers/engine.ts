// Suites and tests that mean something on one engine only. On the other
// engine's run they are skipped, and say so: one line naming the suite, the
// engine it needs and the command that runs it, so a skip under `npm test`
// (PostgreSQL-only: two instances on one database, advisory locks, ...) or
// under `npm run test:pg` (SQLite-only: the group committer, the data dir's
// files) is never silent. test/platform/engine-skips.test.ts holds every
// engine-only skip in test/ to these two.
import { describe, test } from 'bun:test'
import { onEngine, TEST_ENGINE } from './app'

type Engine = 'sqlite' | 'postgres'

const ENGINES: Record<Engine, { name: string; command: string }> = {
  sqlite: { name: 'SQLite', command: 'npm test' },
  postgres: { name: 'PostgreSQL', command: 'npm run test:pg' },
}

/** The line a skip prints: `skipping "two instances": PostgreSQL only, this run is on SQLite (`npm run test:pg` runs it)`. */
export function engineSkipLine(engine: Engine, name: string): string {
  return `skipping "${name}": ${ENGINES[engine].name} only, this run is on ${ENGINES[TEST_ENGINE].name} (\`${ENGINES[engine].command}\` runs it)`
}

/** `describe` on `engine` only; on the other engine skipped, saying so. */
export function describeOnEngine(engine: Engine, name: string, body: () => void): void {
  if (onEngine(engine)) return describe(name, body)
  console.log(engineSkipLine(engine, name))
  describe.skip(name, body)
}

/** `test` on `engine` only; on the other engine skipped, saying so. */
export function testOnEngine(engine: Engine, name: string, fn: () => unknown, timeout?: number): void {
  if (onEngine(engine)) return test(name, fn as () => Promise<void>, timeout)
  console.log(engineSkipLine(engine, name))
  test.skip(name, fn as () => Promise<void>, timeout)
}
