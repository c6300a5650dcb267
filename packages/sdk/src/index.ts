// @arena/sdk: the client SDK of arena's public API (a running server documents
// it at /openapi). fetch only, no Node or Bun
// built-ins, so the same module runs in Bun, Node 20+ and browsers.
//
//   const arena = createClient({ environment: 'local' })
//   await arena.auth.login('alice', 'correct horse battery')
//   // or, with no account yet: const { deviceSecret } = await arena.auth.loginAsGuest()
//   const game = arena.game(gameId, gameKey)
//   const session = await game.openSession(matchId)
//   const decision = await game.submitResult(session, { outcome: 'WIN', winnerParticipantId })
//   // or, one match at a time: await arena.queues.join(gameId, 'ranked'), then on match.found:
//   await arena.matches.ready(matchId)
import { Auth, type AuthOptions } from './auth.js'
import { EventsClient } from './events.js'
import { GameClient } from './game.js'
import { identitiesClient, type IdentitiesClient } from './identities.js'
import { challengesClient, matchesClient, queuesClient, type ChallengesClient, type MatchesClient, type QueuesClient } from './matchmaking.js'
import { PurchaseClient, type IntegrityCheck } from './purchases.js'
import { ratingsClient, type RatingsClient } from './ratings.js'
import { TournamentsClient } from './tournaments.js'
import type { UpdateProfileBody } from './requests.js'
import { readJson, Transport } from './transport.js'
import type { AccountExport, Environment, FetchLike, MyMatch, Tokens, Tournament, User } from './types.js'
import { walletClient, type WalletClient } from './wallet.js'

export * from './errors.js'
export { serverResultPath, signServerResult } from './game-server.js'
export type { ServerResultBody, SignServerResultInput } from './game-server.js'
export { isEvent } from './events.js'
export type * from './types.js'
export type { AuthorizeInput, AuthorizeResult, IntegrityCheck, IntegrityReport, IntegrityVerdict } from './purchases.js'
export type { EventBatchHandler, PollOptions, Subscription, SubscriptionEnd, SubscribeOptions } from './events.js'
export { EventSocketError, SOCKET_CLOSE_CODES } from './socket.js'
export type { Connection, ConnectOptions, WebSocketConstructor } from './socket.js'
export type { Auth } from './auth.js'
export type { EventsClient } from './events.js'
export type { GameClient } from './game.js'
export type { IdentitiesClient, LinkBody, LinkProvider } from './identities.js'
export type { PurchaseClient } from './purchases.js'
export type { LeaderboardOptions, RatingsClient } from './ratings.js'
export type { ChallengeOptions, ChallengesClient, MatchesClient, QueuesClient } from './matchmaking.js'
export type { ListTournamentsOptions, TournamentsClient } from './tournaments.js'
export type { PageOptions, WalletClient } from './wallet.js'
export type { WebhookCatalogue, WebhookPayload, WebhookType } from './webhooks.js'

/** The one environment with a known address: `arena serve` on this machine. */
export const LOCAL_BASE_URL = 'http://127.0.0.1:8080'

export interface ClientOptions {
  /** The server's address (absolute, or relative to the page in a browser). Takes precedence over `environment`. */
  baseUrl?: string
  /** Which configured environment to talk to (`production` is the default). */
  environment?: Environment
  /** The base URL of each environment the studio runs; `local` defaults to http://127.0.0.1:8080 (where `arena serve` listens in local). */
  environments?: Partial<Record<Environment, string>>
  /** Default `globalThis.fetch`. */
  fetch?: FetchLike
  /** Per-request timeout in ms (long polls add their wait). Default 30 s. */
  timeoutMs?: number
  /** Called with new tokens after login and each rotation, and with null when they are gone. */
  onTokens?: (tokens: Tokens | null) => void
  /** On-device checks run before each purchase. */
  integrityChecks?: IntegrityCheck[]
  /** The client's clock in epoch ms (for tests). */
  now?: () => number
  /**
   * This device's token, kept from an earlier run (see `onDeviceToken`);
   * without one the SDK makes one (32 random bytes). Sent with every sign-in:
   * strangers' failed logins on the same name do not block this device, and
   * the server's integrity checks see which accounts share a device.
   */
  deviceToken?: string
  /** Called with the device token after every sign-in: keep it (like the refresh token) and pass it back as `deviceToken` next time. */
  onDeviceToken?: (token: string) => void
}

export interface ArenaClient {
  readonly baseUrl: string
  readonly environment: Environment | undefined
  readonly auth: Auth
  readonly purchases: PurchaseClient
  readonly events: EventsClient
  /** Tournaments: list the open ones, register, leave, check in. */
  readonly tournaments: TournamentsClient
  /** Ratings in a game: `me(gameId)`, `history(gameId)`, `leaderboard(gameId, { season? })`, `seasons(gameId)`. */
  readonly ratings: RatingsClient
  /** A game's queues: `list(gameId)`, `join(gameId, name)`, `current(gameId, name)`, `leave(gameId, name)`. */
  readonly queues: QueuesClient
  /** A match the player plays in: `get(matchId)`, and `ready(matchId)` to confirm one a queue found. */
  readonly matches: MatchesClient
  /** Challenges to a named player: `create(gameId, { opponent, stake?, expiresInS? })`, `get`, `mine`, `accept`, `decline`, `cancel`. */
  readonly challenges: ChallengesClient
  /** The client of one game, with the key the studio got from the operator. */
  game(gameId: string, gameKey: string): GameClient
  me(): Promise<User>
  /** Changes the signed-in user's username (3 to 32 letters, digits or underscores; 409 `username_taken`) or country (ISO 3166-1 alpha-2); resolves with the user. */
  updateProfile(changes: { username?: string; country?: string }): Promise<User>
  /** The ways the account signs in: `list()`, `link(provider, body)`, `unlink(provider)`. */
  readonly identities: IdentitiesClient
  /** Everything arena keeps about the signed-in user, as one document (GET /me/export). */
  exportAccount(): Promise<AccountExport>
  /** `wallet()`: balance and address; `wallet.transactions()`, `wallet.withdrawals()`: its history. */
  readonly wallet: WalletClient
  /** The signed-in player's open matches. */
  myMatches(): Promise<MyMatch[]>
  tournament(id: string): Promise<Tournament>
}

export function createClient(options: ClientOptions = {}): ArenaClient {
  const hasBaseUrl = options.baseUrl !== undefined
  const environment = hasBaseUrl ? options.environment : (options.environment ?? 'production')
  const baseUrl = hasBaseUrl ? options.baseUrl! : resolveEnvironment(environment!, options.environments)
  const transport = new Transport({ baseUrl, ...(options.fetch ? { fetch: options.fetch } : {}), ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}) })
  const authOptions: AuthOptions = {
    ...(options.onTokens ? { onTokens: options.onTokens } : {}),
    ...(options.now ? { now: options.now } : {}),
    ...(options.deviceToken !== undefined ? { deviceToken: options.deviceToken } : {}),
    ...(options.onDeviceToken ? { onDeviceToken: options.onDeviceToken } : {}),
  }
  const auth = new Auth(transport, authOptions)
  const get = async <T>(path: string): Promise<T> => readJson<T>(await auth.send({ method: 'GET', path }))
  return {
    baseUrl: transport.baseUrl,
    environment,
    auth,
    purchases: new PurchaseClient(auth, options.integrityChecks),
    events: new EventsClient(auth, transport.baseUrl),
    tournaments: new TournamentsClient(auth),
    ratings: ratingsClient(auth),
    queues: queuesClient(auth),
    matches: matchesClient(auth),
    challenges: challengesClient(auth),
    game: (gameId, gameKey) => new GameClient(auth, gameId, gameKey),
    me: async () => (await get<{ user: User }>('/api/v1/me')).user,
    updateProfile: async (changes) => (await readJson<{ user: User }>(await auth.send({ method: 'PATCH', path: '/api/v1/me', body: changes satisfies UpdateProfileBody }))).user,
    identities: identitiesClient(auth),
    exportAccount: () => get<AccountExport>('/api/v1/me/export'),
    wallet: walletClient(auth),
    myMatches: async () => (await get<{ matches: MyMatch[] }>('/api/v1/me/matches')).matches,
    tournament: async (id) => (await get<{ tournament: Tournament }>(`/api/v1/tournaments/${encodeURIComponent(id)}`)).tournament,
  }
}

function resolveEnvironment(environment: Environment, environments: ClientOptions['environments']): string {
  if (!['local', 'sandbox', 'staging', 'production'].includes(environment)) {
    throw new TypeError(`Unknown environment "${environment}": use local, sandbox, staging or production, or pass baseUrl`)
  }
  const url = environments?.[environment] ?? (environment === 'local' ? LOCAL_BASE_URL : undefined)
  if (!url) throw new TypeError(`No base URL configured for the "${environment}" environment: pass environments.${environment} or baseUrl`)
  return url
}
