// Summarizes a .cpuprofile (`bun --cpu-prof`) by self and inclusive time per
// function and self time per file, counting only the samples inside the
// windows a benchmark wrote (bench/claims-profile.ts, BENCH_WINDOWS), so that
// setting up (registrations, tournaments) does not blur the picture.
//
//   bun bench/cpuprofile-summary.ts <profile.cpuprofile> [<windows.json> [<window name>]] [--top N]
//
// Times are given as a share of the sampled time in the windows; with the
// count of requests a window served (BENCH_REQUESTS) also in µs per request.
import { readFileSync } from 'node:fs'

interface CallFrame {
  functionName: string
  url: string
  lineNumber: number
}
interface ProfileNode {
  id: number
  callFrame: CallFrame
  children?: number[]
}
interface Profile {
  nodes: ProfileNode[]
  startTime: number
  samples: number[]
  timeDeltas: number[]
}

const args = process.argv.slice(2)
const topAt = args.indexOf('--top')
const TOP = topAt === -1 ? 25 : Number(args.splice(topAt, 2)[1])
// --under NAME: only the samples with a function named NAME on their stack (what NAME's time is made of); shares stay of all samples.
const underAt = args.indexOf('--under')
const UNDER = underAt === -1 ? null : args.splice(underAt, 2)[1]!
const [profilePath, windowsPath, windowName] = args
if (!profilePath) throw new Error('usage: cpuprofile-summary.ts <profile> [<windows.json> [<name>]] [--top N]')
const profile = JSON.parse(readFileSync(profilePath, 'utf8')) as Profile

// Windows in epoch µs, the profile's clock.
let windows: [number, number][] = [[-Infinity, Infinity]]
if (windowsPath) {
  const w = JSON.parse(readFileSync(windowsPath, 'utf8')) as { timeOrigin: number; windows: { name: string; start: number; end: number }[] }
  windows = w.windows.filter((x) => !windowName || x.name === windowName).map((x) => [(w.timeOrigin + x.start) * 1000, (w.timeOrigin + x.end) * 1000])
}

const byId = new Map(profile.nodes.map((n) => [n.id, n]))
const parent = new Map<number, number>()
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)

const root = process.cwd() + '/'
function fileOf(url: string): string {
  if (!url) return '(native)'
  const nm = url.lastIndexOf('node_modules/')
  if (nm !== -1) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/')
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!
  }
  return url.startsWith(root) ? url.slice(root.length) : url
}
const nameOf = (f: CallFrame) => `${f.functionName || '(anonymous)'} ${fileOf(f.url)}${f.url ? `:${f.lineNumber + 1}` : ''}`

const self = new Map<string, number>()
const inclusive = new Map<string, number>()
const files = new Map<string, number>()
let total = 0
// Samples stop while the thread sleeps: a sample's weight is the time to the
// next one, but never more than a few sampling intervals (else the last
// sample before an idle gap would take the whole gap).
const cap = 4 * [...profile.timeDeltas].sort((a, b) => a - b)[Math.floor(profile.timeDeltas.length / 2)]!
let t = profile.startTime
for (let i = 0; i < profile.samples.length; i++) {
  const dt = profile.timeDeltas[i]!
  t += dt
  if (!windows.some(([a, b]) => t >= a && t <= b)) continue
  // A sample stands for the time until the next one.
  const weight = Math.min(profile.timeDeltas[i + 1] ?? dt, cap)
  const node = byId.get(profile.samples[i]!)!
  if (node.callFrame.functionName === '(idle)') continue
  total += weight
  if (UNDER !== null) {
    let on = false
    for (let id: number | undefined = node.id; id !== undefined && !on; id = parent.get(id)) on = byId.get(id)!.callFrame.functionName === UNDER
    if (!on) continue
  }
  const own = nameOf(node.callFrame)
  self.set(own, (self.get(own) ?? 0) + weight)
  files.set(fileOf(node.callFrame.url), (files.get(fileOf(node.callFrame.url)) ?? 0) + weight)
  const seen = new Set<string>()
  for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
    const name = nameOf(byId.get(id)!.callFrame)
    if (seen.has(name)) continue
    seen.add(name)
    inclusive.set(name, (inclusive.get(name) ?? 0) + weight)
  }
}

const requests = Number(process.env.BENCH_REQUESTS ?? 0)
const show = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`)
  for (const [name, us] of [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, TOP)) {
    const share = ((100 * us) / total).toFixed(1).padStart(5)
    console.log(`${share}%${requests ? `  ${(us / requests).toFixed(1).padStart(6)} µs/req` : ''}  ${name}`)
  }
}
console.log(`sampled ${(total / 1000).toFixed(0)} ms of non-idle time in ${windows.length} window(s)`)
show('self time by file (package)', files)
show('self time by function', self)
show('inclusive time by function', inclusive)
