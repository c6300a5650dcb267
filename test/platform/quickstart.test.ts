// docs/quickstart.md holds as written: every ```sh block of the page runs, in
// order, in one bash session (set -euo pipefail) against a fresh `npm start`,
// and each prints the answer the page shows under it (a ```text block, `…`
// standing for what differs from run to run). The server-start block is the one
// block not run as written: the test runs its `npm start` itself, on a free
// port, and points the page's `ARENA=` line at it. Every curl runs with
// --fail-with-body, so no command may meet an HTTP error. Afterwards the
// server itself is asked what the page claims happened: the tournament
// completed for the winner the operator chose, the wallet credited then
// debited by a signed withdrawal, and those events delivered to the player.
// The page's engine is the default, SQLite (`npm test`); under `npm run
// test:pg` the server and every `npx arena` of the page share a fresh
// PostgreSQL database instead, so the page holds on both.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { tempDir, testDatabaseEnv } from '../helpers/app'
import { childEnv, ROOT, startServe, type ServerProcess } from '../helpers/process'
import { waitFor } from '../helpers/wait'
import { isValidAddress } from '../../src/modules/wallet/frost'

const PAGE = join(ROOT, 'docs', 'quickstart.md')
const SERVER_START = '# in another terminal'
const BASE_URL_LINE = 'ARENA=http://127.0.0.1:8080'

interface Fence {
  lang: string
  /** 1-based line of the opening fence, for messages. */
  line: number
  body: string[]
}

/** The page's fenced code blocks, in order. */
export function fences(markdown: string): Fence[] {
  const out: Fence[] = []
  let open: Fence | undefined
  markdown.split('\n').forEach((text, index) => {
    const fence = /^```(\S*)\s*$/.exec(text)
    if (open) {
      if (text.trimEnd() === '```') {
        out.push(open)
        open = undefined
      } else open.body.push(text)
    } else if (fence) open = { lang: fence[1]!, line: index + 1, body: [] }
  })
  if (open) throw new Error(`docs/quickstart.md: the block opened on line ${open.line} is never closed`)
  return out
}

interface Step {
  line: number
  script: string
  /** The lines its output must contain, in order; none when the page shows no answer. */
  expected: string[]
}

/** The shell blocks, each with the answer block that follows it, and the server-start block apart. */
export function steps(markdown: string): { server: Fence[]; steps: Step[]; orphans: Fence[] } {
  const all = fences(markdown)
  const server: Fence[] = []
  const out: Step[] = []
  const orphans: Fence[] = []
  all.forEach((fence, index) => {
    if (fence.lang === 'sh') {
      if (fence.body[0]?.startsWith(SERVER_START)) {
        server.push(fence)
        return
      }
      const next = all[index + 1]
      out.push({ line: fence.line, script: fence.body.join('\n'), expected: next?.lang === 'text' ? next.body.filter((l) => l.trim() !== '') : [] })
    } else if (fence.lang === 'text') {
      if (all[index - 1]?.lang !== 'sh' || all[index - 1]!.body[0]?.startsWith(SERVER_START)) orphans.push(fence)
    } else orphans.push(fence)
  })
  return { server, steps: out, orphans }
}

/** GitHub's anchors for a page's headings: lower case, punctuation dropped, spaces as hyphens (code blocks skipped). */
function headingSlugs(text: string): Set<string> {
  const slugs = new Set<string>()
  let inFence = false
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) inFence = !inFence
    const heading = !inFence && /^#{1,6}\s+(.*)$/.exec(line)
    if (heading) slugs.add(heading[1]!.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-'))
  }
  return slugs
}

/** One shown line as a pattern for a whole output line: `…` is anything, the rest literal. */
function linePattern(shown: string): RegExp {
  const escaped = shown.trimEnd().split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
  return new RegExp(`^${escaped.join('.*?')}$`)
}

/** The shown lines missing from the output, taken in order (each must come after the one before). */
export function missingLines(output: string, shown: string[]): string[] {
  const lines = output.split('\n').map((l) => l.trimEnd())
  let at = 0
  const missing: string[] = []
  for (const expected of shown) {
    const pattern = linePattern(expected)
    const found = lines.findIndex((line, i) => i >= at && pattern.test(line))
    if (found === -1) missing.push(expected)
    else at = found + 1
  }
  return missing
}

const MARK = '@@quickstart-step'

const markdown = readFileSync(PAGE, 'utf8')
const page = steps(markdown)
const packageJson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin?: unknown }

describe('docs/quickstart.md, parsed', () => {
  test('one server-start block, `npm start` alone; one ARENA= base URL line; every answer block under a command', () => {
    expect(page.server).toHaveLength(1)
    expect(page.server[0]!.body.slice(1).filter((l) => l.trim() !== '')).toEqual(['npm start'])
    expect(markdown.split('\n').filter((l) => l.startsWith('ARENA='))).toEqual([BASE_URL_LINE])
    expect(page.orphans.map((f) => `line ${f.line}: \`\`\`${f.lang}`)).toEqual([])
    expect(page.steps.length).toBeGreaterThan(15)
  })

  test('the README links to it near its top, and every link of the page leads to a file and heading that exist', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    expect(readme.slice(0, readme.indexOf('\n## ')).includes('](docs/quickstart.md)')).toBe(true)
    const broken = [...markdown.matchAll(/\]\(([^)\s]+)\)/g)]
      .map((m) => m[1]!)
      .filter((target) => !/^[a-z]+:/.test(target))
      .filter((target) => {
        const [file, anchor] = target.split('#') as [string, string | undefined]
        const path = file === '' ? PAGE : join(ROOT, 'docs', file)
        if (!existsSync(path)) return true
        return anchor !== undefined && !headingSlugs(readFileSync(path, 'utf8')).has(anchor)
      })
    expect(broken).toEqual([])
  })

  test('the destination addresses the docs give as valid are valid, and the one they give as refused is refused', () => {
    const api = readFileSync(join(ROOT, 'docs', 'api.md'), 'utf8')
    const row = api.split('\n').find((line) => line.startsWith('| `destinationAddress` | string |'))!
    const [example, refused] = [...row.matchAll(/`([1-9A-HJ-NP-Za-km-z]{32,44})`/g)].map((m) => m[1]!)
    const used = [...markdown.matchAll(/"destinationAddress":"([^"]+)"/g)].map((m) => m[1]!)
    expect(used).toEqual([example!])
    expect(isValidAddress(example!)).toBe(true)
    expect(refused).toBe('11111111111111111111111111111111')
    expect(markdown).toContain(`\`${refused}\` is refused`)
    expect(isValidAddress(refused!)).toBe(false)
  })

  test('the answer matcher: `…` stands for anything within a line, the rest is literal and in order', () => {
    expect(missingLines('a\n  "id": "usr_0193",\nb', ['  "id": "usr_…",'])).toEqual([])
    expect(missingLines('x (y)', ['x (…)'])).toEqual([])
    expect(missingLines('x.y', ['x…z'])).toEqual(['x…z'])
    expect(missingLines('second\nfirst', ['first', 'second'])).toEqual(['second'])
    expect(missingLines('a "status": "signed"', ['"status": "signed"'])).toEqual(['"status": "signed"'])
  })
})

describe('docs/quickstart.md, run', () => {
  const dataDir = tempDir('arena-quickstart-')
  let env: Record<string, string>
  let server: ServerProcess | undefined
  let outputs: string[] = []
  let stderr = ''
  let code = -1
  let seconds = 0
  let vars: Record<string, string> = {}

  beforeAll(async () => {
    const started = performance.now()
    env = { ARENA_DATA_DIR: dataDir, ...(await testDatabaseEnv()) }
    server = await startServe(['npm', 'start'], env)

    // A reader's shell has no node_modules/.bin on its PATH: neither does this one.
    const path = (process.env.PATH ?? '').split(delimiter).filter((dir) => !dir.includes('node_modules/.bin')).join(delimiter)
    const prelude = [
      'set -euo pipefail',
      // Any HTTP error fails its command, and with it the run.
      'curl() { command curl --fail-with-body "$@"; }',
      // Until package.json has a `bin`, `npx arena` is the source entry, as `npm start` runs it.
      ...(packageJson.bin === undefined ? [`npx() { if [ "$1" = arena ]; then shift; ${JSON.stringify(process.execPath)} src/index.ts "$@"; else command npx "$@"; fi; }`] : []),
    ]
    const body = page.steps.map((step, i) => {
      const script = step.script.replace(BASE_URL_LINE, `ARENA=${server!.url}`)
      return `echo '${MARK} ${i}'; echo '${MARK} ${i}' >&2\n${script}`
    })
    const epilogue = `echo '${MARK} end'\nprintf '%s=%s\\n' TOURNAMENT "$TOURNAMENT" ALICE "$ALICE" ALICE_P "$ALICE_P" BOB "$BOB"`
    const proc = Bun.spawn(['bash', '-c', [...prelude, ...body, epilogue].join('\n')], {
      cwd: ROOT,
      env: { ...childEnv(env), PATH: path },
      stdout: 'pipe',
      stderr: 'pipe',
      stdin: 'ignore',
    })
    const [out, err, exit] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
    stderr = err
    code = exit
    const parts = out.split(new RegExp(`^${MARK} .*$`, 'm'))
    outputs = parts.slice(1, page.steps.length + 1)
    if (parts.length === page.steps.length + 2) {
      vars = Object.fromEntries(parts.at(-1)!.trim().split('\n').map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]))
    }
    seconds = (performance.now() - started) / 1000
    console.log(`docs/quickstart.md: ${page.steps.length} blocks ran in ${seconds.toFixed(1)} s (server start included)`)
  }, 90_000)

  afterAll(async () => {
    await server?.signal('SIGTERM')
    rmSync(dataDir, { recursive: true, force: true })
  })

  const failed = () => {
    const last = outputs.length - 1
    const step = page.steps[last]
    return step ? `the block on line ${step.line} of docs/quickstart.md failed (exit ${code}):\n${step.script}\n--- stdout\n${outputs[last]}\n--- stderr\n${stderr.split(`${MARK} ${last}\n`).at(-1)}` : stderr
  }

  test('every command succeeds, in order, in one shell', () => {
    if (code !== 0 || outputs.length !== page.steps.length) throw new Error(failed())
    expect(code).toBe(0)
  })

  test('each block prints the answer the page shows under it', () => {
    const wrong = page.steps
      .map((step, i) => ({ step, missing: missingLines(outputs[i] ?? '', step.expected), output: outputs[i] ?? '(not run)' }))
      .filter((r) => r.missing.length > 0)
      .map((r) => `line ${r.step.line}: missing ${JSON.stringify(r.missing)}\n--- printed\n${r.output}`)
    expect(wrong).toEqual([])
  })

  test('the server agrees: the operator\'s winner won the tournament, the wallet was credited and paid out, the player saw it all', async () => {
    expect(Object.keys(vars).sort()).toEqual(['ALICE', 'ALICE_P', 'BOB', 'TOURNAMENT'])
    const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
    const tournament = await waitFor('the tournament to complete', async () => {
      const res = await fetch(`${server!.url}/api/v1/tournaments/${vars.TOURNAMENT}`, { headers: bearer(vars.BOB!) })
      const { tournament } = (await res.json()) as { tournament: { status: string; winnerParticipantId: string; matches: { status: string; winnerParticipantId: string }[] } }
      return tournament.status === 'completed' ? tournament : undefined
    })
    expect(tournament.winnerParticipantId).toBe(vars.ALICE_P!)
    expect(tournament.matches.map((m) => [m.status, m.winnerParticipantId])).toEqual([
      ['decided', vars.ALICE_P!],
      ['decided', vars.ALICE_P!],
    ])

    const wallet = (await (await fetch(`${server!.url}/api/v1/wallet`, { headers: bearer(vars.ALICE!) })).json()) as { balance: string }
    expect(wallet.balance).toBe('75')
    const { withdrawals } = (await (await fetch(`${server!.url}/api/v1/wallet/withdrawals`, { headers: bearer(vars.ALICE!) })).json()) as { withdrawals: { status: string; amount: string }[] }
    expect(withdrawals.map((w) => [w.status, w.amount])).toEqual([['signed', '25']])

    const { events } = (await (await fetch(`${server!.url}/api/v1/events`, { headers: bearer(vars.ALICE!) })).json()) as { events: { type: string; data: Record<string, unknown> }[] }
    const types = events.map((e) => e.type)
    for (const type of ['match.decided', 'match.disputed', 'wallet.credited', 'wallet.withdrawal_signed']) expect(types).toContain(type)
    expect(events.filter((e) => e.type === 'match.decided').map((e) => e.data.winnerParticipantId)).toEqual([vars.ALICE_P, vars.ALICE_P])
  })
})
