// A format owns its knowledge (docs/architecture.md, "Adding a format"): its
// engine in src/modules/games/formats/ declares what the rest of the code asks
// (label, brackets, draws, how it plays, what a decision reads, player cap,
// options and their checks), and every list of formats outside that folder
// (the API's, the database's, the CLI's, the console's) is read off the
// registry. So no other file names a format, the one exception being
// `arena seed`, which creates one tournament of each on purpose.
//
// What counts as naming: a format's name as stored and sent
// (`single_elimination`, `double_elimination`, `round_robin`, `swiss`),
// case-sensitive, as a whole word, anywhere in the file, comments included
// (a comment naming a stored value is knowledge a new format would have to
// find and edit). Prose that says "round robin" or "Swiss" is not a name and
// is fine, in comments and in the API's descriptions alike.
import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { allFormats, BRACKETS, DEFAULT_FORMAT, FORMAT_NAMES, FORMAT_OPTIONS, ownerOf, type FormatOptionName } from '../../../src/modules/games/formats/engines'
import { checkParticipants } from '../../../src/modules/games/formats/engine'

const ROOT = join(import.meta.dir, '..', '..', '..')
const SRC = join(ROOT, 'src')
const FORMATS_DIR = 'src/modules/games/formats/'
const ALLOWED = new Set(['src/cli/seed-command.ts'])
const NAME = /\b(single_elimination|double_elimination|round_robin|swiss)\b/

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    return entry.isDirectory() ? files(path) : [path]
  })
}

/** Every line of src/ that names a format, as `path:line: text`. */
function namings(): { path: string; line: string }[] {
  return files(SRC).flatMap((path) => {
    const rel = relative(ROOT, path)
    return readFileSync(path, 'utf8')
      .split('\n')
      .flatMap((text, i) => (NAME.test(text) ? [{ path: rel, line: `${rel}:${i + 1}: ${text.trim()}` }] : []))
  })
}

describe('a format owns its knowledge', () => {
  test('no file outside src/modules/games/formats/ names a format, but the seed command', () => {
    const found = namings()
    // The search itself finds names where they are meant to be (else it proves nothing): every format in its folder, and the seed command's.
    for (const name of FORMAT_NAMES) expect(found.some((n) => n.path.startsWith(FORMATS_DIR) && n.line.includes(name))).toBe(true)
    expect(found.some((n) => ALLOWED.has(n.path))).toBe(true)
    expect(found.filter((n) => !n.path.startsWith(FORMATS_DIR) && !ALLOWED.has(n.path)).map((n) => n.line)).toEqual([])
  })

  test('the registry: distinct names and labels, options owned by one format each, the first format the default', () => {
    const formats = allFormats()
    expect(formats.map((f) => f.name)).toEqual([...FORMAT_NAMES])
    expect(DEFAULT_FORMAT).toBe(FORMAT_NAMES[0])
    expect(new Set(formats.map((f) => f.label)).size).toBe(formats.length)
    const owned = formats.flatMap((f) => Object.keys(f.options))
    expect(new Set(owned).size).toBe(owned.length)
    expect(Object.keys(FORMAT_OPTIONS).sort()).toEqual([...owned].sort())
    for (const option of owned) expect(Object.keys(ownerOf(option as FormatOptionName).options)).toContain(option)
    // Every bracket once; a format's brackets in its own order.
    expect(new Set(BRACKETS).size).toBe(BRACKETS.length)
    for (const f of formats) {
      const at = f.brackets.map((b) => (BRACKETS as readonly string[]).indexOf(b))
      expect(at).toEqual([...at].sort((a, b) => a - b))
    }
  })

  test('an engine makes matches only in the brackets it declares, and its player cap is below every format\'s', () => {
    for (const f of allFormats()) {
      for (const n of [2, 3, 4, 5, 8, 13, 16]) {
        const ctx = { participants: Array.from({ length: n }, (_, i) => `p${i + 1}`), options: {} }
        checkParticipants(ctx)
        const brackets = new Set(f.start(ctx).map((m) => m.bracket))
        for (const b of brackets) expect({ format: f.name, n, bracket: b, declared: f.brackets.includes(b) }).toEqual({ format: f.name, n, bracket: b, declared: true })
      }
      if (f.maxPlayers) expect(f.maxPlayers.limit).toBeLessThan(1024)
    }
    // Options that make more brackets: single elimination's third-place match, double elimination's grand final.
    for (const f of allFormats()) {
      const options = { thirdPlaceMatch: true, grandFinal: 'reset' as const }
      const made = f.start({ participants: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'], options }).map((m) => m.bracket)
      expect(made.filter((b) => !f.brackets.includes(b))).toEqual([])
    }
  })
})
