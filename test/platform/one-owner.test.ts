// One owner per concept (docs/architecture.md, "Games, tournaments and
// matches: one owner each"). What must stay true as the code grows:
// - the game key is issued, hashed, compared and its wrong tries counted in
//   games/game-keys.ts alone (a second copy of the check would be a second
//   place to forget the constant-time comparison or the counter's bound);
// - matches/service.ts keeps game sessions and claims: it takes no operator
//   action (those are games/tournament-operations.ts, recorded there);
// - the services of games, matches and operators stay files of one idea, not
//   one file of three: none grows past MAX_SERVICE_LINES.
import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'

const SRC = join(import.meta.dir, '../../src')
const MODULES = join(SRC, 'modules')
/** The "about 350 lines", with room for a comment; past it, split along the seam. */
const MAX_SERVICE_LINES = 400

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.tsx?$/.test(e.name))
    .map((e) => join(e.parentPath, e.name))
}

/** A file's code without its comments (comments may name what the code may not do). */
function code(file: string): string {
  return readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '')
}

describe('one owner per concept', () => {
  test('the game key is issued, compared and counted only in games/game-keys.ts', () => {
    const owner = join(MODULES, 'games/game-keys.ts')
    const marks = [/'agk_'/, /INVALID_GAME_KEY_BURST/, /\.keyHashOf\(/, /new BadKeyTracker\(/]
    const elsewhere = sources(SRC)
      .filter((file) => file !== owner && !file.startsWith(join(SRC, 'db') + '/'))
      .filter((file) => marks.some((mark) => mark.test(code(file))))
      .map((file) => relative(SRC, file))
    expect(elsewhere).toEqual([])
    for (const mark of marks) expect(code(owner)).toMatch(mark)
  })

  test('matches/service.ts takes no operator action: resolve, correct and disqualify are tournament operations', () => {
    const matches = code(join(MODULES, 'matches/service.ts'))
    expect(matches).not.toMatch(/\bby\.record\(/)
    expect(matches).not.toMatch(/\b(resolve|correct|disqualify)\(/)
    const operations = code(join(MODULES, 'games/tournament-operations.ts'))
    for (const action of ['match.resolve', 'match.correct', 'participant.disqualify']) expect(operations).toContain(`action: '${action}'`)
  })

  test(`the services of games, matches and operators are at most ${MAX_SERVICE_LINES} lines each`, () => {
    const long = ['games', 'matches', 'operators']
      .flatMap((module) => readdirSync(join(MODULES, module)).filter((f) => f.endsWith('.ts') && f !== 'store.ts' && f !== 'model.ts').map((f) => join(MODULES, module, f)))
      .map((file) => ({ file: relative(SRC, file), lines: readFileSync(file, 'utf8').split('\n').length }))
      .filter(({ lines }) => lines > MAX_SERVICE_LINES)
    expect(long).toEqual([])
  })
})
