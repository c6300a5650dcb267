// The environment is read once, here, validated as a whole, and frozen.
// A bad value stops the process with one message naming every problem, so an
// operator fixes them in one go instead of one restart per typo.
import { LOG_LEVELS, type LogLevel } from './shared/logger'
import { MasterKey } from './shared/sealed'
import { MoneyFormatError, parsePositiveAmount, USDC } from './shared/money'
import { Secret } from './shared/secret'
import { parseRateLimits, type RateLimits } from './shared/rate-limit'

export const ENVIRONMENTS = ['local', 'sandbox', 'staging', 'production'] as const
export type Environment = (typeof ENVIRONMENTS)[number]

export interface Config {
  env: Environment
  host: string
  port: number
  dataDir: string
  logLevel: LogLevel
  /**
   * Operator token for /api/v1/admin. When unset: generated once and kept in the
   * data dir in `local`; elsewhere the whole tree answers 404 `operator_api_disabled`.
   */
  adminToken: string | undefined
  /** Bearer token for GET /metrics; unset: the route answers 404. */
  metricsToken: string | undefined
  /** HS256 secret for access tokens; when unset, generated once and kept in the data dir. */
  jwtSecret: string | undefined
  /** The signing secret before ARENA_JWT_SECRET was changed: its tokens still verify (rotation by environment). */
  jwtPreviousSecret: string | undefined
  accessTtlS: number
  refreshTtlS: number
  /** A spent refresh token presented again this soon after its rotation is a retry, not a replay (0: never). */
  refreshReuseGraceS: number
  pinSessionTtlS: number
  operatorSessionTtlS: number
  gameSessionTtlS: number
  eventRetentionDays: number
  /** Days the security-event log keeps an event (ARENA_SECURITY_LOG_RETENTION_DAYS). */
  securityLogRetentionDays: number
  /** How long SIGTERM waits for in-flight requests before closing them. */
  shutdownGraceS: number
  /** Behind a reverse proxy: take the client address from X-Forwarded-For. */
  trustProxy: boolean
  /** The rate limits in force by route group: the defaults with ARENA_RATE_LIMITS applied (contract §20). */
  rateLimits: RateLimits
  /** Run background jobs (tournament finalization, ...) in this process. */
  jobsEnabled: boolean
  /** `local`: all shares in this data dir; `cosigner`: one share held by an `arena cosigner` process. */
  custody: 'local' | 'cosigner'
  /** Base URL of the paired co-signer (custody `cosigner`). */
  cosignerUrl: string | undefined
  /** Shared secret authenticating server ⇄ co-signer requests (both sides set the same value). */
  cosignerSecret: string | undefined
  /**
   * Production with custody `local` keeps every key share on one volume; it
   * starts only with this explicit acknowledgement (ARENA_ACCEPT_SINGLE_VOLUME_CUSTODY).
   */
  acceptSingleVolumeCustody: boolean
  /** PostgreSQL to hold the data instead of SQLite in the data dir (ARENA_DATABASE_URL, postgres://...). */
  databaseUrl: string | undefined
  /** Connections each instance may open to PostgreSQL (ARENA_DATABASE_POOL). */
  databasePool: number
  /**
   * With PostgreSQL: the key the secrets kept in the database are sealed under
   * (ARENA_MASTER_KEY), the same on every instance. Prints as `[master key]`.
   */
  masterKey: MasterKey | undefined
  /** SMTP server for mail (ARENA_SMTP_URL, smtp:// or smtps://, credentials in the URL); never logged with its password. */
  smtpUrl: string | undefined
  /** The From address of arena's mail (ARENA_MAIL_FROM). */
  mailFrom: string
  /** Base URL of the studio's site, for the links in mail (ARENA_PUBLIC_URL); no links without it. */
  publicUrl: string | undefined
  /** The product name mail speaks in (ARENA_PRODUCT_NAME). */
  productName: string
  /** A PIN verify of an account whose email is unverified answers 403 email_not_verified (contract §8). */
  requireVerifiedEmail: boolean
  /**
   * The largest single withdrawal, in minor units of USDC (ARENA_WITHDRAWAL_MAX);
   * undefined: no limit. A larger one answers 422 withdrawal_limit.
   */
  withdrawalMax: bigint | undefined
  /**
   * The most one user may withdraw in any 24 hours, in minor units of USDC
   * (ARENA_WITHDRAWAL_DAILY_MAX); undefined: no limit. docs/decisions.md,
   * "Withdrawal limits".
   */
  withdrawalDailyMax: bigint | undefined
  /**
   * A withdrawal strictly above this amount, in minor units of USDC
   * (ARENA_WITHDRAWAL_APPROVAL_ABOVE), waits for an operator's approval;
   * undefined: none does. docs/decisions.md, "Withdrawal approval and the new-destination hold".
   */
  withdrawalApprovalAbove: bigint | undefined
  /**
   * How long the first withdrawal to an address the user never withdrew to
   * is held before it is signed, in seconds (ARENA_NEW_DESTINATION_HOLD_S); 0: no hold.
   */
  newDestinationHoldS: number
  /**
   * The passphrase backups are encrypted with (ARENA_BACKUP_PASSPHRASE), for
   * `arena backup`, `arena restore` and the scheduled backups. Prints as `[redacted]`.
   */
  backupPassphrase: Secret | undefined
  /** Where the server writes scheduled backups (ARENA_BACKUP_DIR); unset: none. SQLite only. */
  backupDir: string | undefined
  /** Seconds between scheduled backups (ARENA_BACKUP_INTERVAL_S). */
  backupIntervalS: number
  /** How many scheduled backups are kept in ARENA_BACKUP_DIR, the newest (ARENA_BACKUP_KEEP). */
  backupKeep: number
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`)
    this.name = 'ConfigError'
  }
}

/** Secrets shorter than this are refused where it matters (production, HS256 keys). */
export const MIN_SECRET_LENGTH = 32

interface IntSpec {
  default: number
  min: number
  max: number
}

// The bounds of every setting, declared once: loadConfig enforces them,
// `arena --help` prints them (helpLine) and test/platform/config.test.ts holds
// the README's Configuration table to them.

/** Whole numbers: a default and the range a value must fall in. */
export const INTS = {
  ARENA_PORT: { default: 8080, min: 0, max: 65535 },
  ARENA_ACCESS_TTL_S: { default: 900, min: 30, max: 86_400 },
  ARENA_REFRESH_TTL_S: { default: 30 * 86_400, min: 3600, max: 365 * 86_400 },
  ARENA_REFRESH_REUSE_GRACE_S: { default: 10, min: 0, max: 300 },
  ARENA_PIN_SESSION_TTL_S: { default: 300, min: 30, max: 3600 },
  ARENA_OPERATOR_SESSION_TTL_S: { default: 28_800, min: 300, max: 604_800 },
  ARENA_GAME_SESSION_TTL_S: { default: 1800, min: 60, max: 86_400 },
  ARENA_EVENT_RETENTION_DAYS: { default: 30, min: 1, max: 3650 },
  ARENA_SECURITY_LOG_RETENTION_DAYS: { default: 90, min: 1, max: 3650 },
  // 8 s: a graceful stop (grace, then closing the database) fits inside the
  // 10 s that `docker stop` and Kubernetes give before SIGKILL.
  ARENA_SHUTDOWN_GRACE_S: { default: 8, min: 0, max: 300 },
  ARENA_DATABASE_POOL: { default: 10, min: 1, max: 1000 },
  ARENA_NEW_DESTINATION_HOLD_S: { default: 0, min: 0, max: 30 * 86_400 },
  ARENA_BACKUP_INTERVAL_S: { default: 86_400, min: 1, max: 30 * 86_400 },
  ARENA_BACKUP_KEEP: { default: 7, min: 1, max: 10_000 },
} as const satisfies Record<string, IntSpec>

/** Settings that are one of a few words, and the word they default to. */
export const CHOICES = {
  ARENA_ENV: { values: ENVIRONMENTS, default: 'local' },
  ARENA_LOG_LEVEL: { values: LOG_LEVELS, default: 'info' },
  ARENA_CUSTODY: { values: ['local', 'cosigner'], default: 'local' },
} as const satisfies Record<string, { values: readonly string[]; default: string }>

/** Secrets and tokens with a shortest length: always, or only in `production`. */
export const MIN_LENGTHS = {
  ARENA_JWT_SECRET: { min: MIN_SECRET_LENGTH, only: undefined },
  ARENA_JWT_PREVIOUS_SECRET: { min: MIN_SECRET_LENGTH, only: undefined },
  ARENA_COSIGNER_SECRET: { min: MIN_SECRET_LENGTH, only: undefined },
  ARENA_ADMIN_TOKEN: { min: MIN_SECRET_LENGTH, only: 'production' },
  ARENA_METRICS_TOKEN: { min: MIN_SECRET_LENGTH, only: 'production' },
} as const satisfies Record<string, { min: number; only: Environment | undefined }>

/** USDC amounts: positive, in the money grammar (at most USDC's decimals); unset means no limit. */
export const AMOUNTS = ['ARENA_WITHDRAWAL_MAX', 'ARENA_WITHDRAWAL_DAILY_MAX', 'ARENA_WITHDRAWAL_APPROVAL_ABOVE'] as const

/** The bounds of a setting in words (`30 to 86400`, `at least 32 characters`), or undefined for one without. */
export function boundsOf(name: string): string | undefined {
  if (name in INTS) {
    const spec: IntSpec = INTS[name as keyof typeof INTS]
    return `${spec.min} to ${spec.max}`
  }
  if (name in CHOICES) return CHOICES[name as keyof typeof CHOICES].values.join(' | ')
  if (name in MIN_LENGTHS) {
    const spec: { min: number; only: Environment | undefined } = MIN_LENGTHS[name as keyof typeof MIN_LENGTHS]
    return `at least ${spec.min} characters${spec.only ? ` in ${spec.only}` : ''}`
  }
  if ((AMOUNTS as readonly string[]).includes(name)) return `a positive ${USDC.code} amount, at most ${USDC.decimals} decimals`
  return undefined
}

/**
 * Every variable arena reads, with the line `arena --help` prints for it (the
 * binary may be far from any README). Any other ARENA_* name is a typo and refused.
 */
export const VARIABLES = {
  ARENA_ENV: 'local | sandbox | staging | production (default local)',
  ARENA_HOST: 'address to listen on (default 127.0.0.1 in local, 0.0.0.0 elsewhere)',
  ARENA_PORT: 'port to listen on (default 8080; 0 picks a free one)',
  ARENA_DATA_DIR: 'database, generated secrets and custody shares (default ./data)',
  ARENA_LOG_LEVEL: 'debug | info | warn | error | silent (default info)',
  ARENA_ADMIN_TOKEN: 'operator token for /api/v1/admin (x-admin-token); local generates one, elsewhere unset disables the operator API',
  ARENA_METRICS_TOKEN: 'bearer token for GET /metrics (Prometheus); unset answers 404',
  ARENA_JWT_SECRET: 'access-token signing key, at least 32 characters (default: generated into the data dir; required in production)',
  ARENA_JWT_PREVIOUS_SECRET: 'the signing key ARENA_JWT_SECRET replaced: its tokens still verify until they expire',
  ARENA_ACCESS_TTL_S: 'access-token lifetime in seconds (default 900)',
  ARENA_REFRESH_TTL_S: 'auth-session lifetime in seconds (default 2592000, 30 days)',
  ARENA_REFRESH_REUSE_GRACE_S: 'a spent refresh token sent again this soon is a retry, not a replay (default 10; 0 disables)',
  ARENA_PIN_SESSION_TTL_S: 'PIN-session lifetime in seconds (default 300)',
  ARENA_OPERATOR_SESSION_TTL_S: 'an operator\'s console or API session lives this long from sign-in, in seconds (default 28800: 8 h)',
  ARENA_GAME_SESSION_TTL_S: 'game-session lifetime in seconds (default 1800)',
  ARENA_EVENT_RETENTION_DAYS: 'days the event plane keeps events (default 30)',
  ARENA_SECURITY_LOG_RETENTION_DAYS: 'days the security-event log keeps an event before housekeeping cuts the chain\'s old end (default 90)',
  ARENA_SHUTDOWN_GRACE_S: 'seconds a graceful stop waits for in-flight requests (default 8)',
  ARENA_TRUST_PROXY: 'true behind one reverse proxy: client address from X-Forwarded-For (default false)',
  ARENA_RATE_LIMITS: 'JSON overriding the rate limits by route group, e.g. {"player-read":{"account":{"limit":600,"windowS":60}}} or {"*":false} for none (default: the limits in docs/api.md, "Rate limits")',
  ARENA_JOBS_ENABLED: 'run background jobs in this process (default true)',
  ARENA_CUSTODY: 'local (all key shares in the data dir) | cosigner (default local)',
  ARENA_COSIGNER_URL: 'base URL of the `arena cosigner` (custody cosigner)',
  ARENA_COSIGNER_SECRET: 'shared secret of server and co-signer, at least 32 characters',
  ARENA_ACCEPT_SINGLE_VOLUME_CUSTODY: 'true lets production run with custody local (every key share on one volume)',
  ARENA_DATABASE_URL: 'postgres://user:password@host:5432/db to keep the data in PostgreSQL 15+ (default: SQLite in the data dir)',
  ARENA_DATABASE_POOL: 'connections each instance opens to PostgreSQL (default 10)',
  ARENA_MASTER_KEY: 'with ARENA_DATABASE_URL, required: 32 random bytes (64 hex digits or base64) sealing the secrets kept in the database; the same on every instance',
  ARENA_SMTP_URL: 'smtp://user:password@host:587 or smtps://…:465, the server mail is sent through (default: none; local keeps mail in a dev mailbox)',
  ARENA_MAIL_FROM: 'From address of the mail arena sends (default "arena <no-reply@localhost>")',
  ARENA_PUBLIC_URL: "base URL of the studio's site, for links in mail (default: none, mail carries the code alone)",
  ARENA_PRODUCT_NAME: 'the name mail calls the service by (default arena)',
  ARENA_REQUIRE_VERIFIED_EMAIL: 'true: a PIN verify needs a verified email (default true in production, false elsewhere)',
  ARENA_WITHDRAWAL_MAX: 'the largest single withdrawal, a USDC amount such as "1000" or "250.5" (default: no limit)',
  ARENA_WITHDRAWAL_DAILY_MAX: 'the most one user may withdraw in any 24 hours, a USDC amount (default: no limit)',
  ARENA_WITHDRAWAL_APPROVAL_ABOVE: 'a withdrawal strictly above this USDC amount waits for an operator to approve it (default: none does)',
  ARENA_NEW_DESTINATION_HOLD_S: 'seconds the first withdrawal to a new address is held before it is signed (default 0: no hold)',
  ARENA_BACKUP_PASSPHRASE: 'passphrase `arena backup` and scheduled backups encrypt with and `arena restore` decrypts with (age, scrypt); without it they refuse (default: unset)',
  ARENA_BACKUP_DIR: 'the server writes an encrypted backup (arena-<UTC time>.age) here every ARENA_BACKUP_INTERVAL_S; needs ARENA_BACKUP_PASSPHRASE; SQLite only (default: unset, no scheduled backups)',
  ARENA_BACKUP_INTERVAL_S: 'seconds between scheduled backups, the first one at start (default 86400)',
  ARENA_BACKUP_KEEP: 'how many scheduled backups ARENA_BACKUP_DIR keeps, the newest; older ones arena wrote there are deleted (default 7)',
} as const satisfies Record<string, string> & Record<keyof typeof INTS, string>

export const KNOWN_VARIABLES: readonly string[] = Object.keys(VARIABLES)

/** A variable's line in `arena --help`: its meaning, then its range where it has a numeric one. */
export function helpLine(name: keyof typeof VARIABLES): string {
  return name in INTS ? `${VARIABLES[name]}; ${boundsOf(name)}` : VARIABLES[name]
}

type Env = Record<string, string | undefined>

/** The words a boolean setting takes, in any case: what unit files, compose files and shell habits write. */
export const BOOLEAN_WORDS = { true: ['true', '1', 'yes', 'on'], false: ['false', '0', 'no', 'off'] } as const

/** A boolean setting's value, or undefined when it is none of BOOLEAN_WORDS. */
export function parseBoolean(raw: string): boolean | undefined {
  const word = raw.trim().toLowerCase()
  if ((BOOLEAN_WORDS.true as readonly string[]).includes(word)) return true
  if ((BOOLEAN_WORDS.false as readonly string[]).includes(word)) return false
  return undefined
}

/**
 * The known variable a misspelt one most likely meant (ARENA_PROT → ARENA_PORT):
 * the closest by edit distance (a swap of two neighbouring letters counts as
 * one edit), if it is within a third of the name's length past `ARENA_`.
 */
export function nearestVariable(name: string): string | undefined {
  const given = name.toUpperCase()
  let best: { name: string; distance: number } | undefined
  for (const known of KNOWN_VARIABLES) {
    const distance = editDistance(given, known)
    if (best === undefined || distance < best.distance) best = { name: known, distance }
  }
  const allowed = Math.max(1, Math.floor((given.length - 'ARENA_'.length) / 3))
  return best !== undefined && best.distance <= allowed ? best.name : undefined
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps. */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)))
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1)
      rows[i]![j] = d
    }
  }
  return rows[a.length]![b.length]!
}

export function loadConfig(env: Env = process.env): Readonly<Config> {
  const problems: string[] = []

  for (const name of Object.keys(env)) {
    if (name.startsWith('ARENA_') && !KNOWN_VARIABLES.includes(name)) {
      const near = nearestVariable(name)
      problems.push(
        near === undefined
          ? `${name} is not a setting arena knows (known: ${KNOWN_VARIABLES.join(', ')})`
          : `${name} is not a setting arena knows: did you mean ${near}? (known: ${KNOWN_VARIABLES.join(', ')})`,
      )
    }
  }

  // An empty value is a mistake (`ARENA_PORT=` in a unit file, a template
  // variable that expanded to nothing), never a way to ask for the default:
  // refused, like a typo, instead of silently running on the default.
  for (const name of KNOWN_VARIABLES) {
    if (env[name] !== undefined && env[name]!.trim() === '') {
      problems.push(`${name} is set but empty: give it a value or unset it to use the default`)
    }
  }
  const given = (name: string): string | undefined => {
    const raw = env[name]
    return raw === undefined || raw.trim() === '' ? undefined : raw
  }

  const int = (name: keyof typeof INTS): number => {
    const spec: IntSpec = INTS[name]
    const raw = given(name)
    if (raw === undefined) return spec.default
    if (!/^[0-9]+$/.test(raw.trim())) {
      problems.push(`${name} must be a whole number, got "${raw}"`)
      return spec.default
    }
    const value = Number(raw.trim())
    if (value < spec.min || value > spec.max) {
      problems.push(`${name} must be between ${spec.min} and ${spec.max}, got ${value}`)
    }
    return value
  }

  const oneOf = <K extends keyof typeof CHOICES>(name: K): (typeof CHOICES)[K]['values'][number] => {
    const { values, default: fallback }: { values: readonly string[]; default: string } = CHOICES[name]
    const raw = given(name)
    if (raw === undefined) return fallback as (typeof CHOICES)[K]['values'][number]
    if (values.includes(raw)) return raw as (typeof CHOICES)[K]['values'][number]
    problems.push(`${name} must be one of ${values.join(', ')}, got "${raw}"`)
    return fallback as (typeof CHOICES)[K]['values'][number]
  }

  const flag = (name: string, fallback: boolean): boolean => {
    const raw = given(name)
    if (raw === undefined) return fallback
    const value = parseBoolean(raw)
    if (value !== undefined) return value
    problems.push(`${name} must be true or false (${BOOLEAN_WORDS.true.join(', ')} / ${BOOLEAN_WORDS.false.join(', ')}, any case), got "${raw}"`)
    return fallback
  }

  // A USDC amount in the money grammar, positive: 0 would read as either "no
  // withdrawals" or "no limit", so it is refused and unset means no limit.
  const amount = (name: (typeof AMOUNTS)[number]): bigint | undefined => {
    const raw = given(name)
    if (raw === undefined) return undefined
    try {
      return parsePositiveAmount(raw.trim(), USDC)
    } catch (error) {
      if (!(error instanceof MoneyFormatError)) throw error
      problems.push(
        `${name} must be a positive ${USDC.code} amount such as "1000" or "250.5" (at most ${USDC.decimals} decimals, no sign or exponent; unset it for no limit), got "${raw}"`,
      )
      return undefined
    }
  }

  const environment = oneOf('ARENA_ENV')
  const config: Config = {
    env: environment,
    // `local` listens on loopback only: `arena seed` prints a password and PIN
    // shared by every seeded player, and a laptop on a shared network should
    // not serve them. Every other environment (and the Docker image, which sets
    // ARENA_HOST=0.0.0.0) listens on all interfaces.
    host: given('ARENA_HOST') ?? (environment === 'local' ? '127.0.0.1' : '0.0.0.0'),
    port: int('ARENA_PORT'),
    dataDir: given('ARENA_DATA_DIR') ?? './data',
    logLevel: oneOf('ARENA_LOG_LEVEL'),
    adminToken: given('ARENA_ADMIN_TOKEN'),
    metricsToken: given('ARENA_METRICS_TOKEN'),
    jwtSecret: given('ARENA_JWT_SECRET'),
    jwtPreviousSecret: given('ARENA_JWT_PREVIOUS_SECRET'),
    accessTtlS: int('ARENA_ACCESS_TTL_S'),
    refreshTtlS: int('ARENA_REFRESH_TTL_S'),
    refreshReuseGraceS: int('ARENA_REFRESH_REUSE_GRACE_S'),
    pinSessionTtlS: int('ARENA_PIN_SESSION_TTL_S'),
    operatorSessionTtlS: int('ARENA_OPERATOR_SESSION_TTL_S'),
    gameSessionTtlS: int('ARENA_GAME_SESSION_TTL_S'),
    eventRetentionDays: int('ARENA_EVENT_RETENTION_DAYS'),
    securityLogRetentionDays: int('ARENA_SECURITY_LOG_RETENTION_DAYS'),
    shutdownGraceS: int('ARENA_SHUTDOWN_GRACE_S'),
    trustProxy: flag('ARENA_TRUST_PROXY', false),
    rateLimits: parseRateLimits(given('ARENA_RATE_LIMITS'), problems),
    jobsEnabled: flag('ARENA_JOBS_ENABLED', true),
    custody: oneOf('ARENA_CUSTODY'),
    cosignerUrl: given('ARENA_COSIGNER_URL'),
    cosignerSecret: given('ARENA_COSIGNER_SECRET'),
    acceptSingleVolumeCustody: flag('ARENA_ACCEPT_SINGLE_VOLUME_CUSTODY', false),
    databaseUrl: given('ARENA_DATABASE_URL'),
    databasePool: int('ARENA_DATABASE_POOL'),
    masterKey: undefined,
    smtpUrl: given('ARENA_SMTP_URL'),
    mailFrom: given('ARENA_MAIL_FROM') ?? 'arena <no-reply@localhost>',
    publicUrl: given('ARENA_PUBLIC_URL')?.replace(/\/+$/, ''),
    productName: given('ARENA_PRODUCT_NAME') ?? 'arena',
    requireVerifiedEmail: flag('ARENA_REQUIRE_VERIFIED_EMAIL', environment === 'production'),
    withdrawalMax: amount('ARENA_WITHDRAWAL_MAX'),
    withdrawalDailyMax: amount('ARENA_WITHDRAWAL_DAILY_MAX'),
    withdrawalApprovalAbove: amount('ARENA_WITHDRAWAL_APPROVAL_ABOVE'),
    newDestinationHoldS: int('ARENA_NEW_DESTINATION_HOLD_S'),
    backupPassphrase: given('ARENA_BACKUP_PASSPHRASE') === undefined ? undefined : new Secret(given('ARENA_BACKUP_PASSPHRASE')!),
    backupDir: given('ARENA_BACKUP_DIR'),
    backupIntervalS: int('ARENA_BACKUP_INTERVAL_S'),
    backupKeep: int('ARENA_BACKUP_KEEP'),
  }

  if (config.smtpUrl !== undefined && !/^smtps?:\/\/[^\s/]+(\/\S*)?$/.test(config.smtpUrl)) {
    // The value itself is not repeated: it may hold a password.
    problems.push('ARENA_SMTP_URL must be an smtp:// or smtps:// URL (smtp://user:password@host:587)')
  }
  if (config.publicUrl !== undefined && !/^https?:\/\/\S+$/.test(config.publicUrl)) {
    problems.push('ARENA_PUBLIC_URL must be an http(s) URL')
  }

  if (config.databaseUrl !== undefined && !/^postgres(ql)?:\/\/\S*$/.test(config.databaseUrl)) {
    problems.push('ARENA_DATABASE_URL must be a postgres:// or postgresql:// URL')
  }

  // The master key seals what PostgreSQL keeps for every instance. SQLite
  // keeps its secrets in the data dir, unsealed: a key set there would seal
  // nothing, and an operator could believe it does. Its value never appears
  // in a problem.
  const masterKeyText = given('ARENA_MASTER_KEY')
  if (config.databaseUrl !== undefined && masterKeyText === undefined && env.ARENA_MASTER_KEY === undefined) {
    problems.push(
      'ARENA_DATABASE_URL requires ARENA_MASTER_KEY: 32 random bytes as 64 hex digits or base64 (e.g. `openssl rand -hex 32`), ' +
        'the same on every instance; the signing keys, chain key and custody shares in the database are sealed under it',
    )
  }
  if (masterKeyText !== undefined) {
    if (config.databaseUrl === undefined) {
      problems.push(
        'ARENA_MASTER_KEY is only used with ARENA_DATABASE_URL (PostgreSQL); with SQLite the secrets and custody shares stay in the data dir, ' +
          'unsealed, so unset it (and protect the data dir) rather than believe it seals something',
      )
    } else {
      config.masterKey = MasterKey.decode(masterKeyText) ?? undefined
      if (config.masterKey === undefined) problems.push('ARENA_MASTER_KEY must be exactly 32 bytes, as 64 hex digits or base64 (e.g. `openssl rand -hex 32`)')
    }
  }

  // Scheduled backups: the archive holds every secret, so never unencrypted;
  // and they snapshot the SQLite data dir (PostgreSQL has pg_dump).
  if (config.backupDir !== undefined) {
    if (config.backupPassphrase === undefined) {
      problems.push('ARENA_BACKUP_DIR requires ARENA_BACKUP_PASSPHRASE: a backup holds the secrets and custody shares and is never written unencrypted')
    }
    if (config.databaseUrl !== undefined) {
      problems.push(
        'ARENA_BACKUP_DIR backs up the SQLite data dir; with ARENA_DATABASE_URL (PostgreSQL) use pg_dump and keep ARENA_MASTER_KEY instead (docs/operations.md, "Backup and restore")',
      )
    }
  } else {
    for (const name of ['ARENA_BACKUP_INTERVAL_S', 'ARENA_BACKUP_KEEP'] as const) {
      if (given(name) !== undefined) problems.push(`${name} only applies with ARENA_BACKUP_DIR (scheduled backups); set it or unset ${name}`)
    }
  }

  if (config.custody === 'cosigner' && config.cosignerUrl === undefined) {
    problems.push('ARENA_CUSTODY=cosigner requires ARENA_COSIGNER_URL')
  }
  if (config.cosignerUrl !== undefined && !/^https?:\/\/[^\s]+$/.test(config.cosignerUrl)) {
    problems.push('ARENA_COSIGNER_URL must be an http(s) URL')
  }
  if ((config.custody === 'cosigner' || config.cosignerSecret !== undefined) && (config.cosignerSecret ?? '').length < MIN_LENGTHS.ARENA_COSIGNER_SECRET.min) {
    problems.push(`ARENA_COSIGNER_SECRET must be at least ${MIN_LENGTHS.ARENA_COSIGNER_SECRET.min} characters`)
  }

  if (config.jwtSecret !== undefined && config.jwtSecret.length < MIN_LENGTHS.ARENA_JWT_SECRET.min) {
    problems.push(`ARENA_JWT_SECRET must be at least ${MIN_LENGTHS.ARENA_JWT_SECRET.min} characters`)
  }
  if (config.jwtPreviousSecret !== undefined) {
    if (config.jwtSecret === undefined) problems.push('ARENA_JWT_PREVIOUS_SECRET only makes sense beside ARENA_JWT_SECRET (the key it was replaced by)')
    else if (config.jwtPreviousSecret === config.jwtSecret) problems.push('ARENA_JWT_PREVIOUS_SECRET must differ from ARENA_JWT_SECRET')
    if (config.jwtPreviousSecret.length < MIN_LENGTHS.ARENA_JWT_PREVIOUS_SECRET.min) {
      problems.push(`ARENA_JWT_PREVIOUS_SECRET must be at least ${MIN_LENGTHS.ARENA_JWT_PREVIOUS_SECRET.min} characters`)
    }
  }

  // Production refuses what is only acceptable on a developer's machine:
  // a signing secret that was generated onto the data volume instead of being
  // provisioned, and a guessable operator token.
  if (config.env === 'production') {
    if (config.jwtSecret === undefined) {
      problems.push('ARENA_ENV=production requires ARENA_JWT_SECRET to be set (a generated secret is a local-only default)')
    }
    if (config.adminToken !== undefined && config.adminToken.length < MIN_LENGTHS.ARENA_ADMIN_TOKEN.min) {
      problems.push(`ARENA_ENV=production requires ARENA_ADMIN_TOKEN to be at least ${MIN_LENGTHS.ARENA_ADMIN_TOKEN.min} characters when set`)
    }
    if (config.metricsToken !== undefined && config.metricsToken.length < MIN_LENGTHS.ARENA_METRICS_TOKEN.min) {
      problems.push(`ARENA_ENV=production requires ARENA_METRICS_TOKEN to be at least ${MIN_LENGTHS.ARENA_METRICS_TOKEN.min} characters when set`)
    }
    if (config.logLevel === 'debug') {
      problems.push('ARENA_ENV=production refuses ARENA_LOG_LEVEL=debug')
    }
    // Custody `local` keeps all three key shares of every wallet under one data
    // dir: whoever copies that volume can sign. Fine for a demo, a choice to
    // make knowingly in production.
    if (config.custody === 'local' && !config.acceptSingleVolumeCustody) {
      problems.push(
        'ARENA_ENV=production with ARENA_CUSTODY=local keeps every wallet key share on one volume; ' +
          'use ARENA_CUSTODY=cosigner, or set ARENA_ACCEPT_SINGLE_VOLUME_CUSTODY=true to accept that risk',
      )
    }
  }

  if (problems.length > 0) throw new ConfigError(problems)
  return Object.freeze(config)
}
