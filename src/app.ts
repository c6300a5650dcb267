// createApp(deps) assembles the HTTP application from its parts and never
// listens: tests drive it with app.handle(new Request(...)), index/cli serve it.
import { Elysia } from 'elysia'
import type { ServiceDeps, Services } from './services'
import { adminModule, operatorApiDisabled } from './modules/admin'
import { accountModule, authModule, clientAddress, steamModule } from './modules/auth'
import { identitiesModule } from './modules/auth/identity-routes'
import { oidcModule } from './modules/auth/oidc'
import { gamesModule } from './modules/games'
import { ratingsModule } from './modules/ratings'
import { matchmakingModule } from './modules/matchmaking'
import { evidenceModule } from './modules/evidence'
import { healthModule } from './modules/health'
import { serverResultsModule } from './modules/matches/server-results'
import { matchesModule } from './modules/matches'
import { pinVerifyModule, walletModule } from './modules/wallet'
import { securityModule } from './modules/security'
import { eventsModule } from './modules/events'
import { realtimeModule } from './modules/realtime'
import { errorHandler } from './plugins/errors'
import { consoleModule, renderConsoleError } from './console'
import { devicePageModule, renderDevicePageError } from './device-page'
import { oidcProviders } from './device-page/providers'
import { requestOrigin } from './shared/request-origin'
import { deviceCodeModule } from './modules/auth/device-code-routes'
import { jsonBody } from './plugins/json-body'
import { apiDocs } from './plugins/openapi'
import { requestContext } from './plugins/request-context'
import { rateLimit } from './plugins/rate-limit'
import { inProcessRateLimitStore } from './shared/rate-limit'
import { AppMetrics, metricsModule } from './modules/metrics'
import type { BackupStatus } from './backup/schedule'

export interface AppOptions {
  /** What the scheduled backups last did (for /metrics); the server's, `{}` elsewhere. */
  backupStatus?: () => BackupStatus
}

export function createApp(deps: Pick<ServiceDeps, 'config' | 'secrets' | 'logger' | 'lifecycle' | 'clock'>, services: Services, options: AppOptions = {}) {
  const { config } = deps
  const { auth, games, matches: matchService, wallet, pins, withdrawals, securityLog, events, storage, bans, users, deletion, exports } = services
  const metrics = new AppMetrics({
    securityEvents: () => securityLog.stats(),
    hashGate: () => services.hashGate.stats(),
    withdrawals: () => storage.read.wallet.withdrawalCounts(),
    jobs: () => storage.read.jobs.queueStats(deps.clock.now()),
    pollsWaiting: () => events.pollsWaiting(),
    observeWakeups: (observe) => events.observeWakeups(observe),
    storage,
    clock: deps.clock,
    backups: options.backupStatus ?? (() => ({})),
    observeSteam: (observe) => services.steam.observe(observe),
    sockets: services.sockets,
    openTickets: () => storage.read.matchmaking.countOpenTickets(),
    payoutsHeld: () => storage.read.payouts.heldCount(),
    observeMatchmakingWaits: (observe) => services.matchmaking.observeWaits(observe),
    webhookQueue: () => storage.read.webhooks.queueStats(),
  })
  const addressOf = (request: Request, server: Parameters<typeof clientAddress>[1]) => clientAddress(request, server, { trustProxy: config.trustProxy })
  const app = (
    new Elysia({ name: 'arena', normalize: 'typebox' })
      // normalize 'typebox': Elysia's default (exact-mirror) reshapes a wrong
      // value into the declared one before validating (123 becomes {}, a string
      // becomes an object of its characters); TypeBox's cleaning only removes
      // undeclared properties and lets validation refuse the rest.
      // Order matters: the request id and error envelope must wrap everything after them.
      .use(requestContext(deps.logger, (route, method, status, seconds) => metrics.observe(route, method, status, seconds)))
      .use(errorHandler(deps.logger, [{ prefix: '/console', render: renderConsoleError }, { prefix: '/device', render: renderDevicePageError }]))
      .use(jsonBody)
      // Before every route: its transform must run before any route's own (the auth macro's, the operator guard's).
      .use(rateLimit({ limits: config.rateLimits, store: storage.rateLimits ?? inProcessRateLimitStore(deps.clock), addressOf, logger: deps.logger }))
      .use(apiDocs())
      .use(metricsModule(metrics, config.metricsToken))
      .use(healthModule(storage, deps.lifecycle, () => securityLog.stats()))
      .use(authModule(auth, { trustProxy: config.trustProxy }, services))
      .use(identitiesModule(auth, { trustProxy: config.trustProxy }, services))
      .use(steamModule(services.steam, services.identities, { trustProxy: config.trustProxy }))
      .use(accountModule(auth, deletion, exports))
      // OpenID Connect sign-in is served only when providers are configured (ARENA_OIDC_PROVIDERS): without one, none of its routes could succeed.
      .use(config.oidcProviders.length > 0 ? oidcModule(services.oidc, { trustProxy: config.trustProxy }) : new Elysia({ name: 'arena/oidc' }))
      .use(deviceCodeModule(services.deviceCodes, { trustProxy: config.trustProxy, serverUrl: config.serverUrl }))
      .use(gamesModule(auth, games, services.tournamentRegistration))
      .use(ratingsModule(auth, services.ratings))
      .use(matchmakingModule(auth, services.matchmaking, services.challenges))
      .use(matchesModule(auth, matchService))
      // Results signed by a game's servers (contract §17): the signature is the credential.
      .use(serverResultsModule(matchService))
      .use(evidenceModule(auth, services.evidence))
      .use(walletModule(auth, wallet, withdrawals))
      .use(securityModule(auth, pins, securityLog))
      .use(pinVerifyModule(auth, withdrawals))
      .use(eventsModule(auth, events))
      .use(realtimeModule(auth, services.socketTickets, services.sockets))
      // The device-code verification page (contract §13): players approve a TV's or console's sign-in there.
      .use(
        devicePageModule({
          storage,
          clock: deps.clock,
          signIn: services.signIn,
          deviceCodes: services.deviceCodes,
          key: deps.secrets.chainKey,
          secureCookie: config.env === 'production',
          trustProxy: config.trustProxy,
          addressOf,
          // "Sign in with …": each configured OpenID Connect provider, through its web flow with purpose 'device'.
          providers: oidcProviders(services.oidc, (request) => config.serverUrl ?? requestOrigin(request, config.trustProxy)),
        }),
      )
      // The operator console (contract §11): its own sessions, so it is served whether or not the admin token is set.
      .use(consoleModule({ services, secureCookie: config.env === 'production', sessionTtlS: config.operatorSessionTtlS, clock: deps.clock, addressOf, trustProxy: config.trustProxy }))
  )
  // No operator token (outside `local`, where one is generated), no operator
  // routes: the /api/v1/admin tree answers 404 operator_api_disabled.
  const adminToken = deps.secrets.adminToken
  return adminToken === undefined
    ? app.use(operatorApiDisabled)
    : app.use(adminModule(adminToken, games, services.tournamentOperations, wallet, storage, { devMailbox: config.env === 'local', ratings: services.ratings, matchmaking: services.matchmaking, evidence: services.evidence, gameServers: services.gameServers, bans, users, deletion, pins, identities: services.identities, withdrawals, operations: services.operations, audit: services.audit, operatorSession: async (token) => (await services.operatorSessions.session(token, 'api'))?.operator ?? null, operators: services.operators, operatorSessions: services.operatorSessions, operatorTotp: services.operatorTotp, addressOf, payouts: services.payouts, webhooks: services.webhooks }))
}

