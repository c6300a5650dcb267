// createApp(deps) assembles the HTTP application from its parts and never
// listens: tests drive it with app.handle(new Request(...)), index/cli serve it.
import { Elysia } from 'elysia'
import type { Config } from './config'
import type { DbHandle } from './db/client'
import { createGroupCommitter } from './db/group-commit'
import { adminModule, operatorApiDisabled } from './modules/admin'
import { authModule } from './modules/auth'
import { createAccessTokens } from './modules/auth/access-tokens'
import { AuthService } from './modules/auth/service'
import { defaultHashGate, type HashGate } from './modules/auth/hash-gate'
import { gamesModule } from './modules/games'
import { GamesService } from './modules/games/service'
import { healthModule } from './modules/health'
import { matchesModule } from './modules/matches'
import { MatchesService } from './modules/matches/service'
import { join } from 'node:path'
import { LocalFrostCustody, type CustodyClient } from './modules/wallet/custody'
import { CosignerCustody } from './modules/wallet/cosigner-custody'
import { walletModule } from './modules/wallet'
import { WalletService } from './modules/wallet/service'
import { WithdrawalService } from './modules/wallet/withdrawals'
import { securityModule } from './modules/security'
import { PinService } from './modules/security/pin-service'
import { SecurityEventLog, type SecurityLogOptions } from './modules/security/event-log'
import { eventsModule } from './modules/events'
import type { Lifecycle } from './modules/health/service'
import { errorHandler } from './plugins/errors'
import { jsonBody } from './plugins/json-body'
import { apiDocs } from './plugins/openapi'
import { requestContext } from './plugins/request-context'
import type { Clock } from './shared/clock'
import type { Logger } from './shared/logger'
import { signingKeyring, type Secrets } from './secrets'

export interface AppDeps {
  config: Readonly<Config>
  db: DbHandle
  secrets: Secrets
  logger: Logger
  clock: Clock
  lifecycle: Lifecycle
  /** Defaults to the local FROST custody in the data dir; tests of a remote provider pass their own. */
  custody?: CustodyClient
  securityLogOptions?: SecurityLogOptions
  /** Bounds concurrent argon2id work; defaults to the process's gate. Tests pass a small one. */
  hashGate?: HashGate
}

/** The custody client the configuration asks for (contract §3: pluggable). */
export function custodyFor(config: Readonly<Config>): CustodyClient {
  const dir = join(config.dataDir, 'custody')
  if (config.custody === 'cosigner') return new CosignerCustody(dir, config.cosignerUrl!, config.cosignerSecret!)
  return new LocalFrostCustody(dir)
}

/** The services behind the routes, shared with the server's background work. */
export function createServices(deps: AppDeps) {
  const { config, clock, logger } = deps
  const db = deps.db.db
  const securityLog = new SecurityEventLog({ db, clock, logger, key: deps.secrets.chainKey }, deps.securityLogOptions)
  const accessTokens = createAccessTokens({
    keys: signingKeyring(config, deps.secrets),
    ttlS: config.accessTtlS,
    // /auth/validate accepts an expired access token no older than a session can live.
    maxExpiredS: config.refreshTtlS,
    clock,
  })
  const hashGate = deps.hashGate ?? defaultHashGate()
  const auth = new AuthService({ db, clock, accessTokens, refreshTtlS: config.refreshTtlS, refreshReuseGraceS: config.refreshReuseGraceS, onSecurityEvent: (e) => securityLog.record(e), hashGate })
  const games = new GamesService({ db, clock, onSecurityEvent: (e) => securityLog.record(e) })
  // One group committer per app: concurrent claims and session issues share its fsyncs.
  const commits = createGroupCommitter(db)
  const matches = new MatchesService({ db, clock, games, gameSessionTtlS: config.gameSessionTtlS, commits })
  const custody = deps.custody ?? custodyFor(config)
  const wallet = new WalletService({ db, clock, custody })
  const pins = new PinService({ db, clock, pinSessionTtlS: config.pinSessionTtlS, securityLog, hashGate })
  const withdrawals = new WithdrawalService({ db, clock, logger, pins, wallet, custody })
  return { auth, games, matches, wallet, pins, withdrawals, securityLog, commits }
}

export type Services = ReturnType<typeof createServices>

export function createApp(deps: AppDeps, services: Services = createServices(deps)) {
  const { config } = deps
  const { auth, games, matches: matchService, wallet, pins, withdrawals, securityLog } = services
  const app = (
    new Elysia({ name: 'arena', normalize: 'typebox' })
      // normalize 'typebox': Elysia's default (exact-mirror) reshapes a wrong
      // value into the declared one before validating (123 becomes {}, a string
      // becomes an object of its characters); TypeBox's cleaning only removes
      // undeclared properties and lets validation refuse the rest.
      // Order matters: the request id and error envelope must wrap everything after them.
      .use(requestContext(deps.logger))
      .use(errorHandler(deps.logger))
      .use(jsonBody)
      .use(apiDocs())
      .use(healthModule(deps.db.sqlite, deps.lifecycle, () => securityLog.stats()))
      .use(authModule(auth, { trustProxy: config.trustProxy }))
      .use(gamesModule(auth, games))
      .use(matchesModule(auth, matchService))
      .use(walletModule(auth, wallet))
      .use(securityModule(auth, pins, withdrawals, securityLog))
      .use(eventsModule(auth, deps.db.db, deps.lifecycle))
  )
  // No operator token (outside `local`, where one is generated), no operator
  // routes: the /api/v1/admin tree answers 404 operator_api_disabled.
  const adminToken = deps.secrets.adminToken
  return adminToken === undefined ? app.use(operatorApiDisabled) : app.use(adminModule(adminToken, games, matchService, wallet, deps.db.db))
}

