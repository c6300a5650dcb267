// Invariant: when the disk under the data dir fills up while the server runs,
// every write that cannot be stored is refused with a clean 503 envelope and
// Retry-After (never a 500, a stack or a crash), nothing is half-written (a
// refused registration leaves no user, a refused claim leaves its session
// token unspent, a withdrawal is debited-and-recorded or neither, the ledger
// and SQLite's integrity check hold), reads and /readyz keep answering, and
// once space is freed the SAME process stores writes again, including what
// it had buffered (security events) or left pending (withdrawal signatures).
//
// The compiled binary runs in a private mount namespace (`unshare -m`, root
// only) with its data dir on a small tmpfs. The test reaches that tmpfs
// through /proc/<pid>/root, fills it with a file the way any other writer on
// the disk would, drives writes until they fail, checks, deletes the file and
// checks that writes work again. ARENA_DISK_ROUNDS sets how many times (CI: 2).
import { afterAll, expect, test } from 'bun:test'
import { closeSync, openSync, statfsSync, unlinkSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { sha256Hex } from '../../src/shared/crypto'
import { onEngine, tempDir } from '../helpers/app'
import { BINARY, buildBinary, startServe, type ServerProcess } from '../helpers/process'
import { ADMIN_TOKEN, claimTickets, client, count, createGame, eventually, gameHeaders, Outcomes, PASSWORD, pinTickets, query, register, sendClaim, sendVerify, setUpPlayer, startTournament, storeProblems, type Answer, type Player, type Store } from './helpers'

const ROUNDS = Number(process.env.ARENA_DISK_ROUNDS ?? 2)
/** Storm waves per round while the disk is full. */
const WAVES = Number(process.env.ARENA_DISK_WAVES ?? 4)
const TMPFS_MB = 12

function skipReason(): string | null {
  // The disk faults of SQLite's data dir; the PostgreSQL run has its own (test/scale/postgres-faults.test.ts).
  if (onEngine('postgres')) return 'a SQLite fault test, run by npm test, not npm run test:pg'
  if (process.platform !== 'linux') return 'not Linux'
  if (process.getuid?.() !== 0) return 'not root (mounting a tmpfs in a private mount namespace needs root)'
  if (!Bun.which('unshare')) return 'no unshare(1) on PATH'
  const probe = Bun.spawnSync(['unshare', '-m', '--propagation', 'private', 'true'], { stderr: 'pipe' })
  if (probe.exitCode !== 0) return `unshare -m fails here: ${probe.stderr.toString().trim()}`
  return null
}

const skip = skipReason()
if (skip) console.log(`disk-full test skipped: ${skip}`)

const started: ServerProcess[] = []
afterAll(() => started.forEach((s) => s.proc.kill('SIGKILL')))

/** Writes zeros into `path` until the file system says ENOSPC; answers the bytes written. */
function fillDisk(path: string): number {
  const fd = openSync(path, 'w')
  let written = 0
  try {
    for (const size of [1 << 20, 64 << 10, 4 << 10, 512, 1]) {
      const chunk = Buffer.alloc(size)
      for (;;) {
        try {
          const n = writeSync(fd, chunk)
          written += n
          if (n < size) break
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error
          break
        }
      }
    }
  } finally {
    closeSync(fd)
  }
  return written
}

/** 'ok', 'unavailable' (a clean 503), or 'bad' (recorded as a violation). */
type Verdict = ReturnType<Outcomes['judge']>

test.skipIf(skip !== null)(`disk full ${ROUNDS}x under a running server: clean 503s, nothing half-written, writes resume without a restart`, async () => {
  await buildBinary()
  const dataDir = tempDir('arena-diskfull-')
  // The tmpfs is mounted over dataDir inside the namespace; outside it, dataDir stays an empty directory.
  const server = await startServe(
    ['unshare', '-m', '--propagation', 'private', 'sh', '-c', `mount -t tmpfs -o size=${TMPFS_MB}m,mode=0700 arena-disk-full "$ARENA_DATA_DIR" && exec "$0" serve`, BINARY],
    { ARENA_DATA_DIR: dataDir, ARENA_ADMIN_TOKEN: ADMIN_TOKEN, ARENA_LOG_LEVEL: 'info' },
  )
  started.push(server)
  // unshare and sh exec: this pid is arena's. /proc/<pid>/root resolves paths in its mount
  // namespace for plain file calls; SQLite and the CLI run there through nsenter.
  const inside = `/proc/${server.proc.pid}/root${dataDir}`
  const store: Store = { dataDir, prefix: ['nsenter', '-t', String(server.proc.pid), '-m', '--'] }
  expect(statfsSync(inside).blocks * statfsSync(inside).bsize).toBeLessThanOrEqual(TMPFS_MB * 1024 * 1024)
  const filler = join(inside, 'filler')
  const call = client(server.url)
  const admin = { 'x-admin-token': ADMIN_TOKEN }
  const outcomes = new Outcomes()

  // Players: 0-3 play and withdraw, 4-5 log in repeatedly, 6.. get their wallet (a custody key on disk) during the storm.
  const players: Player[] = []
  for (let i = 0; i < 6; i++) players.push(await setUpPlayer(call, `disk_${i}`, { pin: i < 4, credit: i < 4 ? '1000' : undefined, wallet: i < 4 }))
  const walletless: Player[] = []
  for (let i = 0; i < ROUNDS * 2; i++) walletless.push(await setUpPlayer(call, `diskw_${i}`))
  const game = await createGame(call, 'Disk Full Cup')

  // What the server acknowledged, and what it refused, to be checked against the store.
  const credited = new Map<string, { userId: string; acknowledged: boolean }>()
  const refusedRegistrations: string[] = []
  const acceptedEvents = { count: 0 }
  const logins = new Map<string, number>(players.map((p) => [p.id, 1]))
  let seq = 0

  const finals: string[] = []
  const decidedAnswers: string[] = []
  let jobsQueuedOnFullDisk = 0

  const credit = async (p: Player, reference: string): Promise<Verdict> => {
    const verdict = outcomes.judge('credit', await call('POST', `/api/v1/admin/wallets/${p.id}/credit`, { amount: '1', reference }, admin), [200])
    credited.set(reference, { userId: p.id, acknowledged: verdict === 'ok' || credited.get(reference)?.acknowledged === true })
    return verdict
  }

  for (let round = 0; round < ROUNDS; round++) {
    // --- Space available: semi-finals to claim in, PIN sessions to verify with, sessions last used long ago.
    const semis = await startTournament(call, game, players.slice(0, 4), `semis ${round}`)
    const claims = await claimTickets(call, game, semis, players)
    const pinSessions = await pinTickets(call, players.slice(0, 4), WAVES, '2.5', () => `disk-${round}-${seq++}`)
    // A session's last use is recorded at most once a minute; pretend a minute passed, so the
    // storm's first authenticated request of each session wants to write that, on a full disk.
    await query(store, [{ sql: 'UPDATE auth_sessions SET last_used_at = last_used_at - 120000' }], { write: true })

    // A final decided just before the disk fills: its finalization is a background job that
    // then runs on the full disk. The server is stopped (SIGSTOP) from the decision until the
    // disk is full, so the job cannot run before; on odd rounds the WAL is also checkpointed
    // away first, so the disk is full from the first page SQLite writes (on even rounds the
    // WAL's old pages are reused first, the way it happens on a real disk).
    const final = await startTournament(call, game, players.slice(0, 2), `final ${round}`)
    finals.push(final.id)
    const finalMatch = final.matches[0]!
    let decision = ''
    for (const player of players.slice(0, 2)) {
      const session = await call('POST', `/api/v1/game-sdk/${game.game.id}/sessions`, { matchId: finalMatch.id }, gameHeaders(game, player))
      const claim = await call('POST', `/api/v1/game-sdk/${game.game.id}/results`, { outcome: 'WIN', winnerParticipantId: finalMatch.slot1ParticipantId }, { ...gameHeaders(game, player), 'x-session-token': session.body.token })
      decision = claim.body.decision
    }
    expect(decision).toBe('game_advance_pending_finalization')
    let filled = 0
    server.proc.kill('SIGSTOP')
    try {
      const [[job] = []] = await query<{ status: string }>(store, [{ sql: "SELECT status FROM jobs WHERE json_extract(payload, '$.tournamentId') = ?", params: [final.id] }])
      let walEmptied = false
      if (round % 2 === 1) {
        const [[checkpoint] = []] = await query<{ busy: number; log: number }>(store, [{ sql: 'PRAGMA wal_checkpoint(TRUNCATE)' }], { write: true })
        walEmptied = checkpoint?.busy === 0 && checkpoint.log === 0
      }
      filled = fillDisk(filler)
      if (job?.status === 'queued' && walEmptied) jobsQueuedOnFullDisk++
    } finally {
      server.proc.kill('SIGCONT')
    }
    expect(filled).toBeGreaterThan(0)
    expect(statfsSync(inside).bavail).toBe(0)
    // Until SQLite needs a page it does not have (the WAL may have room left), writes still succeed: write until they stop.
    let firstRefusal = -1
    for (let i = 0; i < 3000 && firstRefusal < 0; i++) {
      if ((await credit(players[i % 4]!, `fill-${round}-${seq++}`)) === 'unavailable') firstRefusal = i
    }
    expect(firstRefusal).toBeGreaterThanOrEqual(0)

    // --- The storm: every kind of write, again and again, with the reads that must keep working.
    const withdrawals: { session: (typeof pinSessions)[number]; verdict: Verdict; recorded?: boolean }[] = []
    const refusedThisRound: string[] = []
    for (let wave = 0; wave < WAVES; wave++) {
      const jobs: Promise<unknown>[] = []
      const username = `diskr_${round}_${wave}`
      jobs.push(
        (async () => {
          if (outcomes.judge('register', await register(call, username), [201]) === 'unavailable') refusedThisRound.push(username)
        })(),
      )
      const loginPlayer = players[4 + (wave % 2)]!
      jobs.push(
        (async () => {
          const answer = await call('POST', '/api/v1/user/login', { identifier: loginPlayer.username, password: PASSWORD })
          if (outcomes.judge('login', answer, [200]) === 'ok') logins.set(loginPlayer.id, logins.get(loginPlayer.id)! + 1)
        })(),
      )
      for (let i = 0; i < 2; i++) jobs.push(credit(players[(wave + i) % 4]!, `storm-${round}-${seq++}`))
      jobs.push((async () => outcomes.judge('pin mint', await call('POST', '/api/v1/security/pin-session', {}, players[wave % 4]!.auth), [201]))())
      for (const session of pinSessions.filter((_, i) => i % WAVES === wave)) {
        jobs.push(
          (async () => {
            withdrawals.push({ session, verdict: outcomes.judge('withdrawal', await sendVerify(call, session), [200]) })
          })(),
        )
      }
      // Claims not yet stored are tried again on every wave with the same token: a refused claim must not have spent it.
      for (const claim of claims.filter((c) => !c.spent)) {
        jobs.push(
          (async () => {
            if (outcomes.judge('claim', await sendClaim(call, game, claim), [200]) === 'ok') claim.spent = true
          })(),
        )
      }
      // A match session for a semi-final: 201, or 409 once that match is really decided (checked below).
      jobs.push(
        (async () => {
          const matchId = claims[0]!.matchId
          const answer = await call('POST', `/api/v1/game-sdk/${game.game.id}/sessions`, { matchId }, gameHeaders(game, claims[0]!.player))
          if (outcomes.judge('match session', answer, [201, 409]) === 'ok' && answer.status === 409) decidedAnswers.push(matchId)
        })(),
      )
      jobs.push(
        (async () => {
          const answer = await call('POST', '/api/v1/security/events', { kind: 'DISK_FULL_PROBE', level: 'WARN', details: { round, wave } }, players[wave % 4]!.auth)
          outcomes.must('security event', answer, [202])
          if (answer.body?.accepted === true) acceptedEvents.count++
        })(),
      )
      if (wave < 2) {
        const fresh = walletless[round * 2 + wave]!
        jobs.push((async () => outcomes.judge('first wallet', await call('GET', '/api/v1/wallet', undefined, fresh.auth), [200]))())
      }
      // Reads answer while the disk is full.
      for (const player of players.slice(0, 6)) {
        jobs.push((async () => outcomes.must('GET /me', await call('GET', '/api/v1/me', undefined, player.auth), [200]))())
      }
      jobs.push((async () => outcomes.must('GET /wallet', await call('GET', '/api/v1/wallet', undefined, players[wave % 4]!.auth), [200]))())
      jobs.push((async () => outcomes.must('GET /tournaments', await call('GET', `/api/v1/tournaments/${semis.id}`, undefined, players[0]!.auth), [200]))())
      jobs.push((async () => outcomes.must('GET /events', await call('GET', '/api/v1/events', undefined, players[1]!.auth), [200]))())
      jobs.push((async () => outcomes.must('/readyz', await call('GET', '/readyz'), [200]))())
      jobs.push((async () => outcomes.must('/healthz', await call('GET', '/healthz'), [200]))())
      await Promise.all(jobs)
    }
    refusedRegistrations.push(...refusedThisRound)
    // A 409 "match is decided" was true: the match is decided in the store. (Once, a
    // claim that was refused with its batch had decided it in the batch's rolled-back
    // transaction, and a session request in that batch answered from that state.)
    for (const matchId of decidedAnswers.splice(0)) {
      expect({ matchId, status: await count(store, "SELECT count(*) AS n FROM matches WHERE id = ? AND status != 'running'", matchId) }).toEqual({ matchId, status: 1 })
    }
    expect(outcomes.violations).toEqual([])
    expect(server.proc.exitCode).toBeNull()

    // --- Still full: what was refused left nothing behind, and the store is whole.
    {
      const unspent = claims.filter((c) => !c.spent)
      const [users, tokens, pinRows] = await query(store, [
        { sql: `SELECT username FROM users WHERE username IN (${refusedThisRound.map(() => '?').join(',') || "''"})`, params: refusedThisRound },
        // A refused claim spent nothing: its token is unused and no claim of that participant is recorded.
        {
          sql: `SELECT s.consumed_at AS consumedAt, (SELECT count(*) FROM match_claims c WHERE c.match_id = s.match_id AND c.participant_id = s.participant_id) AS recorded
                FROM game_sessions s WHERE s.token_hash IN (${unspent.map(() => '?').join(',') || "''"})`,
          params: unspent.map((c) => sha256Hex(c.token)),
        },
        // A withdrawal is debited-and-recorded with its PIN session spent, or none of these (the ledger check covers the debit).
        {
          sql: `SELECT s.id AS session, s.consumed_at IS NOT NULL AS spent, w.id IS NOT NULL AS recorded
                FROM pin_sessions s LEFT JOIN withdrawals w ON w.pin_session_id = s.id WHERE s.id IN (${withdrawals.map(() => '?').join(',') || "''"})`,
          params: withdrawals.map((w) => w.session.id),
        },
      ])
      expect(users).toEqual([])
      expect(tokens).toEqual(unspent.map(() => ({ consumedAt: null, recorded: 0 })))
      expect(pinRows!.filter((r) => r.spent !== r.recorded)).toEqual([])
      const recorded = new Set(pinRows!.filter((r) => r.recorded).map((r) => r.session))
      expect(withdrawals.filter((w) => w.verdict === 'ok' && !recorded.has(w.session.id))).toEqual([])
      for (const w of withdrawals) w.recorded = recorded.has(w.session.id)
    }
    expect(await storeProblems(store)).toEqual([])

    // --- Space comes back: the same process stores writes again, at once.
    unlinkSync(filler)
    expect(server.proc.exitCode).toBeNull()
    const after = (op: string, answer: Answer, expected: number[]) => outcomes.must(`after freeing space, ${op}`, answer, expected)
    for (const username of refusedThisRound) {
      after('register again', await register(call, username), [201])
    }
    for (const [reference, c] of credited) {
      if (!c.acknowledged) {
        after('credit again', await call('POST', `/api/v1/admin/wallets/${c.userId}/credit`, { amount: '1', reference }, admin), [200])
        c.acknowledged = true
      }
    }
    for (const claim of claims.filter((c) => !c.spent)) {
      after('claim again (same token)', await sendClaim(call, game, claim), [200])
      claim.spent = true
    }
    for (const w of withdrawals.filter((x) => x.verdict === 'unavailable')) {
      // Refused before its transaction committed: nothing debited, the PIN session unspent, so the same verify succeeds now.
      // Refused after it (recording the signature failed): debited and recorded, the session spent; the resumer signs it.
      after(`withdrawal again (${w.recorded ? 'recorded' : 'not recorded'})`, await sendVerify(call, w.session), w.recorded ? [410] : [200])
    }
    after('login', await call('POST', '/api/v1/user/login', { identifier: players[4]!.username, password: PASSWORD }), [200])
    logins.set(players[4]!.id, logins.get(players[4]!.id)! + 1)
    after('first wallet', await call('GET', '/api/v1/wallet', undefined, walletless[round * 2]!.auth), [200])
    after('pin mint', await call('POST', '/api/v1/security/pin-session', {}, players[0]!.auth), [201])
    expect(outcomes.violations).toEqual([])
  }

  // --- Every round saw refusals of each kind of write, and what was acknowledged (or retried) is all there.
  console.log('disk full outcomes', outcomes.summary())
  for (const op of ['register', 'login', 'credit', 'withdrawal', 'claim', 'pin mint']) expect({ op, refused: outcomes.unavailable(op) > 0 }).toEqual({ op, refused: true })
  expect(server.lines.some((l) => l.level === 'error' && String(l.error).includes('database or disk is full'))).toBe(true)
  expect(server.lines.filter((l) => typeof l.status === 'number' && l.status >= 500 && l.status !== 503)).toEqual([])

  // Buffered security events and pending signatures are written once there is room.
  expect(await eventually(async () => (await call('GET', '/readyz')).body?.securityEvents?.buffered === 0)).toBe(true)
  expect(await eventually(async () => (await count(store, "SELECT count(*) AS n FROM withdrawals WHERE status = 'pending_signature'")) === 0, 15_000)).toBe(true)
  // Finalizations that met the full disk ran once there was room, each exactly once.
  expect(await eventually(async () => (await count(store, "SELECT count(*) AS n FROM jobs WHERE status != 'done'")) === 0, 15_000)).toBe(true)
  for (const id of finals) expect((await call('GET', `/api/v1/tournaments/${id}`, undefined, players[0]!.auth)).body.tournament.status).toBe('completed')
  if (jobsQueuedOnFullDisk > 0) {
    expect(server.lines.some((l) => (l.msg === 'job worker error' || l.msg === 'job failed') && String(l.error).includes('disk is full'))).toBe(true)
  }
  const [events, registered, signed] = await query<{ n: number }>(store, [
    { sql: "SELECT count(*) AS n FROM security_events WHERE kind = 'DISK_FULL_PROBE'" },
    { sql: `SELECT count(*) AS n FROM users WHERE username IN (${refusedRegistrations.map(() => '?').join(',') || "''"})`, params: refusedRegistrations },
    { sql: "SELECT count(*) AS n FROM withdrawals WHERE status = 'signed'" },
  ])
  expect(events![0]!.n).toBe(acceptedEvents.count)
  expect(registered![0]!.n).toBe(refusedRegistrations.length)
  expect(signed![0]!.n).toBeGreaterThan(0)
  for (const player of players) {
    const [balance, spent, credits, sessions] = (await query<{ n: number | string }>(store, [
      { sql: 'SELECT balance AS n FROM ledger_accounts WHERE id = ?', params: [`user:${player.id}:USDC`] },
      { sql: "SELECT coalesce(sum(CAST(amount AS INTEGER)), 0) AS n FROM withdrawals WHERE user_id = ? AND status != 'failed'", params: [player.id] },
      { sql: "SELECT count(*) AS n FROM ledger_transactions WHERE kind = 'credit' AND json_extract(memo, '$.userId') = ? AND reference NOT LIKE 'credit:setup-%'", params: [player.id] },
      { sql: 'SELECT count(*) AS n FROM auth_sessions WHERE user_id = ?', params: [player.id] },
    ])).map((rows) => rows[0])
    const references = [...credited.values()].filter((c) => c.userId === player.id).length
    const setup = players.indexOf(player) < 4 ? 1000_000_000 : 0
    // Each reference credited exactly once, every acknowledged withdrawal debited once, one auth session per login that answered 200.
    expect({ user: player.username, credits: Number(credits!.n), balance: BigInt(balance?.n ?? 0), sessions: Number(sessions!.n) }).toEqual({
      user: player.username,
      credits: references,
      balance: BigInt(setup + references * 1_000_000 - Number(spent!.n)),
      sessions: logins.get(player.id) ?? 0,
    })
  }
  expect(await storeProblems(store)).toEqual([])
  expect(server.stderr()).toBe('')
  // The same process all along; it still stops cleanly.
  expect(server.proc.exitCode).toBeNull()
  expect((await server.signal('SIGTERM')).code).toBe(0)
}, 120_000)
