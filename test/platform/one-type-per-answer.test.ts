// One type per answer: what a route answers is declared once, as the TypeBox
// model in its module's model.ts, and the code that builds or reads the answer
// (services, the console, the CLI, tests) uses the model's static type
// (`Static<typeof Model>`, exported beside the model). A hand-written
// `interface XView` beside it is a second declaration that drifts: a field
// added to the model and not to the view compiles, and the route strips it.
// The SDK (packages/sdk) keeps its own types, as it ships alone; the drift
// tests in test/sdk/wire-types.* hold them to the models.
import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { ROOT } from '../helpers/process'

/**
 * Views with no model to come from, each with why: no route answers them.
 * Adding one here needs the same reason.
 */
const NO_MODEL: Record<string, string> = {
  OperatorSessionView: "the console's list of an operator's own sessions (src/console/pages/account.tsx); no API route answers it",
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(path)
    return /\.tsx?$/.test(entry.name) ? [path] : []
  })
}

/** The hand-written view types a text declares: an interface named …View, or a type alias of an object literal. */
function handWrittenViews(text: string): string[] {
  return [...text.matchAll(/^\s*(?:export\s+)?(?:interface\s+(\w+View)\b|type\s+(\w+View)\s*=\s*\{)/gm)].map((m) => (m[1] ?? m[2])!)
}

describe('one type per answer', () => {
  test('no hand-written *View type in src/ or test/ beside a model: the model’s static type is used', () => {
    const offenders = [join(ROOT, 'src'), join(ROOT, 'test')]
      .flatMap(sourceFiles)
      .flatMap((path) => handWrittenViews(readFileSync(path, 'utf8')).map((name) => ({ name, path: relative(ROOT, path) })))
      .filter(({ name }) => !(name in NO_MODEL))
      .map(({ name, path }) => `${path}: ${name}`)
    expect(offenders).toEqual([])
  })

  test('every view allowed without a model is still declared (the list does not outlive its entries)', () => {
    const declared = new Set(sourceFiles(join(ROOT, 'src')).flatMap((path) => handWrittenViews(readFileSync(path, 'utf8'))))
    expect(Object.keys(NO_MODEL).filter((name) => !declared.has(name))).toEqual([])
  })

  test('the check sees an interface and an object type alias, and not a model’s static type', () => {
    expect(handWrittenViews('export interface WalletView {\n  asset: string\n}')).toEqual(['WalletView'])
    expect(handWrittenViews('type WithdrawalView = { id: string }')).toEqual(['WithdrawalView'])
    expect(handWrittenViews('export type RegistrationView = Static<typeof RegistrationView>')).toEqual([])
    expect(handWrittenViews('export type { Match as MatchView } from "../model"')).toEqual([])
  })
})
