// @arena/sdk as a studio gets it: `npm run build:sdk` packs the tarball, a
// fresh project outside this repo installs it offline (it has no
// dependencies), type-checks a script against the package's own .d.ts under a
// strict tsconfig, and runs that script's journey (login, a game session and
// its claim, a PIN purchase, an event poll, live events by events.connect)
// against the compiled binary, once under Node and once under Bun. Each run
// has its own seeded game, players and tournament, so the two never meet.
// What the tarball says stands alone: it cites no document or path the
// package does not hold.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir, testDatabaseEnv } from '../helpers/app'
import { BINARY, buildBinary, ROOT, run, startServe, type RunResult, type ServerProcess } from '../helpers/process'

interface Seeded {
  game: { id: string }
  gameKey: string
  password: string
  pin: string
  players: { id: string; username: string; address: string }[]
  tournaments: { id: string; format: string; status: string }[]
}

const PACKAGE_DIR = join(ROOT, 'packages', 'sdk')
const sdkPackage = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as { name: string; version: string; dependencies?: object }
const TARBALL = join(ROOT, 'dist', 'sdk', `arena-sdk-${sdkPackage.version}.tgz`)
const TSC = join(ROOT, 'node_modules', '.bin', 'tsc')
const BUN = join(ROOT, 'node_modules', '.bin', 'bun')
/** What a module imports: `import/export ... from 'x'`, `import 'x'`, `import('x')` (also in .d.ts types). */
const IMPORTS = /^\s*(?:import|export)\b[^'"\n]*\bfrom\s*['"]([^'"]+)['"]|^\s*import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]/gm
// tsc names its libs by their real path: node_modules may be a link (a git worktree sharing another checkout's).
const TS_LIB_DIR = realpathSync(join(ROOT, 'node_modules', 'typescript', 'lib'))

// The studio's script: nothing but the package's public API. It prints one
// JSON line the test reads. Inputs come as one JSON argument; `process` is
// declared here because the project has no @types/node (the SDK needs none).
const SCRIPT = `
import { ApiError, createClient, type Decision, type PlaneEvent } from '@arena/sdk'

declare const process: { argv: string[]; versions: Record<string, string | undefined> }

interface Input {
  baseUrl: string
  username: string
  password: string
  pin: string
  gameId: string
  gameKey: string
  destinationAddress: string
}

const input = JSON.parse(process.argv[2] ?? '{}') as Input
const arena = createClient({ baseUrl: input.baseUrl })

const refused = await arena.auth.login(input.username, 'not the password').catch((error: unknown) => error)
const user = await arena.auth.login(input.username, input.password)

// A match: the player's running match, a single-use session, one claim.
const match = (await arena.myMatches()).find((m) => m.status === 'running')
if (!match) throw new Error('no running match')
const game = arena.game(input.gameId, input.gameKey)
const session = await game.openSession(match.matchId)
const decision: Decision = await game.submitResult(session, { outcome: 'WIN', winnerParticipantId: match.participantId })

// A purchase: integrity checks, a PIN session, one verify.
const before = await arena.wallet()
const sale = await arena.purchases.authorize({ pin: input.pin, amount: '12.5', destinationAddress: input.destinationAddress })
const after = await arena.wallet()

// Events: poll pages until the withdrawal's signature is among them; the client keeps the cursor.
const events: PlaneEvent[] = []
const deadline = Date.now() + 15_000
while (!events.some((e) => e.type === 'wallet.withdrawal_signed') && Date.now() < deadline) {
  events.push(...(await arena.events.poll({ wait: 1 })))
}
const again = await arena.events.poll()

// Live events: a WebSocket where the runtime has one, else the long poll (Node 20 has none).
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const heard: string[] = []
const live = arena.events.connect({ topics: ['session'], onEvents: (batch) => void heard.push(...batch.map((e) => e.type)) })
const liveDeadline = Date.now() + 15_000
while (live.cursor === undefined && Date.now() < liveDeadline) await pause(20)
await createClient({ baseUrl: input.baseUrl }).auth.login(input.username, input.password)
while (!heard.includes('session.login') && Date.now() < liveDeadline) await pause(20)
const transport = live.transport
await live.stop()

console.log(JSON.stringify({
  runtime: process.versions.bun ? 'bun' : 'node',
  node: process.versions.node,
  refused: refused instanceof ApiError ? refused.code : String(refused),
  user: user.username,
  session: session.context.matchId === match.matchId,
  decision: decision.decision,
  valid: sale.valid,
  withdrawal: sale.withdrawal?.status,
  amount: sale.withdrawal?.amount,
  balance: [before.balance, after.balance],
  events: events.map((e) => e.type),
  cursorKept: again.length === 0 && arena.events.cursor() !== undefined,
  live: { hasWebSocket: typeof (globalThis as { WebSocket?: unknown }).WebSocket === 'function', transport, heard },
}))
`

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    // fetch's types (Response, RequestInit, AbortSignal) come from DOM here; a Node app may use @types/node instead.
    lib: ['ES2022', 'DOM'],
    types: [],
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    // The package's .d.ts are checked too, under these settings.
    skipLibCheck: false,
    noEmitOnError: true,
    outDir: 'build',
  },
  files: ['app.ts'],
}

const project = tempDir('arena-sdk-studio-')
const dataDir = tempDir('arena-sdk-package-data-')
/** The seeds and the server share one database: the data dir's, or one PostgreSQL database. */
let env: Record<string, string> = { ARENA_DATA_DIR: dataDir }
let server: ServerProcess | undefined
const seeds: Seeded[] = []

/** A game, two players with the same password and PIN, funded, and their started tournaments (one of each format). */
async function seed(): Promise<Seeded> {
  const seeded = await run([BINARY, 'seed', '--json', '--players', '2'], env)
  expect(seeded.stderr).toBe('')
  expect(seeded.code).toBe(0)
  return JSON.parse(seeded.stdout.trim().split('\n').at(-1)!) as Seeded
}

async function inProject(command: string[]): Promise<RunResult> {
  const proc = Bun.spawn(command, { cwd: project, stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { code, stdout, stderr }
}

let installed: RunResult
let compiled: RunResult

beforeAll(async () => {
  const [, packed] = await Promise.all([buildBinary(), run(['npm', 'run', 'build:sdk'])])
  expect(packed.code).toBe(0)
  expect(existsSync(TARBALL)).toBe(true)

  // Two seeds on one server: one game, two players and a tournament per runtime.
  env = { ...env, ...(await testDatabaseEnv()) }
  seeds.push(await seed(), await seed())
  server = await startServe([BINARY, 'serve'], env)

  // The studio's project: nothing but the tarball, installed with no registry to reach and an empty cache.
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'studio-app', version: '1.0.0', private: true, type: 'module' }, null, 2))
  writeFileSync(join(project, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2))
  writeFileSync(join(project, 'app.ts'), SCRIPT)
  installed = await inProject([
    'npm', 'install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts',
    '--registry', 'http://127.0.0.1:9/', '--cache', join(project, '.npm-cache'), TARBALL,
  ])
  // Type-checks the script and compiles it to build/app.js for Node.
  compiled = await inProject([TSC, '-p', '.', '--listFiles'])
}, 240_000)

afterAll(async () => {
  if (server) expect((await server.signal('SIGTERM')).code).toBe(0)
  for (const dir of [project, dataDir]) rmSync(dir, { recursive: true, force: true })
})

describe('the @arena/sdk tarball', () => {
  test('holds the built package only: ESM, .d.ts, no dependencies, nothing of the server', async () => {
    expect(sdkPackage.name).toBe('@arena/sdk')
    expect(sdkPackage.dependencies).toBeUndefined()
    const listed = await run(['tar', '-tzf', TARBALL])
    const files = listed.stdout.trim().split('\n').sort()
    expect(files).toContain('package/package.json')
    expect(files).toContain('package/README.md')
    expect(files).toContain('package/dist/index.js')
    expect(files).toContain('package/dist/index.d.ts')
    expect(files.filter((f) => !f.startsWith('package/dist/') && f !== 'package/package.json' && f !== 'package/README.md')).toEqual([])
  })

  test('installs offline into a fresh project: no registry, an empty cache', () => {
    expect(installed.stderr.replace(/^npm warn Unknown (user|env) config.*\n/gm, '')).toBe('')
    expect(installed.code).toBe(0)
    // Only the SDK was installed.
    expect(readdirSync(join(project, 'node_modules')).filter((d) => !d.startsWith('.'))).toEqual(['@arena'])
    // The package imports nothing but its own files: no server module, no runtime built-in.
    const dist = join(project, 'node_modules', '@arena', 'sdk', 'dist')
    const specifiers = readdirSync(dist).flatMap((file) => [...readFileSync(join(dist, file), 'utf8').matchAll(IMPORTS)].map((m) => (m[1] ?? m[2] ?? m[3])!))
    expect(specifiers).toContain('./errors.js')
    expect(specifiers.filter((s) => !/^\.\/[a-z-]+\.js$/.test(s))).toEqual([])
  })

  test('its text stands alone: no shipped file cites a document or path the package does not hold', () => {
    // What a studio reads (the README, package.json's description, the doc
    // comments in dist/*.d.ts and *.js) may point at the package's own files
    // and at a running server (/openapi), never at the arena repository's
    // docs, sources, tests or design notes, which a tarball does not carry.
    const installed = join(project, 'node_modules', '@arena', 'sdk')
    const files = (readdirSync(installed, { recursive: true }) as string[]).filter((f) => statSync(join(installed, f)).isFile())
    const shipped = new Set(files.map((f) => f.split('/').at(-1)!))
    expect(shipped).toContain('README.md')
    const citations: string[] = []
    for (const file of files) {
      const text = readFileSync(join(installed, file), 'utf8')
      for (const [i, line] of text.split('\n').entries()) {
        const where = `${file}:${i + 1}`
        // A path into the repository as a step to take (`/path/to/arena/packages/sdk`) is an instruction, not a citation.
        for (const m of line.matchAll(/[\w./-]*\b[\w-]+\.md\b/g)) if (!shipped.has(m[0].split('/').at(-1)!)) citations.push(`${where}: ${m[0]}`)
        for (const m of line.matchAll(/(?<![\w./])(?:docs|src|test|packages|drizzle)\/[\w.*-]+/g)) citations.push(`${where}: ${m[0]}`)
        for (const m of line.matchAll(/\.\.\/|\bcontract\b|§|public-api/gi)) citations.push(`${where}: ${m[0]}`)
      }
    }
    expect(citations).toEqual([])
    // The check reads what it must: the doc comments did ship.
    expect(readFileSync(join(installed, 'dist', 'types.d.ts'), 'utf8')).toContain('/**')
  })

  test('a strict tsc type-checks the script from the package’s .d.ts alone', () => {
    expect(compiled.stderr).toBe('')
    expect(compiled.stdout.split('\n').filter((l) => l.includes('error TS'))).toEqual([])
    expect(compiled.code).toBe(0)
    // Every file tsc read: the script, the installed package, TypeScript's own libs.
    const read = compiled.stdout.trim().split('\n')
    expect(read.filter((f) => !f.startsWith(project) && !f.startsWith(TS_LIB_DIR))).toEqual([])
    expect(read).toContain(join(project, 'node_modules', '@arena', 'sdk', 'dist', 'index.d.ts'))
    expect(existsSync(join(project, 'build', 'app.js'))).toBe(true)
  })

  test('a type error in a script fails the check (the types are real, not any)', async () => {
    writeFileSync(join(project, 'wrong.ts'), `import { createClient } from '@arena/sdk'\nconst arena = createClient({ baseUrl: 'http://x' })\nexport const balance: number = (await arena.wallet()).balance\n`)
    writeFileSync(join(project, 'tsconfig.wrong.json'), JSON.stringify({ extends: './tsconfig.json', compilerOptions: { noEmit: true }, files: ['wrong.ts'] }))
    const checked = await inProject([TSC, '-p', 'tsconfig.wrong.json'])
    expect(checked.stdout).toContain("wrong.ts(3,14): error TS2322: Type 'string' is not assignable to type 'number'")
    expect(checked.code).not.toBe(0)
  }, 60_000)

  for (const runtime of ['node', 'bun'] as const) {
    test(`the journey runs under ${runtime === 'node' ? 'Node 20+' : 'Bun'} against dist/arena`, async () => {
      const seeded = seeds[runtime === 'node' ? 0 : 1]!
      const input = {
        baseUrl: server!.url,
        username: seeded.players[0]!.username,
        password: seeded.password,
        pin: seeded.pin,
        gameId: seeded.game.id,
        gameKey: seeded.gameKey,
        destinationAddress: seeded.players[1]!.address,
      }
      const command = runtime === 'node' ? ['node', join('build', 'app.js'), JSON.stringify(input)] : [BUN, 'app.ts', JSON.stringify(input)]
      const journey = await inProject(command)
      expect(journey.stderr).toBe('')
      expect(journey.code).toBe(0)
      const result = JSON.parse(journey.stdout.trim().split('\n').at(-1)!)
      expect(result.runtime).toBe(runtime)
      if (runtime === 'node') expect(Number(result.node.split('.')[0])).toBeGreaterThanOrEqual(20)
      expect(result).toMatchObject({
        refused: 'invalid_credentials',
        user: seeded.players[0]!.username,
        session: true,
        // One side claimed: the arbiter waits for the other.
        decision: 'pending',
        valid: true,
        withdrawal: 'signed',
        amount: '12.5',
        balance: ['100', '87.5'],
        cursorKept: true,
      })
      for (const type of ['session.login', 'wallet.credited', 'tournament.started', 'wallet.withdrawal_pending', 'wallet.withdrawal_signed']) {
        expect(result.events).toContain(type)
      }
      // events.connect: the login made while connected, over a socket where the runtime has a WebSocket (Bun, Node 22+), else by the long poll; and stop() leaves nothing running (the process exits).
      expect(result.live.heard).toEqual(['session.login'])
      expect(result.live.transport).toBe(result.live.hasWebSocket ? 'socket' : 'poll')
      if (runtime === 'bun') expect(result.live.transport).toBe('socket')
      // Oldest first: the seed's credit before the withdrawal.
      expect(result.events.indexOf('wallet.credited')).toBeLessThan(result.events.indexOf('wallet.withdrawal_pending'))
    }, 60_000)
  }
})
