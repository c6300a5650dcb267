// The world the route fuzz runs in, and the one place a generated RequestSpec
// becomes a real Request. Built once through the real routes (a template data
// dir and database: four logged-in players, two of them with a PIN and a
// funded wallet, a login victim, two games, a running and a draft tournament),
// then copied for every route (the data dir with its SQLite file, or the data
// dir and a PostgreSQL database made from the template's), so each route is fuzzed against a fresh copy of the same world:
// no route's damage (a logout, a rotated key, a locked PIN) leaks into
// another's, and a seed replays a route on its own.
//
// Consumables are made fresh when a request names them: a game-session token
// or a PIN session is minted through the real routes right before the request
// that uses it. A bearer that stops working (a fuzzed logout or refresh reuse
// revoked its session) is replaced by logging in again, within a budget, since
// each login costs an argon2id verify.
import { eq } from 'drizzle-orm'
import { createHash, createPrivateKey, generateKeyPairSync, sign } from 'node:crypto'
import { cpSync, rmSync } from 'node:fs'
import { ed25519 } from '@noble/curves/ed25519.js'
import { checkLedger } from '../../src/modules/wallet/ledger'
import { addressOf } from '../../src/modules/wallet/frost'
import { verifySecurityLog } from '../../src/modules/security/event-log'
import { RAW_BODY_ROUTES } from '../../src/plugins/json-body'
import { copyDatabaseEnv, createTestApp, postJson, req, tempDir, type TestApp } from '../helpers/app'
import { ADMIN_TOKEN, admin } from '../helpers/arena'
import { PASSWORD } from '../helpers/auth'
import { PIN } from '../helpers/purchases'
import fc from 'fast-check'
import { totpCode } from '../../src/modules/operators/totp'
import { PageSessions } from '../../src/device-page/session'
import { CONSOLE_ROLES, consoleRoleIndex, isConsoleRoute, isDevicePageRoute, JObj, Raw, Ref, toJson, USERS, type Hints, type JVal, type RequestSpec, type RouteShape } from './hostile-requests'
import { cliActor } from '../helpers/operators'
import { publishMatchDecided } from '../helpers/webhook-deliveries'
import { WEBHOOK_TYPES } from '../../src/modules/webhooks/catalogue'
import { startSteamStub } from '../helpers/steam-stub'

interface PoolUser {
  id: string
  username: string
  email: string
  accessToken: string
  refreshToken: string
  /** A refresh token of this user that was already rotated: presenting it is replay. */
  spentRefreshToken: string | null
  hasPin: boolean
}

export interface TemplateValues {
  users: PoolUser[]
  victim: { id: string; username: string; email: string }
  revoked: { accessToken: string; refreshToken: string }
  gameId: string
  gameKey: string
  staleGameKey: string
  otherGameId: string
  otherGameKey: string
  runningTournamentId: string
  draftTournamentId: string
  /** In registration, user 0 not registered: a join succeeds. */
  registrationTournamentId: string
  /** In registration with check-in open (at the world's fixed clock), user 0 registered: a leave or a check-in succeeds. */
  seatedTournamentId: string
  /** A decided final of a finalizing tournament, and its loser: a correction of it is accepted. */
  correctable: { matchId: string; loserParticipantId: string }
  eventsCursor: string
  addresses: string[]
  /** User 1's withdrawal above ARENA_WITHDRAWAL_APPROVAL_ABOVE: an operator's approve or reject of it succeeds. */
  awaitingWithdrawalId: string
  /**
   * Matchmaking (contract §16): the queue QUEUE in each game (the first game's is `matchmaking`'s);
   * user 0 waits in the first game's (GET and DELETE …/tickets/current find the ticket; joining
   * succeeds in the other game's). Challenges
   * (unstaked but the first): 0 received by user 0 from user 1, staked (accepting it escrows both),
   * 1 made by user 0 to user 1 (user 0 withdraws it).
   */
  challengeIds: string[]
  /** Named operators, password PASSWORD: 0 enabled (moderator), 1 disabled, 2 with TOTP enabled. */
  operators: { id: string; name: string }[]
  /** The console (/console): a signed-in session of one operator of each of CONSOLE_ROLES, in that order, and credentials it must refuse. */
  console: {
    sessions: ConsoleSession[]
    /** A console session that was signed out. */
    endedToken: string
    /** An operator's API session: not a console one. */
    apiToken: string
    /** A banned user (lifting the ban succeeds). */
    bannedUserId: string
    /** The tournament of `correctable` (the console corrects a match under its tournament's path). */
    correctableTournamentId: string
  }
  /** Matchmaking (contract §16): an open queue of the game, and a match it made (users 2 and 3, waiting for its ready check) that an operator may cancel. */
  matchmaking: { queueName: string; standaloneMatchId: string }
  /** Game servers (contract §17): a server of the first game (whose results are `either`) and its private key (an Ed25519 seed, base64url), which signs a result at build time. */
  gameServer: { id: string; privateKey: string }
  /** Evidence (contract §17): a match of users 0 and 1 they both claimed to have won (disputed: user 0 attaches to it), and a file user 0 attached (an operator downloads it). */
  evidence: { disputedMatchId: string; evidenceId: string }
  /** A payout held for review (user 0's winnings of a staked challenge, flagged shared_device): an operator's release or void of it succeeds. */
  heldPayoutId: string
  /** Webhooks (contract §18): an enabled endpoint (a public address: checked without a resolver) and a delivery queued for it (resending it succeeds). */
  webhook: { id: string; deliveryId: string }
}

interface ConsoleSession {
  operatorId: string
  name: string
  role: (typeof CONSOLE_ROLES)[number]
  token: string
}

export interface Template {
  dir: string
  /** The environment naming the template's database besides its data dir (PostgreSQL runs). */
  databaseEnv: Record<string, string>
  values: TemplateValues
  remove(): void
}

// Withdrawals above 100000 await an operator's approval (a generated one can, once generated
// credits cover it); the template makes one, for the approve and reject routes.
const METRICS_TOKEN = 'fuzz-metrics-token-0123456789abcdef01234'
/** The Steam Web API on loopback (a boundary we do not own), for POST /user/login/steam; its one known player signs in with KNOWN_STEAM.ticket. */
const steam = startSteamStub()
const KNOWN_STEAM = steam.player()
const env = { ARENA_ADMIN_TOKEN: ADMIN_TOKEN, ARENA_WITHDRAWAL_APPROVAL_ABOVE: '100000', ARENA_METRICS_TOKEN: METRICS_TOKEN, ...steam.env() }

/** The guest device secret pool user `i` links (users 0 and 2): known, so a known-good guest sign-in and a repeated link can name it. */
const deviceSecretOf = (i: number) => `fuzz-pool-user-${i}-device-secret-0123456789`
const FIXTURE_ADDRESS = 'fuzz-fixture'
/** What the x-arena-signature Ref resolves to until build signs the request as sent. */
const SIGN_AT_BUILD = 'sign-at-build'

/** The name of the queue the template opens in each game (TemplateValues.challengeIds, .matchmaking). */
const QUEUE = 'fuzz-queue'
/** A webhook endpoint's URL at a public address: a literal, so no resolver is asked. */
const KNOWN_GOOD_WEBHOOK_URL = 'https://93.184.215.14/arena-webhooks'

async function call(t: TestApp, request: Request, expected: number): Promise<Record<string, unknown>> {
  const res = await t.handle(request)
  const text = await res.text()
  if (res.status !== expected) throw new Error(`fuzz world: ${request.method} ${new URL(request.url).pathname} answered ${res.status} (expected ${expected}): ${text}`)
  return JSON.parse(text) as Record<string, unknown>
}

const bearerOf = (token: string) => ({ authorization: `Bearer ${token}` })

/**
 * encodeURIComponent, except that a lone surrogate (which it refuses) is sent
 * as the bytes a careless encoder would write for it: invalid UTF-8 in the URL.
 */
function encodeLoosely(text: string): string {
  // With the u flag, [^] takes a surrogate pair whole and a lone surrogate alone.
  return text.replace(/[^]/gu, (ch) => {
    if (ch.length === 1 && ch >= '\ud800' && ch <= '\udfff') {
      const c = ch.charCodeAt(0)
      return [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('')
    }
    return encodeURIComponent(ch)
  })
}

const isConsolePath = (path: string) => path === '/console' || path.startsWith('/console/')

/** Builds the template data dir through the real routes (about a dozen argon2id hashes, once). */
export async function buildTemplate(): Promise<Template> {
  const dir = tempDir('arena-fuzz-template-')
  const t = await createTestApp({ dataDir: dir, env })
  try {
    const stamp = Date.now().toString(36)
    const register = async (name: string) => {
      const body = { email: `${name}_${stamp}@example.com`, username: `${name}_${stamp}`, password: PASSWORD, country: 'DE', accept_terms: true }
      const { user } = (await call(t, postJson('/api/v1/user/register', body), 201)) as { user: { id: string } }
      return { id: user.id, username: body.username, email: body.email }
    }
    const login = async (username: string) =>
      (await call(t, postJson('/api/v1/user/login', { identifier: username, password: PASSWORD }), 200)) as { accessToken: string; refreshToken: string }

    const users: PoolUser[] = []
    for (let i = 0; i < USERS; i++) {
      const u = await register(`fuzz${i}`)
      const tokens = await login(u.username)
      users.push({ ...u, ...tokens, spentRefreshToken: null, hasPin: false })
    }
    const victim = await register('victim')

    // A session that was logged out: its tokens must be refused everywhere.
    const gone = await login(users[0]!.username)
    await call(t, postJson('/api/v1/user/s/logout', {}, bearerOf(gone.accessToken)), 200)

    // Rotate user 1's refresh token once, so a spent one exists to replay.
    const rotated = (await call(t, postJson('/api/v1/auth/validate', { refreshToken: users[1]!.refreshToken }, bearerOf(users[1]!.accessToken)), 200)) as { accessToken: string; refreshToken: string }
    users[1] = { ...users[1]!, spentRefreshToken: users[1]!.refreshToken, ...rotated }

    // Users 0 and 1 can buy: a PIN, a wallet and a balance.
    for (const u of users.slice(0, 2)) {
      await call(t, new Request('http://localhost/api/v1/security/pin', { method: 'PUT', headers: { ...bearerOf(u.accessToken), 'content-type': 'application/json' }, body: JSON.stringify({ pin: PIN, password: PASSWORD }) }), 200)
      u.hasPin = true
      await call(t, postJson(`/api/v1/admin/wallets/${u.id}/credit`, { amount: '1000', reference: `fund-${u.id}` }, admin), 200)
      await call(t, req('/api/v1/wallet', { headers: bearerOf(u.accessToken) }), 200)
    }

    // Users 0 and 2 also sign in as a guest device (contract §13): a second identity, so unlinking `device` (the player's own, an operator's) can succeed.
    for (const i of [0, 2]) {
      await call(t, postJson('/api/v1/me/identities/device', { deviceSecret: deviceSecretOf(i) }, bearerOf(users[i]!.accessToken)), 200)
    }

    const first = (await call(t, postJson('/api/v1/admin/games', { name: 'Fuzz Duel' }, admin), 201)) as { game: { id: string }; gameKey: string }
    const { gameKey } = (await call(t, postJson(`/api/v1/admin/games/${first.game.id}/rotate-key`, {}, admin), 200)) as { gameKey: string }
    const other = (await call(t, postJson('/api/v1/admin/games', { name: 'Other Game' }, admin), 201)) as { game: { id: string }; gameKey: string }

    const created = (await call(t, postJson('/api/v1/admin/tournaments', { gameId: first.game.id, name: 'Fuzz Cup', format: 'single_elimination', participants: users.map((u) => u.id) }, admin), 201)) as { tournament: { id: string } }
    await call(t, postJson(`/api/v1/admin/tournaments/${created.tournament.id}/start`, {}, admin), 200)
    const draft = (await call(t, postJson('/api/v1/admin/tournaments', { gameId: first.game.id, name: 'Draft Cup', format: 'single_elimination', participants: [users[2]!.id, users[3]!.id] }, admin), 201)) as { tournament: { id: string } }

    const inMinutes = (m: number) => new Date(t.clock.now().getTime() + m * 60_000).toISOString()
    const registrationBody = (name: string, checkIn?: { opensAt: string; closesAt: string }) => ({
      gameId: first.game.id,
      name,
      format: 'single_elimination',
      registration: { closesAt: inMinutes(50), maxPlayers: 8, ...(checkIn ? { checkIn } : {}) },
      startsAt: inMinutes(60),
    })
    const open = (await call(t, postJson('/api/v1/admin/tournaments', registrationBody('Open Cup'), admin), 201)) as { tournament: { id: string } }
    const seated = (await call(t, postJson('/api/v1/admin/tournaments', registrationBody('Seated Cup', { opensAt: inMinutes(1), closesAt: inMinutes(55) }), admin), 201)) as { tournament: { id: string } }
    await call(t, postJson(`/api/v1/tournaments/${seated.tournament.id}/registration`, {}, bearerOf(users[0]!.accessToken)), 201)
    // Check-in open at the worlds' clock, which never moves: its window moved back past the creation-time rule.
    await t.peek.db.update(t.peek.tables.tournaments).set({ checkInOpensAt: new Date(t.clock.now().getTime() - 60_000) }).where(eq(t.peek.tables.tournaments.id, seated.tournament.id))
    const fix = (await call(t, postJson('/api/v1/admin/tournaments', { gameId: first.game.id, name: 'Fix Cup', format: 'single_elimination', participants: [users[2]!.id, users[3]!.id] }, admin), 201)) as { tournament: { id: string } }
    const fixStarted = (await call(t, postJson(`/api/v1/admin/tournaments/${fix.tournament.id}/start`, {}, admin), 200)) as { tournament: { matches: { id: string; slot1ParticipantId: string; slot2ParticipantId: string }[] } }
    const fixFinal = fixStarted.tournament.matches[0]!
    await call(t, postJson(`/api/v1/admin/matches/${fixFinal.id}/resolve`, { winnerParticipantId: fixFinal.slot1ParticipantId }, admin), 200)

    // Evidence (contract §17): users 0 and 1 both claim the final of a cup of two (disputed), and user 0 attaches a file.
    const disputeCup = (await call(t, postJson('/api/v1/admin/tournaments', { gameId: first.game.id, name: 'Dispute Cup', format: 'single_elimination', participants: [users[0]!.id, users[1]!.id] }, admin), 201)) as { tournament: { id: string } }
    const disputeStarted = (await call(t, postJson(`/api/v1/admin/tournaments/${disputeCup.tournament.id}/start`, {}, admin), 200)) as {
      tournament: { matches: { id: string; slot1ParticipantId: string; slot2ParticipantId: string }[]; participants: { id: string; userId: string }[] }
    }
    const disputed = disputeStarted.tournament.matches[0]!
    for (const u of [users[0]!, users[1]!]) {
      const mine = disputeStarted.tournament.participants.find((p) => p.userId === u.id)!.id
      const session = (await call(t, postJson(`/api/v1/game-sdk/${first.game.id}/sessions`, { matchId: disputed.id }, { ...bearerOf(u.accessToken), 'x-game-key': gameKey }), 201)) as { token: string }
      await call(t, postJson(`/api/v1/game-sdk/${first.game.id}/results`, { outcome: 'WIN', winnerParticipantId: mine }, { ...bearerOf(u.accessToken), 'x-game-key': gameKey, 'x-session-token': session.token }), 200)
    }
    const attached = (await call(t, new Request(`http://localhost/api/v1/matches/${disputed.id}/evidence`, { method: 'POST', headers: { ...bearerOf(users[0]!.accessToken), 'content-type': 'text/plain' }, body: 'fuzz evidence' }), 201)) as { evidence: { id: string } }

    // An open queue of the game, and a match it made: users 2 and 3 paired, waiting for the ready check.
    const queueName = QUEUE
    await call(t, postJson(`/api/v1/admin/games/${first.game.id}/queues`, { name: queueName, rated: false, window: { initial: 400, widenPerSecond: 0, max: 400 }, readyCheckS: 600 }, admin), 201)
    const paired = [] as string[]
    for (const u of [users[2]!, users[3]!]) paired.push(((await call(t, postJson(`/api/v1/games/${first.game.id}/queues/${queueName}/tickets`, {}, bearerOf(u.accessToken)), 201)) as { ticket: { id: string } }).ticket.id)
    if ((await t.services.matchmaking.matchTick()) !== 1) throw new Error('fuzz template: the queue made no match')
    const standaloneMatchId = (await t.storage.read.matchmaking.ticketsByIds(paired))[0]!.matchId!

    // User 1's withdrawal awaiting approval, funded apart so its balance stays 1000.
    const u1 = users[1]!
    await call(t, postJson(`/api/v1/admin/wallets/${u1.id}/credit`, { amount: '100001', reference: `fund-approval-${u1.id}` }, admin), 200)
    const pinSession = (await call(t, postJson('/api/v1/security/pin-session', {}, bearerOf(u1.accessToken)), 201)) as { sessionId: string; sessionToken: string }
    const awaiting = (await call(
      t,
      postJson(
        `/api/v1/security/pin-session/${pinSession.sessionId}/verify`,
        { pin: PIN, amount: '100001', destinationAddress: addressOf(ed25519.getPublicKey(ed25519.utils.randomSecretKey())), idempotencyKey: 'fuzz-awaiting' },
        { ...bearerOf(u1.accessToken), 'x-secure-session': pinSession.sessionToken },
      ),
      200,
    )) as { withdrawal: { id: string; status: string } }
    if (awaiting.withdrawal.status !== 'awaiting_approval') throw new Error(`fuzz template: the withdrawal is ${awaiting.withdrawal.status}, not awaiting_approval`)

    // Matchmaking (contract §16): see TemplateValues.challengeIds.
    await call(t, postJson(`/api/v1/admin/games/${other.game.id}/queues`, { name: QUEUE, rated: false, window: { initial: 100, widenPerSecond: 10, max: 400 }, readyCheckS: 30 }, admin), 201)
    await call(t, postJson(`/api/v1/games/${first.game.id}/queues/${QUEUE}/tickets`, {}, bearerOf(users[0]!.accessToken)), 201)
    const challenge = async (from: number, to: number, stake?: string) =>
      ((await call(t, postJson(`/api/v1/games/${first.game.id}/challenges`, { opponent: users[to]!.username, expiresInS: 86_400, ...(stake ? { stake } : {}) }, bearerOf(users[from]!.accessToken)), 201)) as { challenge: { id: string } }).challenge.id
    const challengeIds = [await challenge(1, 0, '1'), await challenge(0, 1)]

    // A payout held for review (contract §17): users 0 and 1 share a device token, user 0 wins a staked challenge of user 1's; release and void of it succeed.
    await t.storage.write(async (tx) => {
      for (const u of users.slice(0, 2)) await tx.auth.rememberPlace({ subject: `user:${u.id}`, kind: 'device', placeHash: 'f'.repeat(64), lastSeenAt: t.clock.now() }, 10)
    })
    const heldChallenge = await challenge(0, 1, '1')
    const { challenge: accepted } = (await call(t, postJson(`/api/v1/challenges/${heldChallenge}/accept`, {}, bearerOf(users[1]!.accessToken)), 200)) as { challenge: { matchId: string } }
    const { match: heldMatch } = (await call(t, req(`/api/v1/matches/${accepted.matchId}`, { headers: bearerOf(users[0]!.accessToken) }), 200)) as { match: { players: { userId: string; participantId: string }[] } }
    const winnerSeat = heldMatch.players.find((p) => p.userId === users[0]!.id)!.participantId
    for (const u of users.slice(0, 2)) {
      const gameHeaders = { ...bearerOf(u.accessToken), 'x-game-key': gameKey }
      const { token } = (await call(t, postJson(`/api/v1/game-sdk/${first.game.id}/sessions`, { matchId: accepted.matchId }, gameHeaders), 201)) as { token: string }
      await call(t, postJson(`/api/v1/game-sdk/${first.game.id}/results`, { outcome: 'WIN', winnerParticipantId: winnerSeat }, { ...gameHeaders, 'x-session-token': token }), 200)
    }
    const [heldPayout] = (await t.storage.read.payouts.holdsPage('held', null, 1))
    if (!heldPayout) throw new Error('fuzz template: the shared device held no payout')

    // Operators (contract §11): 0 a moderator, 1 disabled, 2 with TOTP: the operator routes each have one to act on.
    const operators: { id: string; name: string }[] = []
    for (const [i, role] of (['moderator', 'viewer', 'finance'] as const).entries()) {
      const name = `fuzz-op-${i}`
      const created = (await call(t, postJson('/api/v1/admin/operators', { name, role }, admin), 201)) as { operator: { id: string }; password: string }
      await call(t, postJson('/api/v1/admin/sessions', { name, password: created.password, newPassword: PASSWORD }), 201)
      operators.push({ id: created.operator.id, name })
    }
    await call(t, postJson(`/api/v1/admin/operators/${operators[1]!.id}/disable`, {}, admin), 200)
    const enrolment = await t.services.operatorTotp.beginTotp(operators[2]!.id, PASSWORD)
    await t.services.operatorTotp.confirmTotp(operators[2]!.id, totpCode(enrolment.secret, t.clock.now()), t.services.audit.actor({ id: operators[2]!.id, name: operators[2]!.name, role: 'finance' }, 'api'))

    // The console: an operator of each role, its one-time password replaced through the sign-in form, its cookie kept.
    const consoleSessions: ConsoleSession[] = []
    for (const role of CONSOLE_ROLES) {
      const name = `fuzz-console-${role}`
      const created = await t.services.operators.create({ name, role }, cliActor(t, 'cli:fuzz'))
      const form = new URLSearchParams({ name, password: created.password, newPassword: PASSWORD })
      const res = await t.handle(new Request('http://localhost/console/login', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() }))
      const token = /arena_console=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1]
      if (res.status !== 303 || token === undefined) throw new Error(`fuzz template: console sign-in of ${name} answered ${res.status}: ${await res.text()}`)
      consoleSessions.push({ operatorId: created.operator.id, name, role, token })
    }
    const viewerName = consoleSessions[consoleRoleIndex('viewer')]!.name
    const ended = await t.services.operatorSessions.signIn({ name: viewerName, password: PASSWORD, kind: 'console', userAgent: 'fuzz-fixture', ip: FIXTURE_ADDRESS })
    await t.services.operatorSessions.signOut(ended.token)
    const api = await t.services.operatorSessions.signIn({ name: viewerName, password: PASSWORD, kind: 'api', userAgent: 'fuzz-fixture', ip: FIXTURE_ADDRESS })
    const banned = await register('banned')
    await call(t, postJson(`/api/v1/admin/users/${banned.id}/ban`, { reason: 'fuzz fixture' }, admin), 200)

    // Game servers (contract §17): the first game takes its server's results and its players' claims.
    const serverKey = generateKeyPairSync('ed25519')
    const registered = (await call(t, postJson(`/api/v1/admin/games/${first.game.id}/servers`, { name: 'fuzz-server', publicKey: serverKey.publicKey.export({ format: 'jwk' }).x! }, admin), 201)) as { server: { id: string } }
    await call(t, new Request(`http://localhost/api/v1/admin/games/${first.game.id}`, { method: 'PATCH', headers: { ...admin, 'content-type': 'application/json' }, body: JSON.stringify({ results: 'either' }) }), 200)

    // Webhooks (contract §18): an endpoint of every type, and a delivery queued for it.
    const hook = (await call(t, postJson('/api/v1/admin/webhooks', { url: KNOWN_GOOD_WEBHOOK_URL, types: [...WEBHOOK_TYPES] }, admin), 201)) as { webhook: { id: string } }
    const [hookDeliveryId] = await publishMatchDecided(t)
    if (hookDeliveryId === undefined) throw new Error('fuzz template: no webhook delivery queued')

    const { cursor } = (await call(t, req('/api/v1/events', { headers: bearerOf(users[0]!.accessToken) }), 200)) as { cursor: string }

    const values: TemplateValues = {
      users,
      victim,
      revoked: gone,
      gameId: first.game.id,
      gameKey,
      staleGameKey: first.gameKey,
      otherGameId: other.game.id,
      otherGameKey: other.gameKey,
      runningTournamentId: created.tournament.id,
      draftTournamentId: draft.tournament.id,
      registrationTournamentId: open.tournament.id,
      seatedTournamentId: seated.tournament.id,
      correctable: { matchId: fixFinal.id, loserParticipantId: fixFinal.slot2ParticipantId },
      eventsCursor: cursor,
      addresses: [0, 1, 2].map(() => addressOf(ed25519.getPublicKey(ed25519.utils.randomSecretKey()))),
      awaitingWithdrawalId: awaiting.withdrawal.id,
      challengeIds,
      operators,
      console: { sessions: consoleSessions, endedToken: ended.token, apiToken: api.token, bannedUserId: banned.id, correctableTournamentId: fix.tournament.id },
      matchmaking: { queueName, standaloneMatchId },
      gameServer: { id: registered.server.id, privateKey: serverKey.privateKey.export({ format: 'jwk' }).d! },
      evidence: { disputedMatchId: disputed.id, evidenceId: attached.evidence.id },
      heldPayoutId: heldPayout.id,
      webhook: { id: hook.webhook.id, deliveryId: hookDeliveryId },
    }
    return { dir, databaseEnv: t.databaseEnv, values, remove: () => rmSync(dir, { recursive: true, force: true }) }
  } finally {
    await t.close()
  }
}

interface MatchSeat {
  matchId: string
  tournamentId: string
  participantId: string
  opponentParticipantId: string | null
}

/** What one request's Refs resolved to, so a PIN session named by the path and by the header is the same one. */
interface Resolution {
  subject: number
  usedBearer: number | null
  seat?: MatchSeat | null
  pinSession?: { sessionId: string; sessionToken: string } | null
  values: Map<string, string>
  /** The console session whose cookie this request sent (its CSRF token is the one `console:csrf` means). */
  consoleSession?: number
  /** The first sign-in's step ticket whose cookie this request sent (then `console:csrf` means the step's token). */
  passwordStep?: string
  /** The device page's sign-in this request's cookie carried (`device:csrf` means its token). */
  devicePage?: string
}

export interface Built {
  request: Request
  resolution: Resolution
  /** Aborts the request's signal: the client going away (ends a long poll). */
  hangUp?: () => void
}

/** Budget of replacement logins per world (each is an argon2id verify). */
const RENEWALS = 30
/** Budget of console sessions made anew per world (a sign-in, sometimes a password reset: argon2id each). */
const CONSOLE_RENEWALS = 30

export class World {
  readonly t: TestApp
  private readonly v: TemplateValues
  private readonly users: PoolUser[]
  private readonly suspect = new Set<number>()
  private readonly unusable = new Set<number>()
  renewals = 0
  private gameKey: string
  private staleGameKey: string
  private otherGameKey: string
  private readonly tournaments: string[]
  private readonly knownMatches = new Set<string>()
  private readonly knownParticipants = new Set<string>()
  private stalePinSession: { sessionId: string; sessionToken: string } | null = null
  private staleSessionToken: string | null = null
  private readonly jwtSecret: string
  private readonly dir: string
  /** The console sessions (CONSOLE_ROLES order), replaced when a fuzzed request ends one. */
  private readonly consoleSessions: ConsoleSession[]
  /** The device page's signed sign-ins (the app's own key and clock). */
  private readonly pageSessions: PageSessions
  /** Console sessions a request may have ended or changed (its operator disabled, its role or password changed): checked before reuse. */
  private readonly consoleSuspect = new Set<number>()
  consoleRenewals = 0
  /** One-time operators made for the first sign-in step's known-good requests (console:passwordStep). */
  private passwordSteps = 0
  /** Log lines already checked for error lines. */
  private logSeen = 0

  /** A world on a copy of the template's data dir and database. */
  static async open(template: Template): Promise<World> {
    const dir = tempDir('arena-fuzz-route-')
    cpSync(template.dir, dir, { recursive: true })
    const database = await copyDatabaseEnv(template.databaseEnv)
    return new World(template, dir, await createTestApp({ dataDir: dir, env: { ...env, ...database } }))
  }

  private constructor(template: Template, dir: string, t: TestApp) {
    this.dir = dir
    this.t = t
    this.v = template.values
    this.users = template.values.users.map((u) => ({ ...u }))
    this.gameKey = this.v.gameKey
    this.staleGameKey = this.v.staleGameKey
    this.otherGameKey = this.v.otherGameKey
    this.tournaments = [this.v.runningTournamentId]
    this.jwtSecret = this.t.secrets.signingKeys.at(-1)!.secret
    this.consoleSessions = template.values.console.sessions.map((c) => ({ ...c }))
    this.pageSessions = new PageSessions({ storage: t.storage, clock: t.clock, key: t.secrets.chainKey })
  }

  async close(): Promise<void> {
    await this.t.close()
    rmSync(this.dir, { recursive: true, force: true })
  }

  /** Error-level log lines written since the last call (only the new lines are read: the whole text joined per request grew with the log, quadratic in a route's run). */
  newErrorLines(): string[] {
    const fresh = this.t.logLinesFrom(this.logSeen)
    this.logSeen += fresh.length
    return fresh.filter((line) => line.includes('"level":"error"'))
  }

  /** The world's invariants after a run: nothing lost, nothing broken, nothing polluted. */
  async invariants(): Promise<string[]> {
    const problems: string[] = []
    // A flush that fails throws here, and would otherwise only be an error line later.
    try {
      await this.t.services.securityLog.flush()
    } catch (error) {
      problems.push(`security-event flush failed: ${String(error)}`)
    }
    const chain = await verifySecurityLog(this.t.services.storage.read.security, this.t.secrets.chainKey)
    if (!chain.ok) problems.push(`security-event chain broken at ${chain.brokenAt}: ${chain.reason}`)
    const audit = await this.t.services.audit.verify(this.t.services.storage.read.audit)
    if (!audit.ok) problems.push(`audit chain broken at ${audit.brokenAt}: ${audit.reason}`)
    const ledger = await checkLedger(this.t.services.storage.read.wallet)
    if (!ledger.ok) problems.push(...ledger.problems.map((p) => `ledger: ${p}`))
    const probe = {} as Record<string, unknown>
    if (Object.keys(Object.prototype).length > 0 || probe.polluted !== undefined || probe.isAdmin !== undefined) problems.push('Object.prototype was polluted')
    return problems
  }

  // ---------------------------------------------------------------------------
  // Live values

  private async bearerFor(i: number): Promise<string> {
    if (this.suspect.has(i)) {
      this.suspect.delete(i)
      const me = await this.t.handle(req('/api/v1/me', { headers: bearerOf(this.users[i]!.accessToken) }))
      if (me.status !== 200) await this.renew(i)
    }
    return this.users[i]!.accessToken
  }

  /** A new session for pool user i, through the real login service (the fixture's own client address). */
  private async renew(i: number): Promise<void> {
    if (this.unusable.has(i) || this.renewals >= RENEWALS) return
    this.renewals++
    try {
      const tokens = await this.t.services.signIn.login({ identifier: this.users[i]!.username, password: PASSWORD, address: FIXTURE_ADDRESS, userAgent: 'fuzz-fixture' })
      this.users[i] = { ...this.users[i]!, accessToken: tokens.accessToken, refreshToken: tokens.refreshToken }
    } catch {
      // Throttled (a fuzzed PIN change guessed this user's password): this user stays logged out.
      this.unusable.add(i)
    }
  }

  /**
   * The live console session i: when a request may have ended it, it is
   * checked and, when it is gone or its operator changed, the operator is put
   * back as the template made it (enabled, its role, no authenticator, the
   * pool's password) and signed in again, through the services as the CLI would.
   */
  private async consoleToken(i: number): Promise<string> {
    const c = this.consoleSessions[i]!
    if (!this.consoleSuspect.has(i)) return c.token
    this.consoleSuspect.delete(i)
    const live = await this.t.services.operatorSessions.session(c.token, 'console')
    const operator = await this.t.services.operators.byId(c.operatorId)
    if (live !== null && operator.role === c.role && !operator.disabled && !operator.totpEnabled) return c.token
    if (this.consoleRenewals >= CONSOLE_RENEWALS) return c.token
    this.consoleRenewals++
    const by = cliActor(this.t, 'cli:fuzz')
    try {
      if (operator.disabled) await this.t.services.operators.enable(c.operatorId, by)
      if (operator.role !== c.role) await this.t.services.operators.setRole(c.operatorId, c.role, by)
      if (operator.totpEnabled) await this.t.services.operatorTotp.disableTotp(c.operatorId, by)
      if (live !== null && !operator.disabled) return c.token
      const signIn = (password: string, newPassword?: string) =>
        this.t.services.operatorSessions.signIn({ name: c.name, password, newPassword, kind: 'console', userAgent: 'fuzz-fixture', ip: FIXTURE_ADDRESS })
      // A fuzzed reset left a one-time password: reset again to learn it.
      const signedIn = await signIn(PASSWORD).catch(async () => {
        const { password } = await this.t.services.operators.resetPassword(c.operatorId, by)
        return signIn(password, PASSWORD)
      })
      c.token = signedIn.token
    } catch {
      // Throttled, or the last admin cannot be changed back: the old (refused) cookie stays, and the route's requests stop at the session check.
    }
    return c.token
  }

  /** Every console session is checked before its next use (after a route that acts on operators or sessions). */
  /**
   * Sets up a new authenticator for the operator (turning off one it has,
   * as the command line may), confirmed with the code of the step before
   * now, so the code of now is still unused: what turning it off asks for.
   * Null when the operator's password is no longer PASSWORD (a fuzzed reset).
   */
  private async freshTotpOf(operatorId: string): Promise<string | null> {
    const { operators, operatorTotp } = this.t.services
    const by = cliActor(this.t, 'cli:fuzz')
    if ((await operators.byId(operatorId)).totpEnabled) await operatorTotp.disableTotp(operatorId, by)
    try {
      const { secret } = await operatorTotp.beginTotp(operatorId, PASSWORD)
      await operatorTotp.confirmTotp(operatorId, totpCode(secret, new Date(this.t.clock.now().getTime() - 30_000)), by)
      return secret
    } catch {
      return null
    }
  }

  private suspectConsole(i?: number): void {
    if (i === undefined) this.consoleSessions.forEach((_, j) => this.consoleSuspect.add(j))
    else this.consoleSuspect.add(i)
  }

  private async tournament(id: string) {
    const res = await this.t.handle(req(`/api/v1/admin/tournaments/${id}`, { headers: admin }))
    if (res.status !== 200) return null
    const { tournament } = (await res.json()) as {
      tournament: { id: string; participants: { id: string; userId: string }[]; matches: { id: string; status: string; slot1ParticipantId: string | null; slot2ParticipantId: string | null }[] }
    }
    for (const m of tournament.matches) this.knownMatches.add(m.id)
    for (const p of tournament.participants) this.knownParticipants.add(p.id)
    return tournament
  }

  /** A running match of user i (a new tournament is started when none is left). */
  private async seatOf(i: number): Promise<MatchSeat | null> {
    for (let attempt = 0; attempt < 2; attempt++) {
      for (const id of [...this.tournaments].reverse()) {
        const t = await this.tournament(id)
        const mine = t?.participants.find((p) => p.userId === this.users[i]!.id)
        const match = mine && t!.matches.find((m) => m.status === 'running' && (m.slot1ParticipantId === mine.id || m.slot2ParticipantId === mine.id))
        if (match) {
          return { matchId: match.id, tournamentId: t!.id, participantId: mine.id, opponentParticipantId: match.slot1ParticipantId === mine.id ? match.slot2ParticipantId : match.slot1ParticipantId }
        }
      }
      const created = await this.t.handle(postJson('/api/v1/admin/tournaments', { gameId: this.v.gameId, name: `Fuzz Cup ${this.tournaments.length}`, format: 'single_elimination', participants: this.users.map((u) => u.id) }, admin))
      if (created.status !== 201) return null
      const { tournament } = (await created.json()) as { tournament: { id: string } }
      const started = await this.t.handle(postJson(`/api/v1/admin/tournaments/${tournament.id}/start`, {}, admin))
      if (started.status !== 200) return null
      this.tournaments.push(tournament.id)
    }
    return null
  }

  private async freshSessionToken(r: Resolution): Promise<string> {
    const seat = await this.seat(r)
    if (!seat) return this.staleSessionToken ?? 'no-session'
    const res = await this.t.handle(postJson(`/api/v1/game-sdk/${this.v.gameId}/sessions`, { matchId: seat.matchId }, { ...bearerOf(await this.bearerFor(r.subject)), 'x-game-key': this.gameKey }))
    if (res.status !== 201) return this.staleSessionToken ?? 'no-session'
    const { token } = (await res.json()) as { token: string }
    // Once sent, consider it used: later requests get a fresh one.
    this.staleSessionToken = token
    return token
  }

  private async seat(r: Resolution): Promise<MatchSeat | null> {
    if (r.seat === undefined) r.seat = await this.seatOf(r.subject)
    return r.seat
  }

  /** A PIN session of user i minted now (users without a PIN, or locked, reuse a stale one). */
  private async pinSession(r: Resolution, owner: number) {
    if (r.pinSession !== undefined) return r.pinSession
    const holder = this.users[owner]!.hasPin ? owner : owner % 2
    const res = await this.t.handle(postJson('/api/v1/security/pin-session', {}, bearerOf(await this.bearerFor(holder))))
    if (res.status === 201) {
      const { sessionId, sessionToken } = (await res.json()) as { sessionId: string; sessionToken: string }
      r.pinSession = { sessionId, sessionToken }
      this.stalePinSession = r.pinSession
    } else {
      r.pinSession = this.stalePinSession
    }
    return r.pinSession
  }

  /** A live auth session of user i: another one than its bearer's when it has one (DELETE /me/sessions/{id}). */
  private async authSessionId(i: number): Promise<string> {
    const res = await this.t.handle(req('/api/v1/me/sessions', { headers: bearerOf(await this.bearerFor(i)) }))
    if (res.status !== 200) return 'ses_none'
    const { sessions } = (await res.json()) as { sessions: { id: string; current: boolean }[] }
    return (sessions.find((session) => !session.current) ?? sessions[0])?.id ?? 'ses_none'
  }

  /** A token signed with the real secret but with claims no signer of ours would write, or not signed right. */
  private forged(n: number, subject: number): string {
    const u = this.users[(n >> 5) % USERS]!
    const other = this.users[(subject + 1) % USERS]!
    const realHeader = u.accessToken.slice(0, u.accessToken.indexOf('.'))
    const claims = JSON.parse(Buffer.from(u.accessToken.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>
    const nowS = Math.floor(this.t.clock.now().getTime() / 1000)
    const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url')
    const sign = (header: string, payload: string, secret = this.jwtSecret) => `${header}.${payload}.${new Bun.CryptoHasher('sha256', secret).update(`${header}.${payload}`).digest('base64url')}`
    const withClaims = (extra: Record<string, unknown>) => sign(realHeader, b64({ ...claims, ...extra }))
    switch (n % 20) {
      case 0:
        return `${b64({ alg: 'none', typ: 'at+jwt' })}.${b64(claims)}.`
      case 1:
        return sign(realHeader, b64(claims), 'not-the-secret-not-the-secret-not-the-secret')
      case 2:
        return withClaims({ sub: other.id })
      case 3:
        return withClaims({ exp: nowS - 10 })
      case 4:
        return withClaims({ exp: 1e20 })
      case 5:
        return withClaims({ exp: String(nowS + 60) })
      case 6:
        return withClaims({ sid: 'ses_00000000000000000000000000' })
      case 7:
        return withClaims({ sub: '', sid: '' })
      case 8:
        return withClaims({ aud: ['someone-else', 'arena-api'] })
      case 9:
        return sign(realHeader, b64([claims]))
      case 10:
        return withClaims({ iss: 'not-arena' })
      case 11:
        return sign(b64({ alg: 'HS512', typ: 'at+jwt' }), b64(claims))
      case 12:
        return sign(realHeader, b64(`{"__proto__":{"sub":"${u.id}"},"sid":${JSON.stringify(claims.sid)}}`))
      case 13:
        return sign(b64({ alg: 'HS256', typ: 'at+jwt', kid: '../../etc/passwd', jku: 'http://evil' }), b64(claims))
      case 14:
        return `${realHeader}.!!!!.${'A'.repeat(43)}`
      case 15:
        return withClaims({ pad: 'x'.repeat(2800) })
      case 16:
        return withClaims({ exp: -1e308, sub: 42, sid: null })
      case 17:
        return sign(realHeader, b64('null'))
      case 18:
        return withClaims({ sub: u.id.toUpperCase() })
      default:
        return withClaims({ exp: nowS - 3600 * 24 * 400 })
    }
  }

  private mangled(n: number, token: string): string {
    switch (n % 8) {
      case 0:
        return token.slice(0, -1)
      case 1:
        return `${token}A`
      case 2: {
        const at = Math.floor(token.length / 2)
        return token.slice(0, at) + (token[at] === 'a' ? 'b' : 'a') + token.slice(at + 1)
      }
      case 3:
        return token.toLowerCase()
      case 4:
        return token.replace('.', '..')
      case 5:
        return `${token}.${token}`
      case 6:
        return token.split('.').reverse().join('.')
      default:
        return token.slice(0, token.lastIndexOf('.') + 1)
    }
  }

  /**
   * A code mailed to the subject just now, through the real routes (resend,
   * or forgot for the subject's address), read from the dev mailbox. Asked
   * for once per request; when the route refuses (verified already,
   * throttled) the newest code mailed before stands, or one that is wrong.
   */
  private async mailedCode(r: Resolution, purpose: 'verify_email' | 'reset_password'): Promise<string> {
    const known = r.values.get(`code:${purpose}`)
    if (known !== undefined) return known
    const user = this.users[r.subject]!
    if (purpose === 'verify_email') await this.t.handle(postJson('/api/v1/user/email/resend', {}, bearerOf(await this.bearerFor(r.subject))))
    else await this.t.handle(postJson('/api/v1/user/password/forgot', { email: user.email }))
    const mail = (await this.t.storage.read.mail.toAddress(user.email.toLowerCase(), 20)).find((m) => m.kind === purpose)
    const code = /\b([0-9A-Z]{5}-[0-9A-Z]{5})\b/.exec(mail?.textBody ?? '')?.[1] ?? 'ZZZZZ-ZZZZZ'
    r.values.set(`code:${purpose}`, code)
    return code
  }

  /** The text a Ref stands for in this request. */
  private async resolve(ref: Ref, r: Resolution): Promise<string> {
    const s = r.subject
    const other = (s + 1) % USERS
    // Text placed as is (a console asset's name): a Ref only so that the path is encoded like an id.
    if (ref.name.startsWith('literal:')) return ref.name.slice('literal:'.length)
    switch (ref.name) {
      case 'bearer':
        r.usedBearer = s
        return `Bearer ${await this.bearerFor(s)}`
      case 'bearer:other':
        return `Bearer ${await this.bearerFor(other)}`
      case 'bearer:revoked':
        return `Bearer ${this.v.revoked.accessToken}`
      case 'bearer:forged':
        return `Bearer ${this.forged(ref.arg, s)}`
      case 'bearer:mangled':
        return `Bearer ${this.mangled(ref.arg, await this.bearerFor(s))}`
      case 'x-admin-token':
        return ADMIN_TOKEN
      case 'metrics:bearer':
        return `Bearer ${METRICS_TOKEN}`
      case 'x-admin-token:stale':
        return ADMIN_TOKEN.slice(0, -1)
      case 'x-game-key':
        return this.gameKey
      case 'x-game-key:stale':
        return [this.staleGameKey, this.otherGameKey, this.gameKey.slice(0, -2)][s % 3]!
      case 'x-session-token':
        return this.freshSessionToken(r)
      case 'x-session-token:stale':
        return this.staleSessionToken ?? 'gst_stale'
      case 'x-secure-session':
        return (await this.pinSession(r, s))?.sessionToken ?? 'no-pin-session'
      case 'x-secure-session:stale':
        return this.stalePinSession?.sessionToken ?? 'stale-pin-session'
      case 'pinSessionId': {
        // 0: the caller's own fresh session; 1: another user's; 2: a used one.
        if (ref.arg === 1) {
          const theirs = await this.pinSession({ ...r, pinSession: undefined }, (s + 1) % 2)
          return theirs?.sessionId ?? 'pns_none'
        }
        if (ref.arg === 2 && this.stalePinSession) return this.stalePinSession.sessionId
        return (await this.pinSession(r, s))?.sessionId ?? 'pns_none'
      }
      case 'userId':
        return ref.arg === USERS ? this.v.victim.id : this.users[(s + ref.arg) % USERS]!.id
      case 'username':
        return ref.arg === USERS ? this.v.victim.username : this.users[(s + ref.arg) % USERS]!.username
      case 'email':
        return this.users[(s + ref.arg) % USERS]!.email
      case 'victim:identifier':
        return [this.v.victim.username, this.v.victim.email, this.v.victim.email.toUpperCase(), ` ${this.v.victim.username} `][ref.arg % 4]!
      case 'new:username':
        return `new_${ref.arg}`
      case 'new:email':
        return `new.${ref.arg}@example.com`
      case 'refreshToken':
        return this.users[r.usedBearer ?? s]!.refreshToken
      case 'refreshToken:stale':
        return this.users[s]!.spentRefreshToken ?? this.v.revoked.refreshToken
      case 'refreshToken:other':
        return this.users[other]!.refreshToken
      case 'gameId':
        return ref.arg === 0 ? this.v.gameId : this.v.otherGameId
      case 'tournamentId':
        return [this.tournaments.at(-1)!, this.v.draftTournamentId, this.v.runningTournamentId, this.v.registrationTournamentId, this.v.seatedTournamentId][ref.arg % 5]!
      case 'matchId': {
        const seat = await this.seat(r)
        if (ref.arg === 0 && seat) return seat.matchId
        return [...this.knownMatches][ref.arg % Math.max(1, this.knownMatches.size)] ?? 'mat_none'
      }
      case 'participantId': {
        const seat = await this.seat(r)
        if (ref.arg === 0 && seat) return seat.participantId
        if (ref.arg === 1 && seat?.opponentParticipantId) return seat.opponentParticipantId
        return [...this.knownParticipants][ref.arg % Math.max(1, this.knownParticipants.size)] ?? 'par_none'
      }
      case 'code:verify_email':
        return this.mailedCode(r, 'verify_email')
      case 'code:reset_password':
        return this.mailedCode(r, 'reset_password')
      case 'authSessionId':
        return this.authSessionId(ref.arg === 0 ? s : other)
      case 'correctable:matchId':
        return this.v.correctable.matchId
      case 'challengeId':
        return this.v.challengeIds[ref.arg % this.v.challengeIds.length]!
      case 'withdrawalId':
        return this.v.awaitingWithdrawalId
      case 'heldPayoutId':
        return this.v.heldPayoutId
      case 'webhookId':
        return this.v.webhook.id
      case 'webhookDeliveryId':
        return this.v.webhook.deliveryId
      case 'operatorId':
        return this.v.operators[ref.arg % this.v.operators.length]!.id
      case 'operator:name':
        return this.v.operators[0]!.name
      case 'operator:bearer': {
        // A fresh API session of operator 0, through the real service; a bearer that names nothing once it cannot sign in (disabled, password reset).
        try {
          const signedIn = await this.t.services.operatorSessions.signIn({ name: this.v.operators[0]!.name, password: PASSWORD, kind: 'api', userAgent: 'fuzz-fixture', ip: FIXTURE_ADDRESS })
          return `Bearer ${signedIn.token}`
        } catch {
          return 'Bearer no-operator-session'
        }
      }
      case 'correctable:loser':
        return this.v.correctable.loserParticipantId
      case 'correctable:tournamentId':
        return this.v.console.correctableTournamentId
      case 'bannedUserId':
        return this.v.console.bannedUserId
      case 'queue:name':
        return this.v.matchmaking.queueName
      case 'standalone:matchId':
        return this.v.matchmaking.standaloneMatchId
      case 'gameServerId':
        return this.v.gameServer.id
      case 'x-arena-signature':
        // Signed once the request's path and body bytes are known (build).
        return SIGN_AT_BUILD
      case 'x-arena-signature:stale':
        // Well formed, of the real server, but no signature of anything.
        return `${this.v.gameServer.id}.${Math.floor(this.t.clock.now().getTime() / 1000)}.${'A'.repeat(86)}`
      case 'evidence:matchId':
        return this.v.evidence.disputedMatchId
      case 'evidence:id':
        return this.v.evidence.evidenceId
      // The console (/console).
      case 'console:cookie': {
        const i = ref.arg % this.consoleSessions.length
        r.consoleSession = i
        return `arena_console=${await this.consoleToken(i)}`
      }
      case 'console:cookie:ended':
        return `arena_console=${this.v.console.endedToken}`
      case 'console:cookie:api':
        return `arena_console=${this.v.console.apiToken}`
      case 'console:cookie:double':
        // Two cookies of the name: the server reads the first, a junk one.
        return `arena_console=AAAAAAAAAAAAAAAAAAAAAAAA; arena_console=${await this.consoleToken(s % this.consoleSessions.length)}`
      case 'console:passwordStep': {
        // The choose-your-password step of an operator created just now, its one-time password proven through the real service.
        const name = `fuzz-step-${++this.passwordSteps}`
        const { password } = await this.t.services.operators.create({ name, role: 'viewer' }, cliActor(this.t, 'cli:fuzz'))
        const begun = await this.t.services.operatorSessions.beginSignIn({ name, password, kind: 'console', userAgent: 'fuzz-fixture', ip: FIXTURE_ADDRESS })
        if (!('passwordStep' in begun)) throw new Error('fuzz world: a one-time password did not lead to the password step')
        r.passwordStep = begun.passwordStep.ticket
        return `arena_password_step=${begun.passwordStep.ticket}`
      }
      // The device-code page (/device): a pool player's page sign-in, its CSRF token, a code a device is waiting with.
      case 'device:cookie': {
        const user = await this.t.storage.read.auth.userById(this.users[s]!.id)
        r.devicePage = this.pageSessions.ticketFor({ id: this.users[s]!.id, passwordHash: user?.passwordHash ?? null })
        return `arena_device_page=${r.devicePage}`
      }
      case 'device:csrf':
        return r.devicePage === undefined ? 'f'.repeat(64) : this.pageSessions.csrfFor(r.devicePage)
      case 'device:csrf:other': {
        const user = await this.t.storage.read.auth.userById(this.users[other]!.id)
        return this.pageSessions.csrfFor(this.pageSessions.ticketFor({ id: this.users[other]!.id, passwordHash: user?.passwordHash ?? null }))
      }
      case 'device:code':
        return (await this.t.services.deviceCodes.issue()).userCode
      // A device's code (the poll's body): one the subject approved on the page, or one still pending.
      case 'device:approved':
      case 'device:pending': {
        const issued = await this.t.services.deviceCodes.issue()
        if (ref.name === 'device:approved') await this.t.services.deviceCodes.decide(issued.userCode, 'approved', this.users[s]!.id)
        return issued.deviceCode
      }
      case 'console:csrf':
        if (r.passwordStep !== undefined) return this.t.services.operatorSessions.csrfFor(r.passwordStep)
        return this.t.services.operatorSessions.csrfFor(this.consoleSessions[r.consoleSession ?? 0]!.token)
      case 'console:csrf:other':
        return this.t.services.operatorSessions.csrfFor(this.consoleSessions[((r.consoleSession ?? 0) + 1) % this.consoleSessions.length]!.token)
      case 'console:totp:enabled': {
        // A current code of the authenticator the session's operator has set up (set up now when it has none), of a step not used yet.
        const c = this.consoleSessions[r.consoleSession ?? 0]!
        this.suspectConsole(r.consoleSession ?? 0)
        const secret = await this.freshTotpOf(c.operatorId)
        return secret === null ? '000000' : totpCode(secret, this.t.clock.now())
      }
      case 'console:totp': {
        // The code of an enrolment begun just now by the session's operator.
        const c = this.consoleSessions[r.consoleSession ?? 0]!
        this.suspectConsole(r.consoleSession ?? 0)
        try {
          const { secret } = await this.t.services.operatorTotp.beginTotp(c.operatorId, PASSWORD)
          return totpCode(secret, this.t.clock.now())
        } catch {
          // Set up already (a confirm went through): a code of no enrolment.
          return '000000'
        }
      }
      case 'console:sessionId': {
        // 0: the request's own session; 1: another operator's console session; 2: a player's session.
        if (ref.arg === 1) return (await this.t.services.operatorSessions.session(this.consoleSessions[((r.consoleSession ?? 0) + 1) % this.consoleSessions.length]!.token, 'console'))?.sessionId ?? 'ses_none'
        if (ref.arg === 2) return this.authSessionId(s)
        return (await this.t.services.operatorSessions.session(this.consoleSessions[r.consoleSession ?? 0]!.token, 'console'))?.sessionId ?? 'ses_none'
      }
      case 'console:operatorId':
        return this.consoleSessions[ref.arg % this.consoleSessions.length]!.operatorId
      case 'console:operatorName':
        return ref.arg < this.consoleSessions.length ? this.consoleSessions[ref.arg]!.name : this.v.operators[ref.arg % this.v.operators.length]!.name
      case 'console:participants':
        // Usernames (and the odd user id) as the form's text area takes them: separated by commas, spaces or new lines.
        return this.users
          .slice(0, 2 + (ref.arg % (USERS - 1)))
          .map((u, i) => (i === 3 ? u.id : u.username))
          .join([', ', '\n', ' ', ',,'][ref.arg % 4]!)
      case 'consoleTime': {
        // A datetime-local value (read as UTC), minutes from now.
        const iso = new Date(this.t.clock.now().getTime() + ref.arg * 60_000).toISOString()
        return iso.slice(0, 16)
      }
      case 'cursor':
        return this.v.eventsCursor
      case 'address':
        return this.v.addresses[ref.arg % this.v.addresses.length]!
      case 'isoTime':
        return new Date(this.t.clock.now().getTime() + ref.arg * 60_000).toISOString()
      case 'anyId': {
        const pool = [this.v.gameId, this.v.runningTournamentId, this.users[s]!.id, ...this.knownMatches, ...this.knownParticipants]
        return pool[(s * 7) % pool.length]!
      }
      default:
        throw new Error(`fuzz world: unknown Ref ${ref.name}`)
    }
  }

  private async resolveJson(value: JVal, r: Resolution): Promise<JVal> {
    // Refs sit at most two levels down (a field, or an item of a participants list).
    if (value instanceof Ref) return this.resolve(value, r)
    if (value instanceof JObj) return new JObj(await Promise.all(value.entries.map(async ([k, v]) => [k, await this.resolveJson(v, r)] as [string, JVal])))
    if (Array.isArray(value)) return Promise.all(value.map((v) => this.resolveJson(v, r)))
    return value
  }

  private async text(value: Ref | string, r: Resolution): Promise<string> {
    return value instanceof Ref ? this.resolve(value, r) : value
  }

  /** Turns a generated spec into a Request, minting whatever it names. */
  async build(route: RouteShape, spec: RequestSpec): Promise<Built> {
    const r: Resolution = { subject: spec.subject, usedBearer: null, values: new Map() }
    const headers = new Headers()
    for (const [name, value] of spec.headers) headers.append(name, await this.text(value, r))

    let path = route.path
    for (const [name, value] of Object.entries(spec.params)) {
      const text = value instanceof Ref ? encodeURIComponent(await this.resolve(value, r)) : value
      path = path.replace(`:${name}`, text)
    }
    if (spec.query) {
      if ('raw' in spec.query) path += `?${spec.query.raw}`
      else {
        const pairs = await Promise.all(spec.query.pairs.map(async ([k, v]) => `${encodeLoosely(k)}=${encodeLoosely(await this.text(v, r))}`))
        path += `?${pairs.join('&')}`
      }
    }

    const client = new AbortController()
    const init: RequestInit = { method: spec.method, headers, signal: client.signal }
    const body = spec.body
    if (body.contentType !== null) headers.set('content-type', body.contentType)
    if (spec.method.toUpperCase() !== 'GET' && spec.method.toUpperCase() !== 'HEAD') {
      switch (body.kind) {
        case 'none':
          break
        case 'json': {
          const resolved = await this.resolveJson(body.value, r)
          // Bytes, not a string: a string body would get a text/plain type of its own.
          init.body = new TextEncoder().encode(toJson(resolved, () => null))
          break
        }
        case 'form': {
          // Urlencoded as a browser would (an array repeats its key; a value that is no string is its JSON text), lone surrogates as invalid UTF-8.
          const pairs: string[] = []
          for (const [key, value] of (await this.resolveJson(body.fields, r) as JObj).entries) {
            for (const item of Array.isArray(value) ? value : [value]) {
              const text = typeof item === 'string' ? item : item instanceof Raw ? item.text : toJson(item, () => null)
              pairs.push(`${encodeLoosely(key)}=${encodeLoosely(text)}`)
            }
          }
          init.body = new TextEncoder().encode(`${body.prefix ?? ''}${pairs.join('&')}${body.suffix ?? ''}`)
          break
        }
        case 'text':
          init.body = new TextEncoder().encode(body.text)
          break
        case 'bytes':
          init.body = new Uint8Array(body.bytes)
          break
        case 'huge': {
          // A form's huge body is a form (one long field), anything else's JSON.
          const form = (body.contentType ?? '').toLowerCase().includes('urlencoded') || (isConsolePath(path) && body.contentType === null)
          const bytes = new TextEncoder().encode(form ? `a=${'x'.repeat(Math.max(0, body.bytes - 2))}` : `{"a":"${'x'.repeat(Math.max(0, body.bytes - 8))}"}`)
          if (body.contentLength !== null) headers.set('content-length', body.contentLength)
          if (body.stream) {
            init.body = new ReadableStream({
              start(controller) {
                for (let at = 0; at < bytes.length; at += 16 * 1024) controller.enqueue(bytes.subarray(at, at + 16 * 1024))
                controller.close()
              },
            })
          } else init.body = bytes
          break
        }
      }
    }
    if (headers.get('x-arena-signature') === SIGN_AT_BUILD) headers.set('x-arena-signature', this.serverSignature(spec.method, path, init.body))
    return { request: new Request(`http://localhost${path.startsWith('/') ? '' : '/'}${path}`, init), resolution: r, hangUp: () => client.abort() }
  }

  /** The template's game server's x-arena-signature over this request as sent (a streamed body signs as empty: it is refused anyway). */
  private serverSignature(method: string, path: string, body: RequestInit['body']): string {
    const bytes = body instanceof Uint8Array ? body : new Uint8Array(0)
    const seconds = Math.floor(this.t.clock.now().getTime() / 1000)
    const text = `${seconds}\n${method.toUpperCase()}\n${path.startsWith('/') ? path : `/${path}`}\n${createHash('sha256').update(bytes).digest('hex')}`
    const seed = Buffer.from(this.v.gameServer.privateKey, 'base64url')
    const key = createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]), format: 'der', type: 'pkcs8' })
    return `${this.v.gameServer.id}.${seconds}.${sign(null, Buffer.from(text, 'utf8'), key).toString('base64url')}`
  }

  /** Learns from a response: rotated tokens and keys replace the old ones, a refused live bearer is checked before reuse. */
  observe(built: Built, status: number, body: unknown, location: string | null = null): void {
    const r = built.resolution
    const path = new URL(built.request.url).pathname
    if (isConsolePath(path)) {
      // A console request can end its own session (signing out, ending it on the account page) or change its operator
      // (disabled, reset, its role or authenticator changed, possibly its own): such a route's sessions are checked before reuse,
      // as is a session the console turned away (a 401, or a GET sent to the sign-in page).
      if (/^\/console\/(logout|operators\/|account\/)/.test(path) && status !== 404) this.suspectConsole()
      else if (r.consoleSession !== undefined && (status === 401 || status === 403 || (location ?? '').startsWith('/console/login'))) this.suspectConsole(r.consoleSession)
      return
    }
    if (status === 401 && r.usedBearer !== null) this.suspect.add(r.usedBearer)
    if (status < 200 || status >= 300 || typeof body !== 'object' || body === null) return
    const b = body as Record<string, unknown>
    if (typeof b.accessToken === 'string' && typeof b.refreshToken === 'string') {
      const id = (b.user as { id?: unknown } | undefined)?.id
      const i = this.users.findIndex((u) => u.id === id)
      if (i !== -1) {
        const before = this.users[i]!
        // A rotation spends the token it was given; a login leaves the old session alone.
        const spent = new URL(built.request.url).pathname.endsWith('/auth/validate') ? before.refreshToken : before.spentRefreshToken
        this.users[i] = { ...before, accessToken: b.accessToken, refreshToken: b.refreshToken, spentRefreshToken: spent }
      }
    }
    if (typeof b.gameKey === 'string') {
      const path = new URL(built.request.url).pathname
      if (path.includes(this.v.gameId)) {
        this.staleGameKey = this.gameKey
        this.gameKey = b.gameKey
      } else if (path.includes(this.v.otherGameId)) this.otherGameKey = b.gameKey
    }
    if (b.tournament && typeof (b.tournament as { id?: unknown }).id === 'string') {
      const id = (b.tournament as { id: string }).id
      if (!this.tournaments.includes(id)) this.tournaments.push(id)
    }
  }
}

// ---------------------------------------------------------------------------
// Valid-looking values, by field name (body and query) and by path parameter

const amount = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('0.000001', '0.5', '1', '1.5', '2.25', '10', '12.345678') },
  // Past any balance, and the largest amounts the grammar allows (credits add up).
  { weight: 2, arbitrary: fc.constantFrom('1000000', '999999999999999999.999999', '500000000000000000', '999999999999999999') },
)

export const FIELD_HINTS: Hints = {
  email: fc.oneof(fc.nat({ max: 50 }).map((n) => new Ref('new:email', n)), fc.nat({ max: USERS - 1 }).map((n) => new Ref('email', n)), fc.emailAddress()),
  username: fc.oneof(fc.nat({ max: 50 }).map((n) => new Ref('new:username', n)), fc.nat({ max: USERS }).map((n) => new Ref('username', n))),
  password: fc.oneof({ weight: 3, arbitrary: fc.constant(PASSWORD) }, { weight: 1, arbitrary: fc.string({ minLength: 8, maxLength: 20 }) }),
  country: fc.constantFrom('DE', 'de', 'US', 'Fr', 'XX', 'ZZ', 'UK'),
  accept_terms: fc.constant(true),
  identifier: fc.oneof({ weight: 3, arbitrary: fc.nat({ max: 3 }).map((n) => new Ref('victim:identifier', n)) }, { weight: 1, arbitrary: fc.constantFrom('nobody', 'nobody@example.com', ' ', '@') }),
  refreshToken: fc.oneof({ weight: 4, arbitrary: fc.constant(new Ref('refreshToken')) }, { weight: 1, arbitrary: fc.constantFrom(new Ref('refreshToken:stale'), new Ref('refreshToken:other')) }),
  all: fc.boolean(),
  deviceCode: fc.oneof({ weight: 1, arbitrary: fc.constant(new Ref('device:approved')) }, { weight: 2, arbitrary: fc.constant(new Ref('device:pending')) }, { weight: 1, arbitrary: fc.constantFrom('junk', 'x'.repeat(256), '') }),
  // Verified email and passwords (contract §8).
  code: fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom(new Ref('code:verify_email'), new Ref('code:reset_password')) },
    { weight: 1, arbitrary: fc.constantFrom('ZZZZZ-ZZZZZ', 'zzzzz zzzzz', 'OOOOO-IIIII', '0', '-', ' '.repeat(64)) },
  ),
  currentPassword: fc.oneof({ weight: 3, arbitrary: fc.constant(PASSWORD) }, { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 20 }) }),
  // Mostly the pool's password, so a changed or reset password leaves its user able to log in again.
  newPassword: fc.oneof({ weight: 4, arbitrary: fc.constant(PASSWORD) }, { weight: 1, arbitrary: fc.string({ minLength: 8, maxLength: 20 }) }),
  matchId: fc.oneof({ weight: 4, arbitrary: fc.constant(new Ref('matchId', 0)) }, { weight: 1, arbitrary: fc.nat({ max: 20 }).map((n) => new Ref('matchId', n + 1)) }),
  outcome: fc.constantFrom('WIN', 'WIN', 'DRAW'),
  winnerParticipantId: fc.oneof({ weight: 3, arbitrary: fc.constant(new Ref('participantId', 0)) }, { weight: 2, arbitrary: fc.constant(new Ref('participantId', 1)) }, { weight: 1, arbitrary: fc.nat({ max: 20 }).map((n) => new Ref('participantId', n + 2)) }),
  score: fc.oneof(fc.constant(new JObj([['me', 3], ['them', 1]])), fc.constant(new JObj([]))),
  kind: fc.oneof(fc.constantFrom('ENV_COMPROMISED', 'DEBUGGER_ATTACHED', 'A'), fc.stringMatching(/^[A-Z][A-Z0-9_]{0,63}$/)),
  level: fc.constantFrom('SAFE', 'WARN', 'COMPROMISED'),
  details: fc.oneof(fc.constant(new JObj([['root', true], ['checks', ['debugger', 'hook']]])), fc.constant(new JObj([]))),
  occurredAt: fc.constantFrom(0, -5, -60 * 24 * 29, -60 * 24 * 31, 4, 10).map((minutes) => new Ref('isoTime', minutes)),
  pin: fc.oneof({ weight: 4, arbitrary: fc.constant(PIN) }, { weight: 1, arbitrary: fc.constantFrom('000000', '1234', '482917', '9876543', '12345678') }),
  amount,
  destinationAddress: fc.nat({ max: 2 }).map((n) => new Ref('address', n)),
  idempotencyKey: fc.oneof(fc.nat({ max: 5 }).map((n) => `idem-${n}`), fc.uuid()),
  name: fc.oneof(fc.constantFrom('Cup', 'Duel'), fc.string({ minLength: 1, maxLength: 100 })),
  gameId: fc.oneof({ weight: 4, arbitrary: fc.constant(new Ref('gameId', 0)) }, { weight: 1, arbitrary: fc.constant(new Ref('gameId', 1)) }),
  format: fc.constant('single_elimination'),
  participants: fc.array(fc.oneof(fc.nat({ max: USERS }).map((n) => new Ref('userId', n)), fc.nat({ max: USERS }).map((n) => new Ref('username', n))), { minLength: 2, maxLength: 6 }),
  reference: fc.oneof(fc.nat({ max: 5 }).map((n) => `ref-${n}`), fc.uuid()),
  // Query fields (events and security events).
  after: fc.oneof(fc.constant(new Ref('cursor')), fc.constantFrom('0', '1', '3', '100')),
  wait: fc.constantFrom('0', '0.001', '0.5', '1', '30'),
  topics: fc.constantFrom('session', 'wallet', 'status', 'session,wallet,status', 'wallet,status'),
  limit: fc.constantFrom('1', '10', '500'),
  // Accounts (contract §8): logout everywhere else, bans, deletions, the user search.
  others: fc.boolean(),
  reason: fc.oneof(fc.constantFrom('cheating', 'spam'), fc.string({ minLength: 1, maxLength: 500 })),
  // Tournament options (contract §9).
  options: fc.oneof(fc.constant(new JObj([])), fc.constantFrom(1, 60, 600, 0, -1).map((n) => new JObj([['matchDeadlineS', n]]))),
  until: fc.constantFrom(-60, -1, 0, 1, 60, 60 * 24 * 400).map((minutes) => new Ref('isoTime', minutes)),
  // Operators (contract §11).
  role: fc.constantFrom('viewer', 'moderator', 'finance', 'admin', 'root', 'ADMIN', ''),
  totp: fc.constantFrom('000000', '123456', '', '12345a', ' 123 456 ', '9'.repeat(16)),
  query: fc.oneof(fc.nat({ max: USERS }).map((n) => new Ref('username', n)), fc.nat({ max: USERS }).map((n) => new Ref('userId', n)), fc.constantFrom('fuzz', '%', '_', 'usr_', '')),
  // Ratings (contract §15): a game's settings (each field optional, at and past its bounds), a season's reset.
  rating: fc.oneof(
    fc.constant(new JObj([])),
    fc.record({ tau: fc.constantFrom(0.1, 0.5, 2, 0.09, 2.01, -1), inactivityPeriodS: fc.constantFrom(3600, 604800, 31_536_000, 3599, 1.5, 0) }, { requiredKeys: [] }).map((r) => new JObj(Object.entries(r) as [string, JVal][])),
  ),
  reset: fc.constantFrom('soft', 'hard', 'SOFT', ''),
  // Matchmaking (contract §16): a challenge's opponent (the pool's, by name or id, the caller among them), stakes and rakes at and past their bounds.
  opponent: fc.oneof(fc.nat({ max: USERS }).map((n) => new Ref('username', n)), fc.nat({ max: USERS }).map((n) => new Ref('userId', n)), fc.constantFrom('nobody', 'usr_', '%')),
  stake: fc.oneof({ weight: 4, arbitrary: amount }, { weight: 1, arbitrary: fc.constantFrom(null, '0', '-1', '1e3', '') }),
  rake: fc.constantFrom('0', '0.05', '0.5', '0.000001', '0.51', '-0.1', '0.0000001', '1', 'x'),
  challengeRake: fc.constantFrom('0', '0.05', '0.5', '0.51', '-0.1', 'x'),
}

/** A datetime-local value (read as UTC) minutes from now, a full ISO time, or text that is no time. */
const consoleTime = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(-60, -1, 1, 30, 55, 60, 120, 60 * 24 * 400).map((m) => new Ref('consoleTime', m)) },
  { weight: 1, arbitrary: fc.constantFrom(-60, 60).map((m) => new Ref('isoTime', m)) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', 'not a date', '2026-13-40T25:61', '2026-12-24T18:00:00+99:00', '0000-01-01T00:00', '9999-12-31T23:59', '١٢٣') },
)

/**
 * The console's forms (all strings): the API's hints where a field means the
 * same, and these where the form spells it its own way (participants as
 * text, times as datetime-local, check boxes, a code of the session's own
 * authenticator, the sign-in's operator names).
 */
export const CONSOLE_FIELD_HINTS: Hints = {
  ...FIELD_HINTS,
  name: fc.oneof(fc.nat({ max: CONSOLE_ROLES.length + 2 }).map((n) => new Ref('console:operatorName', n)), fc.constantFrom('Cup', 'Duel', 'FUZZ-CONSOLE-ADMIN', 'nobody'), fc.string({ minLength: 1, maxLength: 70 })),
  // Mostly the pool's password, so a sign-in succeeds often enough; each one is an argon2id verify.
  password: fc.oneof({ weight: 3, arbitrary: fc.constant(PASSWORD) }, { weight: 1, arbitrary: fc.string({ maxLength: 20 }) }),
  newPassword: fc.oneof(fc.constant(PASSWORD), fc.constantFrom('', 'short', 'x'.repeat(129))),
  next: fc.oneof(
    fc.constantFrom('/console/users', '/console/audit?before=1', '/console', '/console/login'),
    fc.constantFrom('//evil.example', 'https://evil.example/console', '/console/../api/v1/me', '/console/%2e%2e/x', '/console\r\nset-cookie: x=1', '/console/usérs', '/console//evil.example', '/console\\evil.example', 'javascript:alert(1)', ''),
  ),
  until: consoleTime,
  // The new-tournament form's options: mostly left empty, as an operator leaves a form's other formats' fields, so that a
  // generated form with every field "valid" is often one the service accepts (a dozen options filled at random rarely agree).
  ...Object.fromEntries(
    Object.entries({
      closesAt: consoleTime,
      startsAt: consoleTime,
      checkInOpensAt: consoleTime,
      checkInClosesAt: consoleTime,
      thirdPlaceMatch: fc.constant('on'),
      unrated: fc.constant('on'),
      grandFinal: fc.constantFrom('simple', 'reset', 'none'),
      rounds: fc.constantFrom('1', '3', '0', '-1', '1.5', '1e3', '99999999999'),
      matchDeadlineS: fc.constantFrom('600', '60', '0', '-1', '1.5', 'x', '99999999999'),
      maxPlayers: fc.constantFrom('2', '8', '1', '0', '-1', '1e3', '99999999999'),
      seeding: fc.constantFrom('random', 'registration', 'rating'),
      entryFee: fc.oneof(amount, fc.constantFrom('0', '-1', '1e3')),
      prizes: fc.constantFrom('1', '1, 0.5', '1 0.5 0.25', '-1', '1e3', '999999999999999999.999999'),
    } satisfies Hints).map(([field, value]): [string, fc.Arbitrary<JVal>] => [field, fc.oneof({ weight: 6, arbitrary: fc.constant('') }, { weight: 1, arbitrary: value })]),
  ),
  participants: fc.oneof({ weight: 3, arbitrary: fc.nat({ max: 7 }).map((n) => new Ref('console:participants', n)) }, { weight: 1, arbitrary: fc.constantFrom('', 'nobody, nobody', ',,,', 'usr_x usr_y') }),
  format: fc.constantFrom('single_elimination', 'single_elimination', 'double_elimination', 'round_robin', 'swiss', 'free_for_all', 'SINGLE_ELIMINATION', ''),
  mode: fc.constantFrom('players', 'players', 'registration', 'PLAYERS', ''),
  code: fc.oneof({ weight: 3, arbitrary: fc.constant(new Ref('console:totp')) }, { weight: 1, arbitrary: fc.constantFrom('000000', '', '12345a', ' 123 456 ') }),
  // Console list pages' queries.
  q: fc.oneof(fc.nat({ max: USERS }).map((n) => new Ref('username', n)), fc.nat({ max: USERS }).map((n) => new Ref('userId', n)), fc.constantFrom('fuzz', '%', '_', 'usr_', '')),
  status: fc.constantFrom('draft', 'registration', 'running', 'finalizing', 'finished', 'cancelled', '', 'x'),
  verify: fc.constantFrom('1', 'true', '', '0'),
}

/** Real ids for a path parameter, chosen by the segment before it. */
export function paramHints(param: string, path: string): fc.Arbitrary<Ref> {
  const segments = path.split('/')
  const before = segments[segments.indexOf(`:${param}`) - 1] ?? ''
  if (path.startsWith('/console/')) {
    switch (before) {
      case 'assets':
        // A request for a console asset names a file of the console's, or a key of every object (a lookup must not find Object.prototype's).
        return fc.constantFrom('console.css', 'console.css', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'console.CSS', 'console.css.map').map((f) => new Ref(`literal:${f}`))
      case 'sessions':
        return fc.oneof({ weight: 3, arbitrary: fc.constant(new Ref('console:sessionId', 0)) }, { weight: 1, arbitrary: fc.constantFrom(new Ref('console:sessionId', 1), new Ref('console:sessionId', 2)) })
      case 'disputes':
        return fc.oneof({ weight: 3, arbitrary: fc.constant(new Ref('matchId', 0)) }, { weight: 1, arbitrary: fc.nat({ max: 20 }).map((n) => new Ref('matchId', n + 1)) })
      case 'operators':
        // The console's own operators too: one disabling, resetting or demoting itself (or the last admin).
        return fc.oneof({ weight: 3, arbitrary: fc.nat({ max: 2 }).map((n) => new Ref('operatorId', n)) }, { weight: 1, arbitrary: fc.nat({ max: CONSOLE_ROLES.length - 1 }).map((n) => new Ref('console:operatorId', n)) }, { weight: 1, arbitrary: fc.constant(new Ref('anyId')) })
      case 'users':
        return fc.oneof({ weight: 4, arbitrary: fc.nat({ max: USERS }).map((n) => new Ref('userId', n)) }, { weight: 1, arbitrary: fc.constant(new Ref('bannedUserId')) })
    }
  }
  switch (before) {
    case 'game-sdk':
    case 'games':
      return fc.oneof({ weight: 4, arbitrary: fc.constant(new Ref('gameId', 0)) }, { weight: 1, arbitrary: fc.constant(new Ref('gameId', 1)) })
    case 'tournaments':
      return fc.nat({ max: 4 }).map((n) => new Ref('tournamentId', n))
    case 'matches':
      // A tournament's match, and the queue's (a match without a tournament, contract §16).
      return fc.oneof(
        { weight: 3, arbitrary: fc.constant(new Ref('matchId', 0)) },
        { weight: 1, arbitrary: fc.nat({ max: 20 }).map((n) => new Ref('matchId', n + 1)) },
        { weight: 1, arbitrary: fc.constant(new Ref('standalone:matchId')) },
      )
    case 'wallets':
      return fc.nat({ max: USERS }).map((n) => new Ref('userId', n))
    case 'pin-session':
      return fc.oneof({ weight: 6, arbitrary: fc.constant(new Ref('pinSessionId', 0)) }, { weight: 1, arbitrary: fc.constantFrom(new Ref('pinSessionId', 1), new Ref('pinSessionId', 2)) })
    case 'sessions':
      // 0: one of the caller's own live sessions; 1: another user's.
      return fc.oneof({ weight: 3, arbitrary: fc.constant(new Ref('authSessionId', 0)) }, { weight: 1, arbitrary: fc.constant(new Ref('authSessionId', 1)) })
    case 'users':
      return fc.nat({ max: USERS }).map((n) => new Ref('userId', n))
    case 'participants':
      return fc.oneof({ weight: 3, arbitrary: fc.constant(new Ref('participantId', 0)) }, { weight: 1, arbitrary: fc.nat({ max: 20 }).map((n) => new Ref('participantId', n + 1)) })
    case 'withdrawals':
      return fc.oneof({ weight: 3, arbitrary: fc.constant(new Ref('withdrawalId', 0)) }, { weight: 1, arbitrary: fc.constant(new Ref('anyId')) })
    case 'payouts':
      return fc.oneof({ weight: 3, arbitrary: fc.constant(new Ref('heldPayoutId')) }, { weight: 1, arbitrary: fc.constant(new Ref('anyId')) })
    case 'webhooks':
      return fc.oneof({ weight: 3, arbitrary: fc.constant(new Ref('webhookId')) }, { weight: 1, arbitrary: fc.constant(new Ref('anyId')) })
    case 'webhook-deliveries':
      return fc.oneof({ weight: 3, arbitrary: fc.constant(new Ref('webhookDeliveryId')) }, { weight: 1, arbitrary: fc.constant(new Ref('anyId')) })
    case 'operators':
      return fc.oneof({ weight: 3, arbitrary: fc.nat({ max: 2 }).map((n) => new Ref('operatorId', n)) }, { weight: 1, arbitrary: fc.constant(new Ref('anyId')) })
    case 'game-servers':
      // A game's result route (:gameId), or an operator's route of one server (:id).
      if (param === 'gameId') return fc.oneof({ weight: 4, arbitrary: fc.constant(new Ref('gameId', 0)) }, { weight: 1, arbitrary: fc.constant(new Ref('gameId', 1)) })
      return fc.oneof({ weight: 3, arbitrary: fc.constant(new Ref('gameServerId')) }, { weight: 1, arbitrary: fc.constant(new Ref('anyId')) })
    case 'servers':
      return fc.oneof({ weight: 3, arbitrary: fc.constant(new Ref('gameServerId')) }, { weight: 1, arbitrary: fc.constant(new Ref('anyId')) })
    case 'queues':
      // A queue's name: the one there is, ones there are not (a key of every object among them).
      return fc.constantFrom(QUEUE, QUEUE, QUEUE, 'none', 'FUZZ', '__proto__', 'constructor').map((name) => new Ref(`literal:${name}`))
    case 'challenges':
      return fc.oneof({ weight: 3, arbitrary: fc.nat({ max: 1 }).map((n) => new Ref('challengeId', n)) }, { weight: 1, arbitrary: fc.constant(new Ref('anyId')) })
    case 'identities':
      // A provider's name: ones a user has, ones nobody has, and names no provider has (a key of every object among them).
      return fc.constantFrom('device', 'device', 'password', 'steam', 'oidc:google', 'oidc:', 'OIDC:Google', '__proto__', 'constructor', 'nonsense').map((p) => new Ref(`literal:${p}`))
    default:
      return fc.constant(new Ref('anyId'))
  }
}

// ---------------------------------------------------------------------------
// One request each route must accept, and one it must refuse, chosen without
// the generator: sent first to a fresh world, they show the route able to
// succeed and to refuse whatever the seed (the generated requests that get
// through can all be spent against a throttle, as the logins are: after 20
// failed logins from one client address every login is a 429 for 15 minutes
// of a clock that does not move).

/** One valid value per field name, the ones a careful client would send. */
const GOOD_FIELDS: Record<string, JVal> = {
  email: new Ref('new:email', 0),
  username: new Ref('new:username', 0),
  password: PASSWORD,
  country: 'DE',
  accept_terms: true,
  identifier: new Ref('victim:identifier', 0),
  refreshToken: new Ref('refreshToken'),
  all: false,
  matchId: new Ref('matchId', 0),
  outcome: 'WIN',
  winnerParticipantId: new Ref('participantId', 0),
  score: new JObj([['me', 3], ['them', 1]]),
  kind: 'ENV_COMPROMISED',
  level: 'WARN',
  details: new JObj([['root', true]]),
  occurredAt: new Ref('isoTime', 0),
  pin: PIN,
  amount: '1',
  destinationAddress: new Ref('address', 0),
  idempotencyKey: 'known-good',
  name: 'Known Good Cup',
  gameId: new Ref('gameId', 0),
  format: 'single_elimination',
  participants: [new Ref('userId', 0), new Ref('userId', 1)],
  reference: 'known-good',
  code: new Ref('code:verify_email'),
  currentPassword: PASSWORD,
  newPassword: PASSWORD,
  others: false,
  reason: 'known good reason',
  until: new Ref('isoTime', 60),
  options: new JObj([['matchDeadlineS', 600]]),
  prizes: ['1'],
  // Who reports a game's results (contract §17): both, as the template's first game.
  results: 'either',
  // A game server's Ed25519 public key (contract §17): registering another succeeds.
  publicKey: 'qQlOfHvy6pbgM_dcR0euVSiiRaBLfreHFadBYFPTMnU',
  role: 'finance',
  rating: new JObj([['tau', 0.6], ['inactivityPeriodS', 86400]]),
  reset: 'soft',
  challengeRake: '0.05',
  // Matchmaking (contract §16): a queue's settings, a challenge to user 1.
  rated: true,
  stake: '1',
  rake: '0.05',
  window: new JObj([['initial', 100], ['widenPerSecond', 10], ['max', 400]]),
  readyCheckS: 30,
  matchDeadlineS: 600,
  rematchCooldownS: 60,
  draws: 'result',
  opponent: new Ref('username', 1),
  expiresInS: 600,
  // Webhooks (contract §18): an endpoint at a public address, of one type.
  url: KNOWN_GOOD_WEBHOOK_URL,
  types: ['match.decided'],
  description: 'known good endpoint',
  enabled: true,
}

/** Known-good values that differ by route: a reset names the subject's own address and the code mailed to it. */
const GOOD_FIELDS_OF_ROUTE: Record<string, Record<string, JVal>> = {
  'POST /api/v1/auth/device-code/token': { deviceCode: new Ref('device:approved') },
  'POST /api/v1/user/password/reset': { email: new Ref('email', 0), code: new Ref('code:reset_password') },
  'POST /api/v1/admin/matches/:id/correct': { winnerParticipantId: new Ref('correctable:loser') },
  'POST /api/v1/admin/operators': { name: 'known-good-op' },
  // A queue's name takes no space.
  'POST /api/v1/admin/games/:id/queues': { name: 'known-good' },
  // A season an hour ahead: after the game's first (current) one, within the year.
  'POST /api/v1/admin/games/:id/seasons': { startsAt: new Ref('isoTime', 60) },
  'POST /api/v1/admin/sessions': { name: new Ref('operator:name') },
  // User 0's own guest device: a sign-in to its account, and a link it has already (a retry, 200).
  'POST /api/v1/user/login/device': { deviceSecret: deviceSecretOf(0), create: true },
  'POST /api/v1/me/identities/:provider': { deviceSecret: deviceSecretOf(0) },
  'POST /api/v1/user/login/steam': { ticket: KNOWN_STEAM.ticket, create: true },
}

/** Optional fields a known-good request leaves out: a tournament with participants is the draft flow, which takes no registration (nor an entry fee). */
const OMITTED_FIELDS_OF_ROUTE: Record<string, string[]> = {
  'POST /api/v1/admin/tournaments': ['registration', 'startsAt', 'seeding', 'entryFee'],
  'POST /api/v1/admin/sessions': ['newPassword', 'totp'],
  // Linking `device` (the known-good provider) takes the device's fields only.
  'POST /api/v1/me/identities/:provider': ['ticket', 'idToken', 'nonce', 'email', 'password', 'username'],
}

/** Credentials a known-good request sends instead of every one: signing out needs an operator's own session (the admin token is none). */
const GOOD_HEADERS_OF_ROUTE: Record<string, [string, Ref][]> = {
  'POST /api/v1/admin/sessions/current/revoke': [['authorization', new Ref('operator:bearer')]],
  'GET /metrics': [['authorization', new Ref('metrics:bearer')]],
  // The event socket's upgrade carries a ticket, not a bearer (contract §14).
  'GET /api/v1/events/socket': [],
}

/** The query of a known-good request, for the routes that require one. */
const GOOD_QUERY_OF_ROUTE: Record<string, NonNullable<RequestSpec['query']>> = {
  // A ticket's shape; the route refuses a request that is not an upgrade before spending it (see UPGRADE_ROUTES).
  'GET /api/v1/events/socket': { pairs: [['ticket', 'A'.repeat(43)]] },
  // The season form's confirmation page: the fields it carries to the real form, a start a month ahead.
  'GET /console/games/:id/seasons': { pairs: [['name', 'Fuzz Season'], ['startsAt', new Ref('consoleTime', 60 * 24 * 30)], ['reset', 'soft']] },
}

/**
 * Routes that succeed only by upgrading the connection (the event socket,
 * contract §14): a request through app.handle, with no listening server, can
 * never be upgraded, so their known-good request is answered 400 `bad_request`
 * ("connect with a WebSocket client"). test/realtime and
 * test/build/event-socket.test.ts open them for real.
 */
export const UPGRADE_ROUTES: ReadonlySet<string> = new Set(['GET /api/v1/events/socket'])

/** Routes whose body is a file's raw bytes (src/plugins/json-body.ts): a known-good one sends text. */
const RAW_BODY_KEYS: ReadonlySet<string> = new Set(RAW_BODY_ROUTES.map((r) => `${r.method} ${r.route}`))

/** The real id a path parameter names in a known-good request. */
function goodParam(param: string, path: string, method: string): Ref {
  const segments = path.split('/')
  const before = segments[segments.indexOf(`:${param}`) - 1] ?? ''
  switch (before) {
    case 'game-sdk':
    case 'games':
      // User 0 waits in the first game's queue already: joining succeeds in the other game's.
      return new Ref('gameId', path.endsWith('/queues/:name/tickets') ? 1 : 0)
    case 'queues':
      return new Ref(`literal:${QUEUE}`)
    case 'challenges':
      // Accepting and declining the one user 0 received; withdrawing the one they made.
      return new Ref('challengeId', path.endsWith('/cancel') ? 1 : 0)
    case 'tournaments':
      // Starting needs the draft tournament; joining an open registration; leaving and
      // checking in one user 0 is registered for; reading takes the running one.
      if (path.endsWith('/start')) return new Ref('tournamentId', 1)
      if (path.endsWith('/registration') && method === 'POST') return new Ref('tournamentId', 3)
      if (path.endsWith('/registration') || path.endsWith('/check-in')) return new Ref('tournamentId', 4)
      return new Ref('tournamentId', 0)
    case 'matches':
      // An operator cancels a queue's match (a tournament's is cancelled only with its tournament).
      if (path === '/api/v1/admin/matches/:id/cancel') return new Ref('standalone:matchId')
      // Evidence is attached to a disputed match only.
      if (path === '/api/v1/matches/:id/evidence') return new Ref('evidence:matchId')
      return path.endsWith('/correct') ? new Ref('correctable:matchId') : new Ref('matchId', 0)
    case 'wallets':
      return new Ref('userId', 0)
    case 'evidence':
      return new Ref('evidence:id')
    case 'participants':
      // The seat's own: disqualified from the running tournament (tournamentId 0).
      return new Ref('participantId', 0)
    case 'pin-session':
      return new Ref('pinSessionId', 0)
    case 'sessions':
      return new Ref('authSessionId', 0)
    case 'users':
      // Pool user 2: no money, so an operator's deletion of it succeeds as well as a ban.
      return new Ref('userId', 2)
    case 'withdrawals':
      return new Ref('withdrawalId', 0)
    case 'game-servers':
      return param === 'gameId' ? new Ref('gameId', 0) : new Ref('gameServerId')
    case 'servers':
      // A server of the game, under the console's game page.
      return new Ref('gameServerId')
    case 'payouts':
      return new Ref('heldPayoutId')
    case 'webhooks':
      return new Ref('webhookId')
    case 'webhook-deliveries':
      return new Ref('webhookDeliveryId')
    case 'identities':
      // The guest device users 0 and 2 have beside their password.
      return new Ref('literal:device')
    case 'operators':
      // Enabling needs the disabled operator (1), turning TOTP off the enrolled one (2).
      return new Ref('operatorId', path.endsWith('/enable') ? 1 : path.endsWith('/totp/disable') ? 2 : 0)
    default:
      throw new Error(`fuzz world: no known-good value for :${param} in ${path}`)
  }
}

const paramNames = (route: RouteShape) => [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!)

/**
 * A request the route accepts (2xx) in a fresh world: pool user 0 (a PIN, a
 * funded wallet, a seat in the running tournament) with every credential the
 * route can ask for, and every body field valid.
 */
export function knownGoodRequest(route: RouteShape): RequestSpec {
  if (isConsoleRoute(route)) return consoleKnownGood(route)
  if (isDevicePageRoute(route)) return deviceKnownGood(route)
  const headers: [string, Ref | string][] = GOOD_HEADERS_OF_ROUTE[`${route.method} ${route.path}`] ?? [
    ['authorization', new Ref('bearer')],
    ['x-admin-token', new Ref('x-admin-token')],
    ...Object.keys(route.headers?.properties ?? {})
      .filter((h) => h !== 'authorization' && h !== 'x-admin-token')
      .map((h): [string, Ref] => [h, new Ref(h)]),
  ]
  const omitted = OMITTED_FIELDS_OF_ROUTE[`${route.method} ${route.path}`] ?? []
  const fields = Object.keys(route.body?.properties ?? {}).filter((f) => !omitted.includes(f))
  const good = { ...GOOD_FIELDS, ...GOOD_FIELDS_OF_ROUTE[`${route.method} ${route.path}`] }
  for (const f of fields) if (!(f in good)) throw new Error(`fuzz world: no known-good value for body field ${f} of ${route.method} ${route.path}`)
  const body: RequestSpec['body'] =
    route.method === 'GET' || route.method === 'HEAD'
      ? { kind: 'none', contentType: null }
      : RAW_BODY_KEYS.has(`${route.method} ${route.path}`)
        ? { kind: 'text', text: 'a note for the operator', contentType: 'text/plain' }
        : { kind: 'json', value: new JObj(fields.map((f) => [f, good[f]!])), contentType: 'application/json' }
  return {
    method: route.method,
    params: Object.fromEntries(paramNames(route).map((p) => [p, goodParam(p, route.path, route.method)])),
    query: GOOD_QUERY_OF_ROUTE[`${route.method} ${route.path}`] ?? null,
    headers,
    body,
    // Pool user 0 holds money, which no account deletion may take: the player deleting their own account is user 2.
    subject: route.path === '/api/v1/me/delete' ? 2 : 0,
  }
}

/**
 * A request the route must refuse (4xx), made from the known-good one by
 * breaking one thing: malformed JSON where the route requires a body, an id
 * that names nothing where it takes one, no credentials on any other API
 * route, and a method it does not serve for the public documents and probes.
 */
export function knownRefusedRequest(route: RouteShape): RequestSpec {
  const good = knownGoodRequest(route)
  if (isConsoleRoute(route)) return consoleKnownRefused(route, good)
  if (isDevicePageRoute(route)) return deviceKnownRefused(route, good)
  // A route that asks for no credential and may go without a body (a device asking for a code): a body that is not an object.
  if ((route.body?.required ?? []).length > 0 || route.path === '/api/v1/auth/device-code') return { ...good, body: { kind: 'text', text: route.path === '/api/v1/auth/device-code' ? '[]' : '{"', contentType: 'application/json' } }
  const params = paramNames(route)
  if (params.length > 0) return { ...good, params: Object.fromEntries(params.map((p) => [p, 'no-such-id'])) }
  if (route.path.startsWith('/api/')) return { ...good, headers: [] }
  return { ...good, method: 'PROPFIND' }
}

// ---------------------------------------------------------------------------
// The console's known-good and known-refused requests

/** One valid value per console form field (the API's where the field means the same). */
const CONSOLE_GOOD_FIELDS: Record<string, JVal> = {
  ...GOOD_FIELDS,
  _csrf: new Ref('console:csrf'),
  until: new Ref('consoleTime', 60),
  mode: 'players',
  participants: new Ref('console:participants', 0),
  code: new Ref('console:totp'),
  // The webhook form: a checkbox a type, `enabled` a hidden field.
  ...Object.fromEntries(WEBHOOK_TYPES.map((type) => [`type:${type}`, 'on'])),
  enabled: 'false',
}

/** The console's queue form with every setting valid (matchDeadlineS left empty, as CONSOLE_OMITTED_FIELDS leaves it). */
const CONSOLE_QUEUE_FORM: Record<string, JVal> = { rated: 'on', stake: '1', rake: '0.05', windowInitial: '100', windowWiden: '5', windowMax: '400', readyCheckS: '30', rematchCooldownS: '0', draws: 'replay' }

const CONSOLE_GOOD_FIELDS_OF_ROUTE: Record<string, Record<string, JVal>> = {
  'POST /console/login': { name: new Ref('console:operatorName', consoleRoleIndex('viewer')), next: '/console/users' },
  'POST /console/login/password': { newPassword: PASSWORD, confirmPassword: PASSWORD, next: '/console/users' },
  'POST /console/tournaments/:id/matches/:matchId/correct': { winnerParticipantId: new Ref('correctable:loser') },
  'POST /console/operators': { name: 'known-good-op' },
  'POST /console/games/:id/seasons': { name: 'Fuzz Season', startsAt: new Ref('isoTime', 60 * 24 * 30), reset: 'soft' },
  // A queue's form as the page fills it (the name free in the game).
  'POST /console/games/:id/queues': { name: 'known-good-queue', ...CONSOLE_QUEUE_FORM },
  'POST /console/games/:id/queues/:name': CONSOLE_QUEUE_FORM,
  'POST /console/games/:id/challenge-rake': { challengeRake: '0.05' },
  // Turning off an authenticator needs one: the session's operator sets one up just before.
  // (The code's Ref sets it up; the fields of a request resolve at once, so the CSRF token's must not enrol as well.)
  'POST /console/account/totp/disable': { code: new Ref('console:totp:enabled') },
}

/** The cookie a public console route's known-good request carries (the first sign-in's step: its ticket). */
const CONSOLE_GOOD_COOKIE_OF_ROUTE: Record<string, Ref> = {
  'GET /console/login/password': new Ref('console:passwordStep'),
  'POST /console/login/password': new Ref('console:passwordStep'),
}

/** Optional form fields a known-good request leaves empty, as the browser's form would: the players flow takes no registration times. */
const CONSOLE_OMITTED_FIELDS = ['newPassword', 'totp', 'thirdPlaceMatch', 'unrated', 'grandFinal', 'rounds', 'matchDeadlineS', 'closesAt', 'maxPlayers', 'checkInOpensAt', 'checkInClosesAt', 'startsAt', 'seeding', 'entryFee', 'prizes']

/** The real id a console path parameter names in a known-good request. */
function consoleGoodParam(param: string, path: string): Ref {
  const segments = path.split('/')
  const before = segments[segments.indexOf(`:${param}`) - 1] ?? ''
  switch (before) {
    case 'assets':
      return new Ref('literal:console.css')
    case 'users':
      // Lifting a ban needs a banned user; anything else pool user 2 (no money).
      return path.endsWith('/unban') ? new Ref('bannedUserId') : new Ref('userId', 2)
    case 'tournaments':
      if (path.endsWith('/start')) return new Ref('tournamentId', 1)
      if (path.endsWith('/correct')) return new Ref('correctable:tournamentId')
      return new Ref('tournamentId', 0)
    case 'matches':
      // Cancelling needs a queue's match not yet decided; a tournament's is shown on its page too.
      if (path.endsWith('/cancel')) return new Ref('standalone:matchId')
      return path.endsWith('/correct') ? new Ref('correctable:matchId') : new Ref('matchId', 0)
    case 'queues':
      return new Ref('queue:name')
    case 'disputes':
      return new Ref('matchId', 0)
    case 'sessions':
      return new Ref('console:sessionId', 0)
    case 'operators':
      // Enabling needs the disabled operator (1), turning off an authenticator the enrolled one (2).
      return new Ref('operatorId', path.endsWith('/enable') ? 1 : path.endsWith('/disable-totp') ? 2 : 0)
    default:
      return goodParam(param, path, 'POST')
  }
}

/** A console request the route accepts (a page, or a 303 without an error): the session of the route's role, its CSRF token, every field valid. */
function consoleKnownGood(route: RouteShape): RequestSpec {
  const key = `${route.method} ${route.path}`
  const writes = route.method !== 'GET' && route.method !== 'HEAD'
  const isPublic = route.role === undefined
  const cookie = isPublic ? CONSOLE_GOOD_COOKIE_OF_ROUTE[key] : new Ref('console:cookie', consoleRoleIndex(route.role))
  const headers: [string, Ref | string][] = [
    ...(cookie === undefined ? [] : [['cookie', cookie] as [string, Ref]]),
    // The console's own form, from a browser that sends Origin.
    ...(writes ? [['origin', 'http://localhost'] as [string, string]] : []),
  ]
  const good = { ...CONSOLE_GOOD_FIELDS, ...CONSOLE_GOOD_FIELDS_OF_ROUTE[key] }
  // Left empty only where the form may leave it so (the step's newPassword is required there).
  const fields = Object.keys(route.body?.properties ?? {}).filter((f) => !CONSOLE_OMITTED_FIELDS.includes(f) || (route.body?.required ?? []).includes(f))
  for (const f of fields) if (!(f in good)) throw new Error(`fuzz world: no known-good value for form field ${f} of ${key}`)
  return {
    method: route.method,
    params: Object.fromEntries(paramNames(route).map((p) => [p, consoleGoodParam(p, route.path)])),
    query: GOOD_QUERY_OF_ROUTE[key] ?? null,
    headers,
    body: writes ? { kind: 'form', fields: new JObj(fields.map((f) => [f, good[f]!])), contentType: 'application/x-www-form-urlencoded' } : { kind: 'none', contentType: null },
    subject: 0,
  }
}

/**
 * A console request the route must refuse (4xx), made from the known-good one
 * by breaking one thing: a form without its CSRF token (the sign-in form
 * without its fields), a path id that names nothing, a query field past its
 * length, or a method the route does not serve.
 */
function consoleKnownRefused(route: RouteShape, good: RequestSpec): RequestSpec {
  if (good.body.kind === 'form') {
    const kept = route.role === undefined ? [] : good.body.fields.entries.filter(([k]) => k !== '_csrf')
    return { ...good, body: { ...good.body, fields: new JObj(kept) } }
  }
  const params = paramNames(route)
  if (params.length > 0) return { ...good, params: Object.fromEntries(params.map((p) => [p, 'no-such-id'])) }
  const queryField = Object.keys(route.query?.properties ?? {})[0]
  if (queryField !== undefined) return { ...good, query: { pairs: [[queryField, 'x'.repeat(1000)]] } }
  return { ...good, method: 'PROPFIND' }
}

// ---------------------------------------------------------------------------
// The device-code page's known-good and known-refused requests (/device, contract §13)

const DEVICE_GOOD_FIELDS: Record<string, JVal> = {
  _csrf: new Ref('device:csrf'),
  code: new Ref('device:code'),
  identifier: new Ref('victim:identifier', 0),
  password: PASSWORD,
  decision: 'approve',
}

/** The page's field hints: a code a device is waiting with, mostly, or one that names nothing. */
export const DEVICE_FIELD_HINTS: Hints = {
  ...FIELD_HINTS,
  code: fc.oneof({ weight: 3, arbitrary: fc.constant(new Ref('device:code')) }, { weight: 1, arbitrary: fc.constantFrom('ZZZZ-ZZZZ', 'zzzz zzzz', 'OIL0-1234', '', '-', 'ABCD-123', 'x'.repeat(64)) }),
  decision: fc.constantFrom('approve', 'deny', 'maybe', ''),
  signin: fc.constantFrom('junk', 'x'.repeat(512), ''),
  signin_error: fc.constantFrom('access_denied', 'account_exists', 'account_banned', 'internal', '<b>x</b>', ''),
}

/** A signed-in player's page (or its sign-in form, with the pool's password): what a browser on the page sends. */
function deviceKnownGood(route: RouteShape): RequestSpec {
  const writes = route.method !== 'GET' && route.method !== 'HEAD'
  const signingIn = route.path === '/device/login'
  const headers: [string, Ref | string][] = [...(signingIn ? [] : [['cookie', new Ref('device:cookie')] as [string, Ref]]), ...(writes ? [['origin', 'http://localhost'] as [string, string]] : [])]
  const fields = Object.keys(route.body?.properties ?? {})
  for (const f of fields) if (!(f in DEVICE_GOOD_FIELDS)) throw new Error(`fuzz world: no known-good value for form field ${f} of ${route.method} ${route.path}`)
  return {
    method: route.method,
    params: {},
    query: route.method === 'GET' ? { pairs: [['code', new Ref('device:code')]] } : null,
    headers,
    body: writes ? { kind: 'form', fields: new JObj(fields.map((f) => [f, DEVICE_GOOD_FIELDS[f]!])), contentType: 'application/x-www-form-urlencoded' } : { kind: 'none', contentType: null },
    subject: 0,
  }
}

/** The page's refusals: a form without its CSRF token (the sign-in form with a wrong password), the page with a code too long to be one. */
function deviceKnownRefused(route: RouteShape, good: RequestSpec): RequestSpec {
  if (good.body.kind === 'form') {
    const kept = route.path === '/device/login' ? good.body.fields.entries.map(([k, v]): [string, JVal] => [k, k === 'password' ? 'not the password' : v]) : good.body.fields.entries.filter(([k]) => k !== '_csrf')
    return { ...good, body: { ...good.body, fields: new JObj(kept) } }
  }
  return { ...good, query: { pairs: [['code', 'x'.repeat(1000)]] } }
}
