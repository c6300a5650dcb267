// A test skipped because it needs the other engine says so: describeOnEngine
// and testOnEngine (test/helpers/engine.ts) print one line naming it, the
// engine it needs and the command that runs it, under `npm test` and under
// `npm run test:pg` alike; and no test file skips on the engine any other
// way, so no engine-only test is skipped without a word. Every Debian package
// a skip asks for is one the README's test section tells how to install.
import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { ROOT, run } from '../helpers/process'

const FIXTURE = './test/platform/fixtures/engine-skips.fixture.ts'

/** Every .ts file under test/. */
function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name)
    if (d.isDirectory()) return testFiles(path)
    return d.name.endsWith('.ts') ? [path] : []
  })
}

describe('engine-only tests', () => {
  for (const [engine, env, other, command] of [
    ['sqlite', {}, 'PostgreSQL', 'npm run test:pg'],
    ['postgres', { ARENA_TEST_ENGINE: 'postgres' }, 'SQLite', 'npm test'],
  ] as const) {
    test(`on ${engine}, the other engine's suites and tests skip, each saying so once`, async () => {
      const ran = await run([process.execPath, 'test', FIXTURE], env)
      const output = ran.stdout + ran.stderr
      expect(ran.code).toBe(0)
      const lines = output.split('\n').filter((l) => l.startsWith('skipping "'))
      const here = engine === 'sqlite' ? 'SQLite' : 'PostgreSQL'
      expect(lines).toEqual([
        `skipping "fixture suite on ${other}": ${other} only, this run is on ${here} (\`${command}\` runs it)`,
        `skipping "fixture test on ${other}": ${other} only, this run is on ${here} (\`${command}\` runs it)`,
      ])
      // The engine's own ran and passed (their assertions name the engine), the others were skipped, not run.
      expect(output).toMatch(/\b2 pass\b/)
      expect(output).toMatch(/\b2 skip\b/)
      expect(output).toMatch(/\b0 fail\b/)
    }, 30_000)
  }

  test('every Debian package a skip asks for is in the README’s install line and its table', () => {
    const asked = new Set<string>()
    for (const file of testFiles(join(ROOT, 'test'))) {
      if (file === import.meta.path) continue
      for (const m of readFileSync(file, 'utf8').matchAll(/Debian package ([a-z0-9-]+)|apt-get install ([a-z0-9-]+)/g)) asked.add((m[1] ?? m[2])!)
    }
    expect([...asked].sort()).toEqual(expect.arrayContaining(['chromium', 'fiu-utils', 'postgresql']))
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    const install = /`sudo apt-get install ([a-z0-9 -]+)`/.exec(readme)
    expect(install).not.toBeNull()
    const table = new Set([...readme.matchAll(/^\| `([a-z0-9-]+)` \| the |^\| `([a-z0-9-]+)` \| /gm)].map((m) => (m[1] ?? m[2])!))
    for (const pkg of asked) {
      expect(install![1]!.split(' ')).toContain(pkg)
      expect(table).toContain(pkg)
    }
  })

  test('every engine-only skip in test/ goes through describeOnEngine or testOnEngine', () => {
    // `describe.skipIf(!onEngine('postgres'))`, `test.if(TEST_ENGINE === 'sqlite')`, ...: silent skips.
    const raw = /\b(?:describe|test|it)\.(?:skipIf|if|todoIf)\(\s*!?\s*\(?\s*(?:onEngine|TEST_ENGINE)\b/
    const offenders: string[] = []
    for (const file of testFiles(join(ROOT, 'test'))) {
      if (file.endsWith(join('helpers', 'engine.ts')) || file === import.meta.path) continue
      for (const [i, line] of readFileSync(file, 'utf8').split('\n').entries()) if (raw.test(line)) offenders.push(`${relative(ROOT, file)}:${i + 1}`)
    }
    expect(offenders).toEqual([])
    // The pattern finds what it must.
    expect(raw.test("describe.skipIf(!onEngine('postgres'))('x', () => {})")).toBe(true)
    expect(raw.test("test.if(TEST_ENGINE === 'sqlite')('x', () => {})")).toBe(true)
  })
})
