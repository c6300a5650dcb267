// One type per answer: what a route answers is declared once, as the TypeBox
// model in its module's model.ts, and the code that builds or reads the answer
// (services, the console, the CLI, tests) uses the model's static type
// (`Static<typeof Model>`, exported beside the model). A hand-written
// `interface XView` beside it is a second declaration that drifts: a field
// added to the model and not to the view compiles, and the route strips it.
// The SDK (packages/sdk) keeps its own types, as it ships alone; the drift
// tests in test/sdk/wire-types.* hold them to the models. Beyond the name, no
// hand-written object type may have exactly the fields of a model.
import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import ts from 'typescript'
import { ROOT } from '../helpers/process'

/**
 * Views with no model to come from, each with why: no route answers them.
 * Adding one here needs the same reason.
 */
const NO_MODEL: Record<string, string> = {
  OperatorSessionView: "the console's list of an operator's own sessions (src/console/pages/account.tsx); no API route answers it",
}

/**
 * Hand-written object types with exactly the fields of a model, each with why
 * it stays. The first three are answers whose model lives with its route
 * (admin, auth) rather than with the module that builds them: they go when
 * the model moves to its owner.
 */
const SAME_FIELDS_AS_A_MODEL: Record<string, string> = {
  'src/modules/wallet/holdings.ts: Holdings': 'the model is admin/model.ts Holdings; to move to wallet/model.ts with its owner',
  'src/modules/wallet/holdings.ts: StatementEntry': "the model is auth/model.ts LedgerEntry (the account export's); typed here by the ledger's own kinds; to move to wallet/model.ts with its owner",
  'src/modules/security/pin-service.ts: PinState': 'the model is admin/model.ts PinStateModel; to move with the PIN to its owner',
  'src/modules/games/formats/engine.ts: StandingRow': "a format engine's pure result (src/modules/games/formats imports nothing of the models)",
  'src/modules/games/store.ts: GameSummary': 'a stored row: its createdAt is a Date (games/service.ts gameView writes the model Game)',
  'src/modules/ratings/store.ts: SeasonRecord': 'a stored row: its instants are Dates (service.ts toSeason writes the model Season)',
  'src/modules/matchmaking/matcher.ts: QueueWindow': "the matcher is pure (it imports nothing of the models), as a format engine's StandingRow",
  'src/modules/matchmaking/store.ts: QueueRecord': 'a stored row: its instants are Dates, its stake minor units (service.ts toQueue writes the model Queue)',
  'src/modules/integrity/store.ts: RaisedSignal': 'a stored JSON value (integrity_flags, payout_holds) the schema types its column with; the model RaisedSignalModel is how the API shows it, field for field',
  'test/helpers/purchases.ts: VerifyBody': 'a body a test sends, every field `unknown` so that a hostile one can be sent',
}

/** Every object model (a TypeBox `t.Object`) of src/: its sorted field names → where it is. */
async function objectModels(): Promise<Map<string, string>> {
  const found = new Map<string, string>()
  for (const path of sourceFiles(join(ROOT, 'src')).filter((p) => /\/models?\.ts$/.test(p))) {
    for (const [name, value] of Object.entries(await import(path))) {
      const schema = value as { type?: unknown; properties?: Record<string, unknown> } | null
      if (schema && typeof schema === 'object' && schema.type === 'object' && schema.properties) {
        found.set(Object.keys(schema.properties).sort().join(','), `${relative(ROOT, path)} ${name}`)
      }
    }
  }
  return found
}

const parsed = new Map<string, { name: string; fields: string[] }[]>()

/** The object types a file writes by hand (an interface without `extends`, a type alias of an object literal), by their field names. */
function objectTypes(path: string): { name: string; fields: string[] }[] {
  const known = parsed.get(path)
  if (known) return known
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true)
  const out: { name: string; fields: string[] }[] = []
  const visit = (node: ts.Node): void => {
    let members: ts.NodeArray<ts.TypeElement> | undefined
    if (ts.isInterfaceDeclaration(node) && !node.heritageClauses) members = node.members
    if (ts.isTypeAliasDeclaration(node) && ts.isTypeLiteralNode(node.type)) members = node.type.members
    if (members) out.push({ name: (node as ts.InterfaceDeclaration | ts.TypeAliasDeclaration).name.text, fields: members.filter(ts.isPropertySignature).map((m) => m.name.getText()).sort() })
    ts.forEachChild(node, visit)
  }
  visit(source)
  parsed.set(path, out)
  return out
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

  test('no hand-written object type in src/ or test/ has exactly the fields of a model, whatever its name', async () => {
    const models = await objectModels()
    const offenders = [join(ROOT, 'src'), join(ROOT, 'test')]
      .flatMap(sourceFiles)
      .flatMap((path) => objectTypes(path).map((type) => ({ ...type, at: `${relative(ROOT, path)}: ${type.name}` })))
      .filter(({ fields, at }) => fields.length >= 2 && models.has(fields.join(',')) && !(at in SAME_FIELDS_AS_A_MODEL))
      .map(({ fields, at }) => `${at} has the fields of ${models.get(fields.join(','))}`)
    expect(offenders).toEqual([])
    expect(models.size).toBeGreaterThan(50)
  })

  test('every exception listed is still declared (the lists do not outlive their entries)', () => {
    const declared = new Set(sourceFiles(join(ROOT, 'src')).flatMap((path) => handWrittenViews(readFileSync(path, 'utf8'))))
    expect(Object.keys(NO_MODEL).filter((name) => !declared.has(name))).toEqual([])
    const written = new Set([join(ROOT, 'src'), join(ROOT, 'test')].flatMap(sourceFiles).flatMap((path) => objectTypes(path).map((type) => `${relative(ROOT, path)}: ${type.name}`)))
    expect(Object.keys(SAME_FIELDS_AS_A_MODEL).filter((at) => !written.has(at))).toEqual([])
  })

  test('the check sees an interface and an object type alias, and not a model’s static type', () => {
    expect(handWrittenViews('export interface WalletView {\n  asset: string\n}')).toEqual(['WalletView'])
    expect(handWrittenViews('type WithdrawalView = { id: string }')).toEqual(['WithdrawalView'])
    expect(handWrittenViews('export type RegistrationView = Static<typeof RegistrationView>')).toEqual([])
    expect(handWrittenViews('export type { Match as MatchView } from "../model"')).toEqual([])
    expect(objectTypes(join(ROOT, 'src', 'modules', 'wallet', 'holdings.ts')).find((type) => type.name === 'Holdings')?.fields).toEqual(['address', 'balances', 'pendingWithdrawals'])
  })
})
