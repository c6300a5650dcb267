// Where the suite's time goes: runs `bun test` with the given arguments,
// passes its output through, and at the end ranks the test files by wall
// time (from one file's first line to the next file's; bun prints a file's
// name before its tests, so set-up in beforeAll and at the top of a file
// counts too), with the sum of the per-test times bun prints.
//
//   bun scripts/test-times.ts                                   # the SQLite suite
//   ARENA_TEST_ENGINE=postgres bun scripts/test-times.ts test/security
//   TEST_TIMES_TOP=40 bun scripts/test-times.ts
//
// See docs/tests.md, "Suite time".
export {}

interface FileTime {
  file: string
  start: number
  end: number
  tests: number
  testMs: number
}

const shown = Number(process.env.TEST_TIMES_TOP ?? 20)
const proc = Bun.spawn([process.execPath, 'test', '--timeout', '30000', ...process.argv.slice(2)], { stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' })
const files: FileTime[] = []
let current: FileTime | undefined

function line(text: string, now: number): void {
  const header = /^(test\/\S+\.test\.tsx?):$/.exec(text)
  if (header) {
    if (current) current.end = now
    current = { file: header[1]!, start: now, end: now, tests: 0, testMs: 0 }
    files.push(current)
    return
  }
  const result = /^\((?:pass|fail|skip|todo)\) .*?(?: \[([\d.]+)(ms|s)\])?$/.exec(text)
  if (result && current) {
    current.tests++
    if (result[1]) current.testMs += Number(result[1]) * (result[2] === 's' ? 1000 : 1)
  }
}

async function pump(stream: ReadableStream<Uint8Array>, out: NodeJS.WriteStream): Promise<void> {
  const decoder = new TextDecoder()
  let rest = ''
  for await (const chunk of stream) {
    out.write(chunk)
    const now = performance.now()
    const lines = (rest + decoder.decode(chunk, { stream: true })).split('\n')
    rest = lines.pop()!
    for (const text of lines) line(text, now)
  }
}

await Promise.all([pump(proc.stdout, process.stdout), pump(proc.stderr, process.stderr)])
const code = await proc.exited
if (current) current.end = performance.now()
const wall = (f: FileTime) => (f.end - f.start) / 1000
const total = files.reduce((sum, f) => sum + wall(f), 0)
console.log(`\ntest files by wall time (${files.length} files, ${total.toFixed(0)} s):`)
for (const f of [...files].sort((a, b) => wall(b) - wall(a)).slice(0, shown)) {
  console.log(`${wall(f).toFixed(1).padStart(7)} s  (tests ${(f.testMs / 1000).toFixed(1).padStart(6)} s, ${String(f.tests).padStart(4)})  ${f.file}`)
}
process.exit(code)
