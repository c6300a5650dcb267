// The composition root: the one place that builds arena's services from a
// storage and a configuration. The server, the operator subcommands, `arena
// seed` and the tests all get their services here, so each runs the same code
// the routes do.
import { join } from 'node:path'
import type { Config } from './config'
import type { Storage } from './db/storage'
import { openStorage, type OpenedStorage } from './db/open'
import { createAccessTokens } from './modules/auth/access-tokens'
import { defaultHashGate, type HashGate } from './modules/auth/hash-gate'
import { EmailVerification } from './modules/auth/email-verification'
import { PasswordChange } from './modules/auth/password-change'
import { PasswordReset } from './modules/auth/password-reset'
import { AccountDeletion } from './modules/auth/account-deletion'
import { AccountExport } from './modules/auth/account-export'
import { BanService } from './modules/auth/bans'
import { accountPasswords } from './modules/auth/account-passwords'
import { Registration } from './modules/auth/registration'
import { Identities } from './modules/auth/identities'
import { OidcService } from './modules/auth/oidc/service'
import { AuthService } from './modules/auth/service'
import { SignIn } from './modules/auth/sign-in'
import { SteamTickets, steamSettingsOf } from './modules/auth/steam'
import { DeviceCodes } from './modules/auth/device-codes'
import { UserDirectory } from './modules/auth/user-directory'
import { AuditLog } from './modules/audit/log'
import { OperatorTotp } from './modules/operators/second-factor'
import { OperatorService } from './modules/operators/service'
import { OperatorSessions } from './modules/operators/sessions'
import { EventsService } from './modules/events/service'
import { inProcessWakeups, type EventWakeups } from './modules/events/wakeups'
import { SocketHub } from './modules/realtime/hub'
import { SocketTickets } from './modules/realtime/tickets'
import { GameKeys } from './modules/games/game-keys'
import { GameServers } from './modules/games/game-servers'
import { WebhooksService } from './modules/webhooks/service'
import { TournamentRegistration } from './modules/games/registration'
import { GamesService } from './modules/games/service'
import { TournamentOperations } from './modules/games/tournament-operations'
import { RatingsService } from './modules/ratings/service'
import { MatchmakingService } from './modules/matchmaking/service'
import { ChallengesService } from './modules/matchmaking/challenges'
import { EvidenceService } from './modules/evidence/service'
import { Mailer } from './modules/mail/mailer'
import type { Lifecycle } from './modules/health/service'
import { MatchesService } from './modules/matches/service'
import { integrityPolicy } from './modules/integrity/signals'
import { PayoutService } from './modules/integrity/service'
import { OperationsOverview } from './modules/operations/service'
import { ChainChecks } from './modules/operations/chain-checks'
import { SecurityEventLog, type SecurityLogOptions } from './modules/security/event-log'
import { PinService } from './modules/security/pin-service'
import { CosignerCustody } from './modules/wallet/cosigner-custody'
import { LocalFrostCustody, type CustodyClient } from './modules/wallet/custody'
import { DirectoryKeyShares, VaultKeyShares, type KeyShares } from './modules/wallet/key-shares'
import { WalletService } from './modules/wallet/service'
import { WithdrawalService } from './modules/wallet/withdrawals'
import { DataDirSecrets, type SecretStore, type Secrets, type SecretsConfig as DataDirSecretsConfig, type SigningKeyring } from './secrets'
import { systemClock, type Clock } from './shared/clock'
import { createLogger, type Logger } from './shared/logger'
import { Vault } from './vault/vault'
import { VaultSecrets } from './vault/secrets'

export interface ServiceDeps {
  config: Readonly<Config>
  storage: Storage
  /** Long-poll wake-ups; the storage wakes them after a commit that appended events. */
  wakeups: EventWakeups
  secrets: Secrets
  logger: Logger
  clock: Clock
  lifecycle: Lifecycle
  /** Defaults to the custody the configuration asks for; tests of a remote provider pass their own. */
  custody?: CustodyClient
  securityLogOptions?: SecurityLogOptions
  /** Bounds concurrent argon2id work; defaults to the process's gate. Tests pass a small one. */
  hashGate?: HashGate
  /** The event sockets' ping and re-check intervals (contract §14: 25 s and 1 s); tests shorten them. */
  socketTimings?: { pingMs?: number; recheckMs?: number }
}

/**
 * Where the secrets shared by every instance on a PostgreSQL database are
 * kept: its vault, sealed under ARENA_MASTER_KEY (which config.ts requires
 * beside ARENA_DATABASE_URL).
 */
export function vaultFor(config: Pick<Config, 'masterKey'>, storage: Storage): Vault {
  if (config.masterKey === undefined) throw new Error('ARENA_MASTER_KEY is required with ARENA_DATABASE_URL: the secrets in the database are sealed under it')
  return new Vault(storage, config.masterKey)
}

type SecretsConfig = DataDirSecretsConfig & Pick<Config, 'masterKey'>

/**
 * Where the engine keeps the server's secrets: the data dir's secrets.json
 * with SQLite, the database's vault with PostgreSQL.
 */
export function secretStoreFor(config: SecretsConfig, storage: Storage): SecretStore {
  return storage.engine === 'sqlite' ? new DataDirSecrets(config) : new VaultSecrets(config, vaultFor(config, storage))
}

/** The server's secrets, from where the engine keeps them (secretStoreFor). */
export async function loadSecrets(config: SecretsConfig, storage: Storage, options: { generateOperatorToken?: boolean } = {}): Promise<Secrets> {
  return secretStoreFor(config, storage).load(options)
}

/**
 * Runs `fn` on the configured secret store, for a command that needs the
 * secrets alone (`arena keys`, `arena admin-token`). The storage is opened
 * only where it holds them (PostgreSQL): on SQLite the data dir's file is
 * read before any database is created, as openStorageWithSecrets reads it.
 */
export async function withSecretStore<T>(config: Readonly<Config>, fn: (store: SecretStore) => Promise<T>): Promise<T> {
  if (config.databaseUrl === undefined) return fn(new DataDirSecrets(config))
  const storage = await openStorage(config, { logger: createLogger('silent'), wakeups: inProcessWakeups() })
  try {
    return await fn(secretStoreFor(config, storage))
  } finally {
    await storage.close()
  }
}

/**
 * Opens the configured storage and loads its secrets, in the order each
 * engine needs. SQLite: the data dir's secrets first, because on a data
 * dir's first start the chain key depends on whether a database was there
 * already (src/secrets.ts); PostgreSQL: the database first, since it holds
 * them. A failure to load them closes the storage again.
 */
export async function openStorageWithSecrets(
  config: Readonly<Config>,
  deps: { logger: Logger; wakeups: EventWakeups },
  options: { generateOperatorToken?: boolean } = {},
): Promise<{ storage: OpenedStorage; secrets: Secrets }> {
  if (config.databaseUrl === undefined) {
    const secrets = await new DataDirSecrets(config).load(options)
    return { storage: await openStorage(config, deps), secrets }
  }
  const storage = await openStorage(config, deps)
  try {
    return { storage, secrets: await loadSecrets(config, storage, options) }
  } catch (error) {
    await storage.close()
    throw error
  }
}

/** Where the server keeps the custody shares it holds: the data dir's custody/ with SQLite, the vault with PostgreSQL. */
export function custodySharesFor(config: Readonly<Config>, storage: Storage): KeyShares {
  return storage.engine === 'sqlite' ? new DirectoryKeyShares(join(config.dataDir, 'custody')) : new VaultKeyShares(vaultFor(config, storage))
}

/** The custody client the configuration asks for (contract §3: pluggable). */
export function custodyFor(config: Readonly<Config>, storage: Storage): CustodyClient {
  const shares = custodySharesFor(config, storage)
  if (config.custody === 'cosigner') return new CosignerCustody(shares, config.cosignerUrl!, config.cosignerSecret!)
  return new LocalFrostCustody(shares)
}

/**
 * The access-token keyring: fixed (environment), re-read from the data dir's
 * file when it changes, or re-read from the vault by `refresh`, which the
 * server runs every second (startKeyringRefresh).
 */
export function signingKeysFor(config: Readonly<Config>, storage: Storage, secrets: Secrets): SigningKeyring {
  return secretStoreFor(config, storage).keyring(secrets)
}

/** The services behind the routes, shared with the server's background work and the operator commands. */
export function createServices(deps: ServiceDeps) {
  const { config, clock, logger, storage } = deps
  const securityLog = new SecurityEventLog({ storage, clock, logger, key: deps.secrets.chainKey }, { retentionDays: config.securityLogRetentionDays, ...deps.securityLogOptions })
  const audit = new AuditLog({ key: deps.secrets.chainKey, clock })
  const signingKeys = signingKeysFor(config, storage, deps.secrets)
  const accessTokens = createAccessTokens({
    keys: signingKeys.current,
    ttlS: config.accessTtlS,
    // /auth/validate accepts an expired access token no older than a session can live.
    maxExpiredS: config.refreshTtlS,
    clock,
  })
  const hashGate = deps.hashGate ?? defaultHashGate()
  const mailer = new Mailer(config)
  const emailVerification = new EmailVerification({ storage, clock, mailer })
  const auth = new AuthService({ storage, clock, accessTokens, refreshReuseGraceS: config.refreshReuseGraceS, onSecurityEvent: (e) => securityLog.record(e) })
  const signIn = new SignIn({ storage, clock, accessTokens, refreshTtlS: config.refreshTtlS, onSecurityEvent: (e) => securityLog.record(e), hashGate })
  const registration = new Registration({ storage, clock, hashGate, onRegister: (tx, user, now) => emailVerification.onRegister(tx, user, now) })
  const identities = new Identities({
    storage,
    clock,
    signIn,
    createPerHour: config.guestCreatePerHour,
    hashGate,
    // An added password identity asks for its address to be verified, as a registration does (contract §8).
    onPasswordLinked: (tx, user, now) => emailVerification.onRegister(tx, user, now),
    onSecurityEvent: (e) => securityLog.record(e),
  })
  // OpenID Connect (contract §13): the providers of ARENA_OIDC_PROVIDERS; the web flow's PKCE verifier and nonce derived under the chain key, as the operators' CSRF tokens are.
  const oidc = new OidcService({ storage, clock, logger, providers: config.oidcProviders, redirects: config.oidcRedirects, serverUrl: config.serverUrl, flowKey: deps.secrets.chainKey, identities })
  // Devices without a keyboard (contract §13, RFC 8628): the device's tokens come from the identities core, once the player approved.
  const deviceCodes = new DeviceCodes({ storage, clock, ttlS: config.deviceCodeTtlS, sessions: identities, onSecurityEvent: (e) => securityLog.record(e) })
  // A signed-in user's password asked again: counted on the login's throttle.
  const passwords = accountPasswords({ storage, clock, hashGate })
  const passwordChange = new PasswordChange({ storage, clock, passwords, hashGate, onSecurityEvent: (e) => securityLog.record(e) })
  const passwordReset = new PasswordReset({ storage, clock, mailer, hashGate, onSecurityEvent: (e) => securityLog.record(e) })
  // Ratings, leaderboards and seasons (contract §15): the updates happen in the decisions themselves (ratings/rate.ts).
  const ratings = new RatingsService({ storage, clock })
  // Queues, the matcher, the ready check and challenges (contract §16); their matches are decided as any other (applyDecision).
  const matchmaking = new MatchmakingService({ storage, clock, ratings })
  const challenges = new ChallengesService({ storage, clock })
  const games = new GamesService({ storage, clock, ratings, onSecurityEvent: (e) => securityLog.record(e) })
  const tournamentRegistration = new TournamentRegistration({ storage, clock })
  const gameKeys = new GameKeys({ storage, clock, onSecurityEvent: (e) => securityLog.record(e) })
  // The integrity signals every decision of a staked or prize win is reviewed by (contract §17, docs/integrity.md).
  const integrity = integrityPolicy(config, (e) => securityLog.record(e))
  const evidence = new EvidenceService({ storage, clock })
  const matches = new MatchesService({ storage, clock, gameKeys, gameSessionTtlS: config.gameSessionTtlS, integrity })
  const gameServers = new GameServers({ storage, clock })
  const tournamentOperations = new TournamentOperations({ storage, clock, onSecurityEvent: (e) => securityLog.record(e), integrity })
  const payouts = new PayoutService({ storage, clock })
  const webhooks = new WebhooksService({ storage, clock, chainKey: deps.secrets.chainKey, allowPrivate: config.webhooksAllowPrivate })
  const custody = deps.custody ?? custodyFor(config, storage)
  const wallet = new WalletService({ storage, clock, custody, onSecurityEvent: (e) => securityLog.record(e) })
  const pins = new PinService({ storage, clock, pinSessionTtlS: config.pinSessionTtlS, passwords, securityLog, hashGate })
  const withdrawals = new WithdrawalService({ storage, clock, logger, pins, wallet, custody,
    requireVerifiedEmail: config.requireVerifiedEmail,
    limits: { perWithdrawal: config.withdrawalMax, daily: config.withdrawalDailyMax },
    approval: { above: config.withdrawalApprovalAbove, newDestinationHoldS: config.newDestinationHoldS },
  })
  const events = new EventsService({ storage, wakeups: deps.wakeups, clock, lifecycle: deps.lifecycle, eventRetentionDays: config.eventRetentionDays, rememberCaughtUp: storage.engine === 'sqlite' })
  // Accounts (contract §8): bans, the operator's view of users, deletion, export.
  const bans = new BanService({ storage, clock, onSecurityEvent: (e) => securityLog.record(e) })
  const users = new UserDirectory({ storage, clock, wallet })
  const deletion = new AccountDeletion({ storage, clock, passwords, onSecurityEvent: (e) => securityLog.record(e) })
  // Operators (contract §11): named accounts, their sessions; the audit log every operator action is recorded in.
  const operatorDeps = { storage, clock, hashGate, csrfKey: deps.secrets.chainKey, chainKey: deps.secrets.chainKey, sessionTtlS: config.operatorSessionTtlS }
  const operators = new OperatorService(operatorDeps)
  const operatorSessions = new OperatorSessions(operatorDeps)
  const operatorTotp = new OperatorTotp(operatorDeps)
  // The console's reads across modules (dashboard counts, dispute and withdrawal queues).
  // Whether the audit and security-event chains hold: walked on demand, the last result remembered for the dashboard.
  const chainChecks = new ChainChecks({ clock, walks: { audit: () => audit.verify(storage.read.audit), security: () => securityLog.verify() } })
  const operations = new OperationsOverview({ storage, chainChecks })
  const exports = new AccountExport({ storage, clock, matches, wallet, withdrawals, securityLog, ratings })
  // Sign-in beyond passwords (contract §13): what a Steam ticket proves.
  const steam = new SteamTickets({ settings: steamSettingsOf(config), logger })
  // The event plane over WebSockets (contract §14): tickets, and this instance's sockets.
  const socketTickets = new SocketTickets({ storage, clock })
  const sockets = new SocketHub({ storage, events, tickets: socketTickets, wakeups: deps.wakeups, logger, perUser: config.socketsPerUser, max: config.socketsMax, slowS: config.socketSlowS, ...deps.socketTimings })
  return { integrity, payouts, webhooks, socketTickets, sockets, storage, deviceCodes, audit, operators, operatorSessions, operatorTotp, operations, chainChecks, auth, signIn, registration, identities, oidc, games, gameKeys, gameServers, tournamentRegistration, tournamentOperations, ratings, matchmaking, challenges, matches, evidence, wallet, pins, withdrawals, securityLog, events, signingKeys, mailer, emailVerification, passwordChange, passwordReset, hashGate, bans, users, deletion, exports, steam }
}

export type Services = ReturnType<typeof createServices>

/**
 * Opens the configured storage and builds the services on it, for a command
 * that runs without a server (operator subcommands, seed). `close` writes
 * the buffered security events and closes the database.
 */
export async function openServices(config: Readonly<Config>, options: { logger?: Logger; generateOperatorToken?: boolean } = {}) {
  const logger = options.logger ?? createLogger('silent')
  const wakeups = inProcessWakeups()
  const { storage, secrets } = await openStorageWithSecrets(config, { logger, wakeups }, { generateOperatorToken: options.generateOperatorToken ?? false })
  const services = createServices({ config, storage, wakeups, secrets, logger, clock: systemClock, lifecycle: { draining: false } })
  let closed = false
  return {
    services,
    secrets,
    /** Buffered security events are written first, then the storage closes. */
    async close(): Promise<void> {
      if (closed) return
      closed = true
      await services.securityLog.close()
      await storage.close()
    },
  }
}
