// A client generated from GET /openapi/json by a third-party generator types
// every request: openapi-typescript's types of the served document and a
// journey written against them with openapi-fetch (openapi-client/journey.ts:
// no cast, no `any`) pass `tsc --strict`, and the journey then runs correctly
// against a live server. The same check fails on a body of the wrong type, and
// on the document as it was before bodies were described (`content: {}`).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { copyFileSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import ts from 'typescript'
import { createArenaApp, ADMIN_TOKEN } from '../helpers/arena'
import { tempDir, type TestApp } from '../helpers/app'
import { run, ROOT } from '../helpers/process'
import { someAddress } from '../helpers/purchases'
import { RAW_BODY_ROUTES } from '../../src/plugins/json-body'
import { openApiPath } from '../../src/plugins/openapi'

const FIXTURE = join(import.meta.dir, 'openapi-client', 'journey.ts')

/** A body whose field has the wrong type: tsc must refuse it (its line is WRONG_LINE). */
const WRONG = `import createClient from 'openapi-fetch'
import type { paths } from './api'
const client = createClient<paths>({ baseUrl: 'http://localhost' })
export const login = client.POST('/api/v1/user/login', { body: { identifier: 'alice', password: 1234 } })
`
const WRONG_LINE = 4

interface Diagnostic {
  file: string
  line: number
  code: string
  message: string
}

/** tsc's `path/file(line,col): error TSnnnn: message` lines, by the file's name. */
function diagnostics(output: string): Diagnostic[] {
  return [...output.matchAll(/^(\S+?)\((\d+),\d+\): error (TS\d+): (.*)$/gm)].map((m) => ({ file: basename(m[1]!), line: Number(m[2]), code: m[3]!, message: m[4]! }))
}

/** Casts, `any`, and non-null assertions in a source: what the journey must do without. */
function escapes(source: string): string[] {
  const file = ts.createSourceFile('journey.ts', source, ts.ScriptTarget.Latest, true)
  const found: string[] = []
  const visit = (node: ts.Node): void => {
    const line = file.getLineAndCharacterOfPosition(node.getStart()).line + 1
    if (ts.isAsExpression(node)) found.push(`line ${line}: cast \`${node.getText()}\``)
    if (ts.isTypeAssertionExpression(node)) found.push(`line ${line}: cast \`${node.getText()}\``)
    if (ts.isNonNullExpression(node)) found.push(`line ${line}: non-null assertion \`${node.getText()}\``)
    if (node.kind === ts.SyntaxKind.AnyKeyword) found.push(`line ${line}: any`)
    ts.forEachChild(node, visit)
  }
  visit(file)
  return found
}

interface JourneyModule {
  journey(input: { baseUrl: string; adminToken: string; destinationAddress: string; tag: string }): Promise<{
    decision: string
    withdrawal: { amount: string; destinationAddress: string; status: string }
    eventTypes: string[]
    refreshed: boolean
  }>
}

describe('a client generated from /openapi/json', () => {
  let ctx!: TestApp
  let server!: ReturnType<TestApp['app']['listen']>
  let baseUrl = ''
  const dir = tempDir('arena-openapi-client-')
  let tsc!: { code: number; errors: Diagnostic[]; output: string }

  beforeAll(async () => {
    // A provider configured (never contacted), so the client is generated with the OpenID Connect routes too.
    ctx = await createArenaApp({ ARENA_OIDC_PROVIDERS: JSON.stringify([{ name: 'example', issuer: 'https://idp.example.invalid', clientId: 'arena' }]) })
    server = ctx.app.listen({ port: 0, hostname: '127.0.0.1' })
    baseUrl = `http://127.0.0.1:${server.server!.port}`

    // The generator reads the document from the live server, as a studio would.
    const generate = async (input: string, out: string) => {
      const result = await run([process.execPath, join(ROOT, 'node_modules/.bin/openapi-typescript'), input, '-o', join(dir, out)])
      if (result.code !== 0) throw new Error(`openapi-typescript failed:\n${result.stdout}\n${result.stderr}`)
    }
    await generate(`${baseUrl}/openapi/json`, 'api.d.ts')
    // The document as it was served before: every body `content: {}`.
    const doc = (await (await fetch(`${baseUrl}/openapi/json`)).json()) as { paths: Record<string, Record<string, { requestBody?: { content: object } }>> }
    for (const item of Object.values(doc.paths)) for (const operation of Object.values(item)) if (operation.requestBody) operation.requestBody.content = {}
    writeFileSync(join(dir, 'without-bodies.json'), JSON.stringify(doc))
    await generate(join(dir, 'without-bodies.json'), 'api-without-bodies.d.ts')

    copyFileSync(FIXTURE, join(dir, 'journey.ts'))
    writeFileSync(join(dir, 'journey-without-bodies.ts'), readFileSync(FIXTURE, 'utf8').replace("from './api'", "from './api-without-bodies'"))
    writeFileSync(join(dir, 'wrong.ts'), WRONG)
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        // As a studio's project would be; skipLibCheck as arena's own (the generated
        // types are still checked wherever the journey uses them).
        compilerOptions: { strict: true, noEmit: true, skipLibCheck: true, target: 'ES2022', module: 'ESNext', moduleResolution: 'Bundler', lib: ['ES2022', 'DOM', 'DOM.Iterable'], types: [] },
        files: ['journey.ts', 'journey-without-bodies.ts', 'wrong.ts'],
      }),
    )
    // One tsc run over all three: each file's errors are its own.
    const checked = await run([process.execPath, join(ROOT, 'node_modules/.bin/tsc'), '--strict', '--noEmit', '-p', join(dir, 'tsconfig.json'), '--pretty', 'false'])
    const output = checked.stdout + checked.stderr
    tsc = { code: checked.code, errors: diagnostics(output), output }
  }, 120_000)

  afterAll(async () => {
    await server?.stop(true)
    await ctx?.close()
    // The link first, on its own: nothing may ever delete through it into the real node_modules.
    rmSync(join(dir, 'node_modules'), { force: true })
    rmSync(dir, { recursive: true, force: true })
  })

  const errorsIn = (file: string) => tsc.errors.filter((e) => e.file === file)

  test('types every body: a journey written against it, with no cast and no any, passes tsc --strict', async () => {
    // Every operation with a body, not only the journey's, gets its model's type.
    const doc = (await (await fetch(`${baseUrl}/openapi/json`)).json()) as { paths: Record<string, Record<string, { requestBody?: unknown }>> }
    // A raw-bytes route's body is a file (src/plugins/json-body.ts), not a model: typed as binary, left out here.
    const raw = new Set(RAW_BODY_ROUTES.map((r) => `${r.method.toLowerCase()} ${openApiPath(r.route)}`))
    const withBody = Object.entries(doc.paths)
      .flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ key: `${method} ${path}`, operation })))
      .filter(({ key, operation }) => operation.requestBody !== undefined && !raw.has(key))
    const generated = readFileSync(join(dir, 'api.d.ts'), 'utf8')
    const typed = [...generated.matchAll(/requestBody\??: \{\s*content: \{\s*"application\/json": components\["schemas"\]\["(\w+)"\];/g)]
    expect(withBody.length).toBeGreaterThanOrEqual(32)
    expect(typed.length).toBe(withBody.length)

    expect(escapes(readFileSync(FIXTURE, 'utf8'))).toEqual([])
    expect(errorsIn('journey.ts')).toEqual([])
    // Every line tsc printed is one of the errors expected below, so none went unparsed.
    const lines = tsc.output.split('\n').filter((line) => /error TS\d+/.test(line))
    expect(lines.length).toBe(tsc.errors.length)
  })

  test('the journey runs against the live server: register, login, refresh, a match, a withdrawal, the events', async () => {
    const { journey } = (await import(join(dir, 'journey.ts'))) as JourneyModule
    const destinationAddress = someAddress()
    const result = await journey({ baseUrl, adminToken: ADMIN_TOKEN, destinationAddress, tag: `${Date.now() % 1e9}` })
    expect(result.refreshed).toBe(true)
    // The one match of two players is the final: the tournament then finalizes.
    expect(result.decision).toBe('game_advance_pending_finalization')
    expect(result.withdrawal).toMatchObject({ amount: '25', destinationAddress })
    expect(['pending_signature', 'signed']).toContain(result.withdrawal.status)
    expect(result.eventTypes).toEqual(expect.arrayContaining(['session.login', 'session.refreshed', 'tournament.started', 'match.decided', 'wallet.credited', 'wallet.withdrawal_pending']))
  })

  test('the escape check sees a cast, an `any` and a non-null assertion', () => {
    expect(escapes('const a = b as string\nlet c: any\nconst d = e!.f\nconst g = <number>h\n')).toEqual([
      'line 1: cast `b as string`',
      'line 2: any',
      'line 3: non-null assertion `e!`',
      'line 4: cast `<number>h`',
    ])
  })

  test('the check fails on a body with a field of the wrong type', () => {
    expect(tsc.code).not.toBe(0)
    const wrong = errorsIn('wrong.ts')
    expect(wrong.length).toBeGreaterThan(0)
    expect(wrong.every((e) => e.line === WRONG_LINE)).toBe(true)
    expect(wrong.map((e) => e.message).join('\n')).toContain("Type 'number' is not assignable to type 'string'")
  })

  test('the check fails on the document as it was: every call that sends a body, and nothing else', () => {
    // Served with `content: {}`, a body is typed `undefined`: each call's body is refused.
    const bodyLines = readFileSync(FIXTURE, 'utf8')
      .split('\n')
      .flatMap((line, i) => (/\bbody: /.test(line) ? [i + 1] : []))
    expect(bodyLines.length).toBeGreaterThanOrEqual(10)
    const failed = errorsIn('journey-without-bodies.ts')
    expect([...new Set(failed.map((e) => e.line))]).toEqual(bodyLines)
    expect(failed.every((e) => e.message.endsWith("is not assignable to type 'undefined'."))).toBe(true)
  })
})
