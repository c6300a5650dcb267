// The storage ceiling: single-row write transactions on bun:sqlite in WAL mode,
// one after another for a fixed time, with synchronous=FULL (an fsync per
// commit, what arena runs with) and NORMAL (no fsync per commit). Prints one
// JSON line per mode: { mode, transactions, seconds, txPerSecond }.
//
//   bun bench/sqlite-reference.ts <data dir> [seconds]
import { Database } from 'bun:sqlite'
import { rmSync } from 'node:fs'
import { join } from 'node:path'

const dir = process.argv[2]
const seconds = Number(process.argv[3] ?? 10)
if (!dir) throw new Error('usage: bun bench/sqlite-reference.ts <data dir> [seconds]')

for (const mode of ['FULL', 'NORMAL'] as const) {
  const file = join(dir, `reference-${mode.toLowerCase()}.sqlite`)
  const db = new Database(file, { create: true })
  db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = ${mode}; PRAGMA busy_timeout = 5000`)
  db.exec('CREATE TABLE IF NOT EXISTS claims (id INTEGER PRIMARY KEY, match_id TEXT NOT NULL, body TEXT NOT NULL, created_at INTEGER NOT NULL)')
  const insert = db.prepare('INSERT INTO claims (match_id, body, created_at) VALUES (?, ?, ?)')
  const write = db.transaction((i: number) => insert.run(`mat_${i}`, '{"outcome":"WIN"}', Date.now()))
  write.immediate(0) // warm-up
  let transactions = 0
  const started = performance.now()
  const until = started + seconds * 1000
  while (performance.now() < until) write.immediate(++transactions)
  const elapsed = (performance.now() - started) / 1000
  db.close()
  for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true })
  console.log(JSON.stringify({ mode, transactions, seconds: Math.round(elapsed * 100) / 100, txPerSecond: Math.round(transactions / elapsed) }))
}
