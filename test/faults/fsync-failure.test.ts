// Invariant: the WAL's fsync (on a thread, after a batch's COMMIT with
// synchronous=NORMAL: docs/decisions.md, "The fsync off the event loop") that
// fails is never answered as a success. Under a load of operator credits,
// every fsync of the real binary starts failing (EIO, libfiu's POSIX preload:
// Bun's fsync goes through libc): every write in flight or sent afterwards is
// refused with the clean 503 (never a 200 after the failure, never a 500), the
// process logs why and exits with 74, and a restart on the same data dir, with
// a healthy disk, finds the store whole (SQLite's integrity check, the ledger,
// the security-event and audit chains), every acknowledged credit exactly
// once, every refused one at most once (its commit may have reached the disk
// before the fsync failed) and, retried with the same reference, exactly once;
// each balance is the sum of its credits.
// Without fiu-run (Debian fiu-utils) the test skips and says why.
import { afterAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { tempDir } from '../helpers/app'
import { BINARY, buildBinary, run, startServe, type ServerProcess } from '../helpers/process'
import { ADMIN_TOKEN, client, count, EIO, fiuSkipReason, notCleanUnavailable, query, setUpPlayer, storeProblems, type Player, type Store } from './helpers'

const WORKERS = 8


const skip = fiuSkipReason()
if (skip) console.log(`fsync-failure test skipped: ${skip}`)

const started: ServerProcess[] = []
afterAll(() => started.forEach((s) => s.proc.kill('SIGKILL')))

test.skipIf(skip !== null)('a failing WAL fsync under load: no success after it, clean 503s, exit 74, a restart finds every acknowledged credit once and a whole store', async () => {
  await buildBinary()
  const dataDir = tempDir('arena-fsync-')
  const ctrlBase = join(tempDir('arena-fiu-'), 'ctrl')
  const admin = { 'x-admin-token': ADMIN_TOKEN }
  const server = await startServe(['fiu-run', '-x', '-f', ctrlBase, BINARY, 'serve'], { ARENA_DATA_DIR: dataDir, ARENA_ADMIN_TOKEN: ADMIN_TOKEN, ARENA_LOG_LEVEL: 'info' })
  started.push(server)
  const call = client(server.url)
  const players: Player[] = []
  for (let i = 0; i < 4; i++) players.push(await setUpPlayer(call, `fsync_${i}`, { credit: '1000' }))

  /** Every credit sent, by reference: what the server answered (null: the connection failed, the process was gone). */
  const credits = new Map<string, { userId: string; status: number | null; sentAfterFailure: boolean }>()
  const bad: string[] = []
  let failing = false
  let seq = 0
  const worker = async (w: number) => {
    for (;;) {
      const player = players[(w + seq) % players.length]!
      const reference = `fsync-${w}-${seq++}`
      const entry = { userId: player.id, status: null as number | null, sentAfterFailure: failing }
      credits.set(reference, entry)
      try {
        const answer = await call('POST', `/api/v1/admin/wallets/${player.id}/credit`, { amount: '1', reference }, admin)
        entry.status = answer.status
        if (answer.status !== 200) {
          const why = notCleanUnavailable(answer)
          if (why) bad.push(`${reference}: ${why}`)
        }
      } catch {
        return // the process is gone
      }
    }
  }
  const load = Array.from({ length: WORKERS }, (_, w) => worker(w))
  // A healthy disk first: some credits acknowledged.
  while ([...credits.values()].filter((c) => c.status === 200).length < 50) await Bun.sleep(10)
  const fiu = await run(['fiu-ctrl', '-f', ctrlBase, '-c', `enable name=posix/io/sync/fsync,failinfo=${EIO}`, String(server.proc.pid)])
  expect(fiu.code).toBe(0)
  // In force from here (fiu-ctrl returns once the process has applied it); a credit sent while fiu-ctrl ran may be acknowledged by an fsync before it.
  failing = true
  const code = await Promise.race([server.proc.exited, Bun.sleep(15_000).then(() => 'still running')])
  await Promise.all(load)
  expect(code).toBe(74)
  expect(server.lines.some((l) => l.msg === 'fsync of the SQLite WAL failed: refusing every write and stopping')).toBe(true)
  expect(bad).toEqual([])
  // Once the failure is injected, nothing sent is acknowledged (a credit sent before it may still be, by an earlier fsync).
  const all = [...credits.entries()]
  expect(all.filter(([, c]) => c.sentAfterFailure && c.status === 200).map(([r]) => r)).toEqual([])
  expect(all.filter(([, c]) => c.status === 503).length).toBeGreaterThan(0)

  // A restart with a healthy disk.
  const store: Store = { dataDir, prefix: [] }
  expect(await storeProblems(store)).toEqual([])
  const acknowledged = all.filter(([, c]) => c.status === 200).map(([r]) => r)
  const [rows] = await query<{ reference: string }>(store, [{ sql: "SELECT reference FROM ledger_transactions WHERE kind = 'credit' AND reference LIKE 'credit:fsync-%'" }])
  const stored = rows!.map((r) => r.reference.replace(/^credit:/, ''))
  expect(new Set(stored).size).toBe(stored.length)
  expect(acknowledged.filter((r) => !stored.includes(r))).toEqual([])

  const again = await startServe([BINARY, 'serve'], { ARENA_DATA_DIR: dataDir, ARENA_ADMIN_TOKEN: ADMIN_TOKEN })
  started.push(again)
  const call2 = client(again.url)
  expect((await call2('GET', '/readyz')).status).toBe(200)
  // Every credit not acknowledged is retried with its reference: stored once, whether its first try reached the disk or not.
  for (const [reference, c] of all) {
    if (c.status === 200) continue
    expect({ reference, status: (await call2('POST', `/api/v1/admin/wallets/${c.userId}/credit`, { amount: '1', reference }, admin)).status }).toEqual({ reference, status: 200 })
  }
  expect((await again.signal('SIGTERM')).code).toBe(0)
  expect(await storeProblems(store)).toEqual([])
  expect(await count(store, "SELECT count(*) AS n FROM ledger_transactions WHERE kind = 'credit' AND reference LIKE 'credit:fsync-%'")).toBe(credits.size)
  for (const player of players) {
    const mine = all.filter(([, c]) => c.userId === player.id).length
    const [balance] = await query<{ n: number | string }>(store, [{ sql: 'SELECT balance AS n FROM ledger_accounts WHERE id = ?', params: [`user:${player.id}:USDC`] }])
    expect({ user: player.username, balance: BigInt(balance![0]!.n) }).toEqual({ user: player.username, balance: BigInt(1000_000_000 + mine * 1_000_000) })
  }
}, 120_000)
