// The composition root: the one place that builds arena's services from a
// storage and a configuration. The server, the operator subcommands, `arena
// seed` and the tests all get their services here, so each runs the same code
// the routes do.
import { join } from 'node:path'
import type { Config } from './config'
import type { Storage } from './db/storage'
import { openStorage } from './db/open'
import { createAccessTokens } from './modules/auth/access-tokens'
import { defaultHashGate, type HashGate } from './modules/auth/hash-gate'
import { AuthService } from './modules/auth/service'
import { EventsService } from './modules/events/service'
import { inProcessWakeups, type EventWakeups } from './modules/events/wakeups'
import { GamesService } from './modules/games/service'
import type { Lifecycle } from './modules/health/service'
import { MatchesService } from './modules/matches/service'
import { SecurityEventLog, type SecurityLogOptions } from './modules/security/event-log'
import { PinService } from './modules/security/pin-service'
import { CosignerCustody } from './modules/wallet/cosigner-custody'
import { LocalFrostCustody, type CustodyClient } from './modules/wallet/custody'
import { WalletService } from './modules/wallet/service'
import { WithdrawalService } from './modules/wallet/withdrawals'
import { resolveSecrets, signingKeyring, type Secrets } from './secrets'
import { systemClock, type Clock } from './shared/clock'
import { createLogger, type Logger } from './shared/logger'

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
}

/** The custody client the configuration asks for (contract §3: pluggable). */
export function custodyFor(config: Readonly<Config>): CustodyClient {
  const dir = join(config.dataDir, 'custody')
  if (config.custody === 'cosigner') return new CosignerCustody(dir, config.cosignerUrl!, config.cosignerSecret!)
  return new LocalFrostCustody(dir)
}

/** The services behind the routes, shared with the server's background work and the operator commands. */
export function createServices(deps: ServiceDeps) {
  const { config, clock, logger, storage } = deps
  const securityLog = new SecurityEventLog({ storage, clock, logger, key: deps.secrets.chainKey }, deps.securityLogOptions)
  const accessTokens = createAccessTokens({
    keys: signingKeyring(config, deps.secrets),
    ttlS: config.accessTtlS,
    // /auth/validate accepts an expired access token no older than a session can live.
    maxExpiredS: config.refreshTtlS,
    clock,
  })
  const hashGate = deps.hashGate ?? defaultHashGate()
  const auth = new AuthService({ storage, clock, accessTokens, refreshTtlS: config.refreshTtlS, refreshReuseGraceS: config.refreshReuseGraceS, onSecurityEvent: (e) => securityLog.record(e), hashGate })
  const games = new GamesService({ storage, clock, onSecurityEvent: (e) => securityLog.record(e) })
  const matches = new MatchesService({ storage, clock, games, gameSessionTtlS: config.gameSessionTtlS })
  const custody = deps.custody ?? custodyFor(config)
  const wallet = new WalletService({ storage, clock, custody })
  const pins = new PinService({ storage, clock, pinSessionTtlS: config.pinSessionTtlS, passwords: auth.accountPasswords(), securityLog, hashGate })
  const withdrawals = new WithdrawalService({ storage, clock, logger, pins, wallet, custody })
  const events = new EventsService({ storage, wakeups: deps.wakeups, clock, lifecycle: deps.lifecycle, eventRetentionDays: config.eventRetentionDays })
  return { storage, auth, games, matches, wallet, pins, withdrawals, securityLog, events }
}

export type Services = ReturnType<typeof createServices>

/**
 * Opens the configured storage and builds the services on it, for a command
 * that runs without a server (operator subcommands, seed). `close` writes
 * the buffered security events and closes the database.
 */
export async function openServices(config: Readonly<Config>, options: { logger?: Logger; generateOperatorToken?: boolean } = {}) {
  const logger = options.logger ?? createLogger('silent')
  const secrets = resolveSecrets(config, { generateOperatorToken: options.generateOperatorToken ?? false })
  const wakeups = inProcessWakeups()
  const storage = await openStorage(config, { logger, wakeups })
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
