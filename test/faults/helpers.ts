// Shared by the disk-full and I/O-error tests: a small HTTP client for a
// running arena, the check that a refusal is the clean 503 the server
// promises, players set up through the public API, and the checks of a data
// dir's store (SQLite integrity, the ledger, the security-event chain).
import { join } from 'node:path'
import { ed25519 } from '@noble/curves/ed25519.js'
import type { Static } from '@sinclair/typebox'
import type { CreateGameResponse } from '../../src/modules/games/model'
import { addressOf } from '../../src/modules/wallet/frost'
import { onEngine } from '../helpers/app'
import { BINARY, run } from '../helpers/process'

/** errno of the injected failures that are not random (EIO): what a dying disk answers. */
export const EIO = 5

/** Why a libfiu disk-fault test of SQLite's data dir cannot run here, or null. */
export function fiuSkipReason(): string | null {
  // The disk faults of SQLite's data dir; the PostgreSQL run has its own (test/scale/postgres-faults.test.ts).
  if (onEngine('postgres')) return 'a SQLite fault test, run by npm test, not npm run test:pg'
  if (process.platform !== 'linux') return 'not Linux'
  if (!Bun.which('fiu-run') || !Bun.which('fiu-ctrl')) return 'fiu-run/fiu-ctrl not on PATH (Debian package fiu-utils)'
  const probe = Bun.spawnSync(['fiu-run', '-x', '-f', '', 'true'], { stderr: 'pipe' })
  if (probe.exitCode !== 0) return `fiu-run -x does not work here: ${probe.stderr.toString().trim()}`
  return null
}

export const ADMIN_TOKEN = 'faults-test-admin-token-0123456789abcdef'
export const PASSWORD = 'faults password'
export const PIN = '482916'

export interface Answer {
  status: number
  headers: Headers
  text: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any
}

export type Call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<Answer>

/** Calls a running server; never throws on a status, only when the connection fails. */
export function client(url: string): Call {
  return async (method, path, body, headers = {}) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const text = await res.text()
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      parsed = undefined
    }
    return { status: res.status, headers: res.headers, text, body: parsed }
  }
}

/**
 * Why an answer is not the clean refusal of a storage failure (null when it
 * is): 503 `service_unavailable` in the envelope and nothing else, JSON, a
 * `Retry-After` of whole seconds, a request id, and no SQL, SQLite code or
 * stack in the body.
 */
export function notCleanUnavailable(answer: Answer): string | null {
  if (answer.status !== 503) return `status ${answer.status}`
  if (!answer.headers.get('content-type')?.startsWith('application/json')) return `content-type ${answer.headers.get('content-type')}`
  const retryAfter = answer.headers.get('retry-after')
  if (retryAfter === null || !/^[1-9][0-9]*$/.test(retryAfter)) return `retry-after ${retryAfter}`
  if (!answer.headers.get('x-request-id')) return 'no x-request-id'
  const error = answer.body?.error
  if (!error || Object.keys(answer.body).length !== 1) return 'not an envelope'
  const keys = Object.keys(error).sort().join(',')
  if (keys !== 'code,message,status' || error.code !== 'service_unavailable' || error.status !== 503 || typeof error.message !== 'string') {
    return `envelope ${answer.text}`
  }
  if (/sqlite|insert|select|update|\bat\s|\.ts:|\.js:|errno|ENOSPC|EIO/i.test(answer.text)) return `leaks internals: ${answer.text}`
  return null
}

/** Tallies what each kind of request answered and keeps every answer that broke the rules. */
export class Outcomes {
  readonly counts = new Map<string, { ok: number; unavailable: number }>()
  readonly violations: string[] = []

  /** `ok` when the answer is one of `expected`, `unavailable` when it is a clean 503, `bad` otherwise (recorded). */
  judge(op: string, answer: Answer, expected: number[]): 'ok' | 'unavailable' | 'bad' {
    const tally = this.counts.get(op) ?? { ok: 0, unavailable: 0 }
    this.counts.set(op, tally)
    if (expected.includes(answer.status)) {
      tally.ok++
      return 'ok'
    }
    const why = notCleanUnavailable(answer)
    if (why === null) {
      tally.unavailable++
      return 'unavailable'
    }
    this.violations.push(`${op}: ${why} (${answer.status} ${answer.text.slice(0, 300)})`)
    return 'bad'
  }

  /** For answers that may never fail (reads, liveness). */
  must(op: string, answer: Answer, expected: number[]): void {
    if (!expected.includes(answer.status)) this.violations.push(`${op}: ${answer.status} ${answer.text.slice(0, 300)}`)
  }

  unavailable(op: string): number {
    return this.counts.get(op)?.unavailable ?? 0
  }

  ok(op: string): number {
    return this.counts.get(op)?.ok ?? 0
  }

  summary(): Record<string, string> {
    return Object.fromEntries([...this.counts].map(([op, c]) => [op, `${c.ok} ok / ${c.unavailable} x 503`]))
  }
}

export interface Player {
  id: string
  username: string
  token: string
  auth: Record<string, string>
}

/** Registers, logs in and (optionally) sets a PIN, credits the wallet and creates its custody key. */
export async function setUpPlayer(call: Call, username: string, options: { pin?: boolean; credit?: string; wallet?: boolean } = {}): Promise<Player> {
  const must = (what: string, answer: Answer, status: number) => {
    if (answer.status !== status) throw new Error(`${what} for ${username}: ${answer.status} ${answer.text}`)
    return answer
  }
  must('register', await register(call, username), 201)
  const login = must('login', await call('POST', '/api/v1/user/login', { identifier: username, password: PASSWORD }), 200)
  const player: Player = { id: login.body.user.id, username, token: login.body.accessToken, auth: { authorization: `Bearer ${login.body.accessToken}` } }
  if (options.pin) must('set pin', await call('PUT', '/api/v1/security/pin', { pin: PIN, password: PASSWORD }, player.auth), 200)
  if (options.credit) {
    must('credit', await call('POST', `/api/v1/admin/wallets/${player.id}/credit`, { amount: options.credit, reference: `setup-${username}` }, { 'x-admin-token': ADMIN_TOKEN }), 200)
  }
  if (options.wallet) must('wallet', await call('GET', '/api/v1/wallet', undefined, player.auth), 200)
  return player
}

/** POST /admin/games's answer (the server's model). */
export type Game = Static<typeof CreateGameResponse>

export interface Tournament {
  id: string
  status: string
  participants: { id: string; userId: string }[]
  matches: { id: string; round: number; status: string; slot1ParticipantId: string; slot2ParticipantId: string }[]
}

/** A match session to claim with; each claims that slot 1 won. */
export interface ClaimTicket {
  player: Player
  token: string
  winner: string
  matchId: string
  /** Stored (answered 200); a refused claim is tried again with the same token. */
  spent: boolean
}

/** A PIN session to verify, withdrawing `amount` to `address` under idempotency key `key`. */
export interface PinTicket {
  player: Player
  id: string
  token: string
  key: string
  address: string
  amount: string
}

export const gameHeaders = (game: Game, p: Player) => ({ ...p.auth, 'x-game-key': game.gameKey })

export async function createGame(call: Call, name: string): Promise<Game> {
  const created = await call('POST', '/api/v1/admin/games', { name }, { 'x-admin-token': ADMIN_TOKEN })
  if (created.status !== 201) throw new Error(`create game: ${created.status} ${created.text}`)
  return created.body as Game
}

/** Creates and starts a single-elimination tournament of `entrants`. */
export async function startTournament(call: Call, game: Game, entrants: Player[], name: string): Promise<Tournament> {
  const admin = { 'x-admin-token': ADMIN_TOKEN }
  const created = await call('POST', '/api/v1/admin/tournaments', { gameId: game.game.id, name, format: 'single_elimination', participants: entrants.map((p) => p.id) }, admin)
  if (created.status !== 201) throw new Error(`create tournament: ${created.status} ${created.text}`)
  const started = await call('POST', `/api/v1/admin/tournaments/${created.body.tournament.id}/start`, {}, admin)
  if (started.status !== 200) throw new Error(`start tournament: ${started.status} ${started.text}`)
  return started.body.tournament as Tournament
}

/** A match session for each seat of the tournament's running matches. */
export async function claimTickets(call: Call, game: Game, tournament: Tournament, players: Player[]): Promise<ClaimTicket[]> {
  const tickets: ClaimTicket[] = []
  for (const match of tournament.matches.filter((m) => m.status === 'running')) {
    for (const participantId of [match.slot1ParticipantId, match.slot2ParticipantId]) {
      const player = players.find((p) => p.id === tournament.participants.find((x) => x.id === participantId)!.userId)!
      const session = await call('POST', `/api/v1/game-sdk/${game.game.id}/sessions`, { matchId: match.id }, gameHeaders(game, player))
      if (session.status !== 201) throw new Error(`match session: ${session.status} ${session.text}`)
      tickets.push({ player, token: session.body.token, winner: match.slot1ParticipantId, matchId: match.id, spent: false })
    }
  }
  return tickets
}

/** `perPlayer` PIN sessions for each player, each for a withdrawal of `amount` to a fresh address; `key` names each one's idempotency key. */
export async function pinTickets(call: Call, players: Player[], perPlayer: number, amount: string, key: () => string): Promise<PinTicket[]> {
  const tickets: PinTicket[] = []
  for (const player of players) {
    for (let i = 0; i < perPlayer; i++) {
      const minted = await call('POST', '/api/v1/security/pin-session', {}, player.auth)
      if (minted.status !== 201) throw new Error(`pin session: ${minted.status} ${minted.text}`)
      tickets.push({ player, id: minted.body.sessionId, token: minted.body.sessionToken, key: key(), address: randomAddress(), amount })
    }
  }
  return tickets
}

export const register = (call: Call, username: string) =>
  call('POST', '/api/v1/user/register', { email: `${username}@example.com`, username, password: PASSWORD, country: 'FI', accept_terms: true })

export const sendClaim = (call: Call, game: Game, ticket: ClaimTicket) =>
  call('POST', `/api/v1/game-sdk/${game.game.id}/results`, { outcome: 'WIN', winnerParticipantId: ticket.winner }, { ...gameHeaders(game, ticket.player), 'x-session-token': ticket.token })

export const sendVerify = (call: Call, ticket: PinTicket) =>
  call(
    'POST',
    `/api/v1/security/pin-session/${ticket.id}/verify`,
    { pin: PIN, amount: ticket.amount, destinationAddress: ticket.address, idempotencyKey: ticket.key },
    { ...ticket.player.auth, 'x-secure-session': ticket.token },
  )

export function randomAddress(): string {
  return addressOf(ed25519.getPublicKey(ed25519.utils.randomSecretKey()))
}

/**
 * Where a data dir is and how to reach it: `prefix` runs a command where the
 * data dir is visible (`nsenter -t <pid> -m --` for a tmpfs that exists only
 * in the server's mount namespace; empty otherwise). SQLite cannot open a
 * database through /proc/<pid>/root: it resolves that link to "/" and would
 * open a file of the same name in our own namespace.
 */
export interface Store {
  dataDir: string
  prefix: string[]
}

export interface Statement {
  sql: string
  params?: (string | number | null)[]
}

const QUERY_SCRIPT = `
const { Database } = require('bun:sqlite')
const write = process.env.FAULTS_WRITE === '1'
const db = new Database(process.env.FAULTS_DB, write ? { readwrite: true } : { readonly: true })
db.run('PRAGMA busy_timeout = 5000')
const out = JSON.parse(process.env.FAULTS_SQL).map((s) => db.query(s.sql).all(...(s.params ?? [])))
db.close()
process.stdout.write(JSON.stringify(out))
`

/** Runs statements on the store's database in a process of its own (read-only unless `write`); answers each one's rows. */
export async function query<T = Record<string, unknown>>(store: Store, statements: Statement[], options: { write?: boolean } = {}): Promise<T[][]> {
  const result = await run([...store.prefix, process.execPath, '-e', QUERY_SCRIPT], {
    FAULTS_DB: join(store.dataDir, 'arena.sqlite'),
    FAULTS_SQL: JSON.stringify(statements),
    FAULTS_WRITE: options.write ? '1' : '0',
  })
  if (result.code !== 0) throw new Error(`query failed (${result.code}): ${result.stderr}`)
  return JSON.parse(result.stdout) as T[][]
}

/** One number from one statement (`SELECT count(*) AS n ...`). */
export async function count(store: Store, sql: string, ...params: (string | number | null)[]): Promise<number> {
  const [rows] = await query<{ n: number }>(store, [{ sql, params }])
  return rows![0]!.n
}

/**
 * The store as a whole: SQLite's own integrity and foreign-key checks, every
 * ledger invariant (`arena ledger check`), the security-event hash chain
 * (`arena security verify-log`) and the operator audit chain (`arena audit
 * verify`). Returns the problems found, none when all hold.
 */
export async function storeProblems(store: Store): Promise<string[]> {
  const problems: string[] = []
  const [integrity, fk] = await query(store, [{ sql: 'PRAGMA integrity_check' }, { sql: 'PRAGMA foreign_key_check' }])
  if (JSON.stringify(integrity) !== JSON.stringify([{ integrity_check: 'ok' }])) problems.push(`integrity_check: ${JSON.stringify(integrity)}`)
  if (fk!.length > 0) problems.push(`foreign_key_check: ${JSON.stringify(fk!.slice(0, 5))}`)
  const env = { ARENA_DATA_DIR: store.dataDir }
  const ledger = await run([...store.prefix, BINARY, 'ledger', 'check', '--json'], env)
  if (ledger.code !== 0) problems.push(`ledger check exited ${ledger.code}: ${ledger.stdout} ${ledger.stderr}`)
  const chain = await run([...store.prefix, BINARY, 'security', 'verify-log', '--json'], env)
  if (chain.code !== 0) problems.push(`security verify-log exited ${chain.code}: ${chain.stdout} ${chain.stderr}`)
  const audit = await run([...store.prefix, BINARY, 'audit', 'verify', '--json'], env)
  if (audit.code !== 0) problems.push(`audit verify exited ${audit.code}: ${audit.stdout} ${audit.stderr}`)
  return problems
}

/** Waits until `check` answers true, up to `timeoutMs`; answers whether it did. */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 10_000, stepMs = 100): Promise<boolean> {
  const deadline = performance.now() + timeoutMs
  for (;;) {
    if (await check()) return true
    if (performance.now() > deadline) return false
    await Bun.sleep(stepMs)
  }
}
