// docs/tests.md is the feature → tests index a newcomer starts from: it lists
// every test file under test/ (a `*.test.ts` bun runs, a `*.check.ts` tsc
// checks) by the feature it holds. So that it stays true, every such file
// must be named there, and every test/ path it names must exist (a file
// renamed or removed is a dead line). The shared set-up (test/helpers/, a
// folder's support files and fixtures) is no test and need not be listed.
import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { ROOT } from '../helpers/process'

const INDEX = join(ROOT, 'docs', 'tests.md')

/** Files bun runs or tsc checks as tests: the shared set-up and fixtures are not. */
function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === 'helpers' || entry.name === 'fixtures' ? [] : testFiles(path)
    return /\.(test|check)\.tsx?$/.test(entry.name) ? [relative(ROOT, path)] : []
  })
}

/** The test/ paths a text names (each `test/…` not inside another path), without a trailing slash or dot. */
function namedPaths(text: string): string[] {
  return [...text.matchAll(/(?<![\w./-])test\/[\w./*-]*[\w*]/g)].map((m) => m[0])
}

describe('docs/tests.md, the feature → tests index', () => {
  const text = readFileSync(INDEX, 'utf8')
  const named = namedPaths(text)

  test('every test file under test/ is listed', () => {
    const listed = new Set(named)
    const missing = testFiles(join(ROOT, 'test')).filter((file) => !listed.has(file))
    // A new test file: add it under its feature in docs/tests.md.
    expect(missing).toEqual([])
  })

  test('every test path it names exists (a glob matches at least one file)', async () => {
    const dead: string[] = []
    for (const path of new Set(named)) {
      if (!path.includes('*')) {
        if (!existsSync(join(ROOT, path))) dead.push(path)
        continue
      }
      const matches = await Array.fromAsync(new Bun.Glob(path).scan({ cwd: ROOT }))
      if (matches.length === 0) dead.push(path)
    }
    expect(dead).toEqual([])
  })

  test('the paths are read from the page as written: listed files, folders and globs in commands', () => {
    expect(namedPaths('- `test/auth/login.test.ts`: login\nnpx bun test test/wallet test/security/pin-*.test.ts docs/tests.md packages/x/test/y.ts')).toEqual([
      'test/auth/login.test.ts',
      'test/wallet',
      'test/security/pin-*.test.ts',
    ])
    expect(named.length).toBeGreaterThan(testFiles(join(ROOT, 'test')).length)
  })
})
