// Invariant: killing the server (SIGKILL) at any moment while withdrawals run
// loses nothing: after a restart the ledger checks out, every withdrawal that
// was acknowledged exists, every pending_signature one ends signed (or failed
// and reversed), and each balance equals credits minus withdrawals.
// ARENA_CRASH_ROUNDS raises the number of kills (default 5 in the suite).
import { afterAll, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { ed25519 } from '@noble/curves/ed25519.js'
import { addressOf } from '../../src/modules/wallet/frost'
import { tempDir } from '../helpers/app'
import { BINARY, buildBinary, run, startServe, type ServerProcess } from '../helpers/process'

const ROUNDS = Number(process.env.ARENA_CRASH_ROUNDS ?? 5)
const ADMIN = 'crash-test-admin-token-0123456789abcdef'
const PIN = '482916'
const started: ServerProcess[] = []
afterAll(() => started.forEach((s) => s.proc.kill('SIGKILL')))

test(`${ROUNDS} kills during withdrawals: nothing lost`, async () => {
  await buildBinary()
  const dataDir = tempDir('arena-crash-')
  const env = { ARENA_DATA_DIR: dataDir, ARENA_ADMIN_TOKEN: ADMIN, ARENA_LOG_LEVEL: 'warn' }
  const serve = async () => {
    const server = await startServe([BINARY, 'serve'], { ...env, ARENA_LOG_LEVEL: 'info' })
    started.push(server)
    return server
  }
  const call = (server: ServerProcess, method: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })

  let server = await serve()
  const people: { id: string; username: string; token: string }[] = []
  for (let i = 0; i < 3; i++) {
    const username = `crash_${i}`
    expect((await call(server, 'POST', '/api/v1/user/register', { email: `${username}@example.com`, username, password: 'crash password', country: 'FI', accept_terms: true })).status).toBe(201)
    const { accessToken, user } = (await (await call(server, 'POST', '/api/v1/user/login', { identifier: username, password: 'crash password' })).json()) as { accessToken: string; user: { id: string } }
    const auth = { authorization: `Bearer ${accessToken}` }
    expect((await call(server, 'PUT', '/api/v1/security/pin', { pin: PIN, password: 'crash password' }, auth)).status).toBe(200)
    expect((await call(server, 'POST', `/api/v1/admin/wallets/${user.id}/credit`, { amount: '1000', reference: `seed-${i}` }, { 'x-admin-token': ADMIN })).status).toBe(200)
    // Make the custody key now, so the rounds spend their time on withdrawals.
    expect((await fetch(`${server.url}/api/v1/wallet`, { headers: auth })).status).toBe(200)
    people.push({ id: user.id, username, token: accessToken })
  }

  const acknowledged = new Set<string>()
  let requestSeq = 0
  for (let round = 0; round < ROUNDS; round++) {
    const flows = people.flatMap((p) =>
      Array.from({ length: 4 }, async () => {
        const auth = { authorization: `Bearer ${p.token}` }
        try {
          const minted = (await (await call(server, 'POST', '/api/v1/security/pin-session', {}, auth)).json()) as { sessionId: string; sessionToken: string }
          const res = await call(
            server,
            'POST',
            `/api/v1/security/pin-session/${minted.sessionId}/verify`,
            { pin: PIN, amount: '1.5', destinationAddress: addressOf(ed25519.getPublicKey(ed25519.utils.randomSecretKey())), idempotencyKey: `crash-${requestSeq++}` },
            { ...auth, 'x-secure-session': minted.sessionToken },
          )
          if (res.status === 200) {
            const body = (await res.json()) as { valid: boolean; withdrawal?: { id: string } }
            if (body.withdrawal) acknowledged.add(body.withdrawal.id)
          }
        } catch {
          // the kill cut this request; what it did, if anything, must still add up
        }
      }),
    )
    // Anywhere from before the first debit to after several signatures.
    await Bun.sleep(50 + Math.floor(Math.random() * 700))
    server.proc.kill('SIGKILL')
    await server.proc.exited
    await Promise.all(flows)

    server = await serve()
    // The resumer signs what the kill left pending.
    let pending = -1
    for (let i = 0; i < 100 && pending !== 0; i++) {
      const db = new Database(join(dataDir, 'arena.sqlite'), { readonly: true })
      pending = (db.query("SELECT count(*) AS n FROM withdrawals WHERE status = 'pending_signature'").get() as { n: number }).n
      db.close()
      if (pending !== 0) await Bun.sleep(100)
    }
    expect(pending).toBe(0)

    const check = await run([BINARY, 'ledger', 'check', '--json'], env)
    expect({ code: check.code, report: JSON.parse(check.stdout) }).toMatchObject({ code: 0, report: { ok: true } })

    const db = new Database(join(dataDir, 'arena.sqlite'), { readonly: true })
    expect(db.query('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' })
    const rows = db.query('SELECT id, user_id, amount, status FROM withdrawals').all() as { id: string; user_id: string; amount: string; status: string }[]
    const ids = new Set(rows.map((r) => r.id))
    for (const id of acknowledged) expect(ids.has(id)).toBe(true)
    for (const p of people) {
      const spent = rows.filter((r) => r.user_id === p.id && r.status !== 'failed').reduce((sum, r) => sum + BigInt(r.amount), 0n)
      const balance = db.query('SELECT balance FROM ledger_accounts WHERE id = ?').get(`user:${p.id}:USDC`) as { balance: string }
      expect(BigInt(balance.balance)).toBe(1_000_000_000n - spent)
    }
    expect(rows.every((r) => r.status === 'signed' || r.status === 'failed')).toBe(true)
    db.close()
  }
  expect(acknowledged.size).toBeGreaterThan(0)
  expect((await server.signal('SIGTERM')).code).toBe(0)
}, 120_000)
