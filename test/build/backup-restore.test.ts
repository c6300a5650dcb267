// Backup under load and restore, on the compiled binary (issue 22): a server
// takes claims and withdrawals while `arena backup` runs beside it; the
// archive is restored into a new dir and the binary started on it. Every
// write acknowledged before the backup command started is there, the ledger
// checks, and a wallet created before the backup signs a withdrawal on the
// restored instance (its custody shares came back with it). Then the refusals:
// a wrong passphrase, a truncated and an edited archive write nothing.
import { afterAll, expect, test } from 'bun:test'
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { postJson, remote, req, tempDir, type Handler } from '../helpers/app'
import { ADMIN_TOKEN, admin, createGame, players, type Player, type TournamentView } from '../helpers/arena'
import { bearer } from '../helpers/auth'
import { PIN, funded, mint, someAddress, verify } from '../helpers/purchases'
import { BINARY, buildBinary, run, startServe, type ServerProcess } from '../helpers/process'

const started: ServerProcess[] = []
afterAll(() => started.forEach((s) => s.proc.kill('SIGKILL')))

const PASSPHRASE = 'backup drill passphrase'
const CREDIT = 1000

interface Withdrawal {
  id: string
  status: string
  amount: string
  signature?: string
}

async function withdraw(ctx: Handler, p: Player, key: string): Promise<Response> {
  const session = await mint(ctx, p)
  return verify(ctx, p, session, { pin: PIN, amount: '1', destinationAddress: someAddress(), idempotencyKey: key })
}

async function withdrawals(ctx: Handler, p: Player): Promise<Withdrawal[]> {
  const out: Withdrawal[] = []
  let after: string | null = null
  do {
    const res = await ctx.handle(req(`/api/v1/wallet/withdrawals?limit=100${after === null ? '' : `&after=${after}`}`, { headers: bearer(p.tokens.accessToken) }))
    expect(res.status).toBe(200)
    const page = (await res.json()) as { withdrawals: Withdrawal[]; cursor: string | null }
    out.push(...page.withdrawals)
    after = page.cursor
  } while (after !== null)
  return out
}

test('a backup taken under claims and withdrawals restores every acknowledged write, and the restored instance signs', async () => {
  await buildBinary()
  const root = tempDir('arena-backup-restore-')
  const data = join(root, 'data')
  const archive = join(root, 'arena.age')
  const env = { ARENA_DATA_DIR: data, ARENA_ADMIN_TOKEN: ADMIN_TOKEN, ARENA_BACKUP_PASSPHRASE: PASSPHRASE }
  const server = await startServe([BINARY, 'serve'], env)
  started.push(server)
  const ctx = remote(() => server.url)

  // Before the load: a game, eight players in 28 two-player tournaments (one
  // match each), four wallets that withdraw under load, one kept for after the restore.
  const { game, gameKey } = await createGame(ctx, 'Backup Duel')
  const people = await players(ctx, 8)
  const matches: { tournamentId: string; matchId: string; a: Player; b: Player; winner: string }[] = []
  for (let i = 0; i < people.length; i++) {
    for (let j = i + 1; j < people.length; j++) {
      const [a, b] = [people[i]!, people[j]!]
      const created = await ctx.handle(postJson('/api/v1/admin/tournaments', { gameId: game.id, name: `Cup ${i}-${j}`, format: 'single_elimination', participants: [a.userId, b.userId] }, admin))
      expect(created.status).toBe(201)
      const { tournament } = (await created.json()) as { tournament: TournamentView }
      const startedT = await ctx.handle(postJson(`/api/v1/admin/tournaments/${tournament.id}/start`, {}, admin))
      expect(startedT.status).toBe(200)
      const match = ((await startedT.json()) as { tournament: TournamentView }).tournament.matches[0]!
      const winner = (i + j) % 2 === 0 ? match.slot1ParticipantId! : match.slot2ParticipantId!
      matches.push({ tournamentId: tournament.id, matchId: match.id, a, b, winner })
    }
  }
  const withdrawers = await Promise.all([0, 1, 2, 3].map(() => funded(ctx, String(CREDIT))))
  const later = await funded(ctx, String(CREDIT))

  // The load: both claims of each match, in turn; each withdrawer withdraws 1 USDC again and again.
  const t0 = performance.now()
  let backupStartedAt = Number.POSITIVE_INFINITY
  let stop = false
  const decided: { tournamentId: string; matchId: string; winner: string; at: number }[] = []
  const signedBefore = new Map<string, { id: string; status: string; startedAt: number; at: number }[]>()
  const claim = async (p: Player, matchId: string, winner: string) => {
    const auth = { authorization: `Bearer ${p.tokens.accessToken}`, 'x-game-key': gameKey }
    const session = await ctx.handle(postJson(`/api/v1/game-sdk/${game.id}/sessions`, { matchId }, auth))
    expect(session.status).toBe(201)
    const { token } = (await session.json()) as { token: string }
    const res = await ctx.handle(postJson(`/api/v1/game-sdk/${game.id}/results`, { outcome: 'WIN', winnerParticipantId: winner }, { ...auth, 'x-session-token': token }))
    expect(res.status).toBe(200)
    return ((await res.json()) as { decision: string }).decision
  }
  const claimsLoad = (async () => {
    for (const m of matches) {
      if (stop) break
      expect(await claim(m.a, m.matchId, m.winner)).toBe('pending')
      expect(await claim(m.b, m.matchId, m.winner)).toBe('game_advance_pending_finalization')
      decided.push({ tournamentId: m.tournamentId, matchId: m.matchId, winner: m.winner, at: performance.now() })
    }
  })()
  const withdrawalLoad = withdrawers.map(async (p, n) => {
    const acked: { id: string; status: string; startedAt: number; at: number }[] = []
    signedBefore.set(p.userId, acked)
    for (let k = 0; !stop; k++) {
      const startedAt = performance.now()
      const res = await withdraw(ctx, p, `load-${n}-${k}`)
      expect(res.status).toBe(200)
      const { withdrawal } = (await res.json()) as { withdrawal: Withdrawal }
      acked.push({ id: withdrawal.id, status: withdrawal.status, startedAt, at: performance.now() })
    }
  })

  // Let acknowledgements pile up, then back up while the load goes on.
  const withdrawn = () => [...signedBefore.values()].reduce((n, acked) => n + acked.length, 0)
  while ((decided.length < 6 || withdrawn() < 4) && performance.now() - t0 < 30_000) await Bun.sleep(50)
  backupStartedAt = performance.now()
  const backup = await run([BINARY, 'backup', '--out', archive, '--json'], { ARENA_DATA_DIR: data, ARENA_BACKUP_PASSPHRASE: PASSPHRASE })
  const backupEndedAt = performance.now()
  expect({ code: backup.code, stderr: backup.stderr }).toEqual({ code: 0, stderr: '' })
  const decidedDuringBackup = decided.filter((d) => d.at > backupStartedAt).length
  await Bun.sleep(1000)
  stop = true
  await Promise.all([claimsLoad, ...withdrawalLoad])
  expect((await server.signal('SIGTERM')).code).toBe(0)

  const before = <T extends { at: number }>(items: T[]) => items.filter((item) => item.at < backupStartedAt)
  const decidedBefore = before(decided)
  const withdrawnBefore = [...signedBefore.values()].flatMap(before)
  const withdrawnAfter = [...signedBefore.values()].flat().filter((w) => w.startedAt > backupEndedAt).length
  console.log(
    `acknowledged before the backup: ${decidedBefore.length} decided matches, ${withdrawnBefore.length} withdrawals; decided while it ran: ${decidedDuringBackup}; withdrawals asked for after it: ${withdrawnAfter}`,
  )
  expect(decidedBefore.length).toBeGreaterThan(0)
  expect(withdrawnBefore.length).toBeGreaterThan(0)
  expect(JSON.parse(backup.stdout)).toMatchObject({ ok: true, out: archive })

  // Restore into a new dir: ledger and both chains checked before it is moved into place.
  const restoredDir = join(root, 'restored')
  const restore = await run([BINARY, 'restore', archive, '--data-dir', restoredDir, '--json'], { ARENA_BACKUP_PASSPHRASE: PASSPHRASE })
  expect({ code: restore.code, stderr: restore.stderr }).toEqual({ code: 0, stderr: '' })
  const report = JSON.parse(restore.stdout) as { ok: boolean; ledger: { ok: boolean }; securityLog: { ok: boolean }; auditLog: { ok: boolean } }
  expect(report).toMatchObject({ ok: true, ledger: { ok: true }, securityLog: { ok: true }, auditLog: { ok: true } })
  expect(readdirSync(root).sort()).toEqual(['arena.age', 'data', 'restored'])

  // The binary on the restored dir: same configuration otherwise (keys, chain key and shares come from the archive).
  const restored = await startServe([BINARY, 'serve'], { ARENA_DATA_DIR: restoredDir, ARENA_ADMIN_TOKEN: ADMIN_TOKEN })
  started.push(restored)
  const again = remote(() => restored.url)

  for (const d of decidedBefore) {
    const res = await again.handle(req(`/api/v1/admin/tournaments/${d.tournamentId}`, { headers: admin }))
    expect(res.status).toBe(200)
    const t = ((await res.json()) as { tournament: TournamentView }).tournament
    expect(t.matches.find((m) => m.id === d.matchId)?.winnerParticipantId).toBe(d.winner)
  }
  for (const p of withdrawers) {
    const kept = await withdrawals(again, p)
    const byId = new Map(kept.map((w) => [w.id, w]))
    for (const acked of before(signedBefore.get(p.userId)!)) expect(byId.get(acked.id)?.status).toBe(acked.status)
    // One snapshot, taken before the command returned: a withdrawal asked for after that is not in it.
    for (const acked of signedBefore.get(p.userId)!.filter((w) => w.startedAt > backupEndedAt)) expect(byId.has(acked.id)).toBe(false)
    // Balances match the withdrawals the restored instance holds (each 1 USDC, none refused).
    const res = await again.handle(req('/api/v1/wallet', { headers: bearer(p.tokens.accessToken) }))
    const { balance } = (await res.json()) as { balance: string }
    expect(Number(balance)).toBe(CREDIT - kept.filter((w) => w.status !== 'failed' && w.status !== 'rejected').length)
  }
  const ledger = await run([BINARY, 'ledger', 'check'], { ARENA_DATA_DIR: restoredDir })
  expect({ code: ledger.code, stderr: ledger.stderr }).toEqual({ code: 0, stderr: '' })

  // A wallet created before the backup signs on the restored instance: its key shares came back.
  const res = await withdraw(again, later, 'after-restore')
  expect(res.status).toBe(200)
  let status = ((await res.json()) as { withdrawal: Withdrawal }).withdrawal.status
  for (let i = 0; i < 100 && status !== 'signed'; i++) {
    await Bun.sleep(100)
    status = (await withdrawals(again, later))[0]!.status
  }
  expect(status).toBe('signed')
  expect((await withdrawals(again, later))[0]!.signature).toBeString()
  expect((await restored.signal('SIGTERM')).code).toBe(0)

  // Refusals on the binary: each exits 1 with a clear message and writes nothing.
  const listing = readdirSync(root).sort()
  const refused = async (file: string, passphrase: string, message: string) => {
    const target = join(root, 'refused')
    const result = await run([BINARY, 'restore', file, '--data-dir', target], { ARENA_BACKUP_PASSPHRASE: passphrase })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(message)
    expect(result.stderr).not.toContain('    at ')
    expect(existsSync(target)).toBe(false)
    expect(readdirSync(root).filter((name) => name !== 't.age' && name !== 'e.age').sort()).toEqual(listing)
  }
  await refused(archive, 'not the passphrase', 'wrong ARENA_BACKUP_PASSPHRASE')
  const bytes = readFileSync(archive)
  writeFileSync(join(root, 't.age'), bytes.subarray(0, Math.floor(bytes.length / 2)))
  await refused(join(root, 't.age'), PASSPHRASE, 'truncated')
  const edited = Buffer.from(bytes)
  edited[Math.floor(edited.length / 2)]! ^= 0x40
  writeFileSync(join(root, 'e.age'), edited)
  await refused(join(root, 'e.age'), PASSPHRASE, 'altered')
}, 180_000)
