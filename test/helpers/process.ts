// Runs arena as a real process (the compiled binary or `bun src/index.ts`)
// and reads its JSON log lines from stdout.
import type { Subprocess } from 'bun'
import { join } from 'node:path'

export const ROOT = join(import.meta.dir, '..', '..')
export const BINARY = join(ROOT, 'dist', 'arena')
export const SOURCE_COMMAND = [process.execPath, join(ROOT, 'src', 'index.ts')]

const OUT_OF_REACH = { limit: 10_000_000, windowS: 60 }
/**
 * ARENA_RATE_LIMITS of the test apps and child servers: every limit of every
 * group out of reach. Tests send hundreds of requests from one address (and
 * many from one account); the limiter still runs and writes its headers.
 * The rate-limit tests ask for the defaults.
 */
export const TEST_RATE_LIMITS = JSON.stringify({ '*': { address: OUT_OF_REACH, account: OUT_OF_REACH, game: OUT_OF_REACH } })

/**
 * ARENA_INTEGRITY_SIGNALS of child servers: every signal but shared_address.
 * Every player of a test reaches a child from 127.0.0.1, so that signal would
 * hold every staked win and prize; the integrity tests (test/integrity/*)
 * raise it on purpose in-process.
 */
export const TEST_INTEGRITY_SIGNALS = 'pair_limit,shared_device,alternating,upset'

/** The environment a child gets: ours without ARENA_* settings, the raised rate limits, the signals above, plus what the test says. */
export function childEnv(env: Record<string, string>): Record<string, string> {
  const base: Record<string, string> = { ARENA_RATE_LIMITS: TEST_RATE_LIMITS, ARENA_INTEGRITY_SIGNALS: TEST_INTEGRITY_SIGNALS }
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('ARENA_') && value !== undefined) base[key] = value
  }
  return { ...base, ...env }
}

let built: Promise<void> | undefined

/** Builds dist/arena from the current source once per test run (never trusts a stale binary). */
export function buildBinary(): Promise<void> {
  built ??= run([process.execPath, 'run', 'build']).then((build) => {
    if (build.code !== 0) throw new Error(`npm run build failed:\n${build.stdout}\n${build.stderr}`)
  })
  return built
}

export interface RunResult {
  code: number
  stdout: string
  stderr: string
}

export async function run(command: string[], env: Record<string, string> = {}): Promise<RunResult> {
  const proc = Bun.spawn(command, { cwd: ROOT, env: childEnv(env), stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' })
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ])
  return { code, stdout, stderr }
}

export interface ServerProcess {
  proc: Subprocess<'ignore', 'pipe', 'pipe'>
  port: number
  url: string
  /** Parsed stdout lines so far. */
  lines: Record<string, unknown>[]
  stderr(): string
  /** Sends a signal and resolves with the exit code and how long the exit took. */
  signal(signal: NodeJS.Signals): Promise<{ code: number; ms: number }>
}

/** Starts a server command (`arena serve`, `npm start`) on a free port (ARENA_PORT=0) and waits for its "listening" line. */
export async function startServe(
  command: string[],
  env: Record<string, string>,
  options: { cwd?: string; timeoutMs?: number } = {},
): Promise<ServerProcess> {
  const timeoutMs = options.timeoutMs ?? 15_000
  const proc = Bun.spawn(command, {
    cwd: options.cwd ?? ROOT,
    env: childEnv({ ARENA_PORT: '0', ARENA_HOST: '127.0.0.1', ...env }),
    stdout: 'pipe',
    stderr: 'pipe',
    stdin: 'ignore',
  })
  const lines: Record<string, unknown>[] = []
  let stderr = ''
  void (async () => {
    for await (const chunk of proc.stderr) stderr += new TextDecoder().decode(chunk)
  })()
  let listening: ((port: number) => void) | undefined
  const ready = new Promise<number>((resolve) => (listening = resolve))
  const stdoutDone = (async () => {
    let buffer = ''
    for await (const chunk of proc.stdout) {
      buffer += new TextDecoder().decode(chunk)
      let newline: number
      while ((newline = buffer.indexOf('\n')) !== -1) {
        const line = buffer.slice(0, newline)
        buffer = buffer.slice(newline + 1)
        try {
          const record = JSON.parse(line) as Record<string, unknown>
          lines.push(record)
          if (record.msg === 'listening') listening?.(Number(record.port))
        } catch {
          lines.push({ unparsed: line })
        }
      }
    }
  })()
  let timer: ReturnType<typeof setTimeout> | undefined
  const port = await Promise.race([
    ready,
    proc.exited.then((code) => {
      throw new Error(`arena exited with ${code} before listening: ${stderr}`)
    }),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        proc.kill('SIGKILL')
        reject(new Error(`arena did not listen within ${timeoutMs} ms: ${stderr}`))
      }, timeoutMs)
    }),
  ]).finally(() => clearTimeout(timer))
  return {
    proc,
    port,
    url: `http://127.0.0.1:${port}`,
    lines,
    stderr: () => stderr,
    async signal(signal) {
      const started = performance.now()
      proc.kill(signal)
      const code = await proc.exited
      // stdout closes when every process holding it has exited (npm's child too).
      await stdoutDone
      return { code, ms: performance.now() - started }
    },
  }
}

/**
 * What a child `arena` command run by this test is audited as: `cli:` and
 * the name `id -un` gives this process's uid (found by id(1), not by the
 * code under test), or `cli:uid-<n>` when the uid has no name.
 */
export const CLI_OPERATOR: string = (() => {
  const id = Bun.spawnSync(['id', '-un'], { stdout: 'pipe', stderr: 'ignore' })
  const name = id.exitCode === 0 ? id.stdout.toString().trim() : ''
  return name === '' ? `cli:uid-${process.getuid!()}` : `cli:${name}`
})()
