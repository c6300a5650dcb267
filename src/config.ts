// The environment is read once, here, validated as a whole, and frozen.
// A bad value stops the process with one message naming every problem, so an
// operator fixes them in one go instead of one restart per typo.
import { LOG_LEVELS, type LogLevel } from './shared/logger'

export const ENVIRONMENTS = ['local', 'sandbox', 'staging', 'production'] as const
export type Environment = (typeof ENVIRONMENTS)[number]

export interface Config {
  env: Environment
  host: string
  port: number
  dataDir: string
  logLevel: LogLevel
  /** Operator token for /api/v1/admin; when unset that whole tree answers 404. */
  adminToken: string | undefined
  /** HS256 secret for access tokens; when unset, generated once and kept in the data dir. */
  jwtSecret: string | undefined
  accessTtlS: number
  refreshTtlS: number
  pinSessionTtlS: number
  gameSessionTtlS: number
  eventRetentionDays: number
  /** How long SIGTERM waits for in-flight requests before closing them. */
  shutdownGraceS: number
  /** Behind a reverse proxy: take the client address from X-Forwarded-For. */
  trustProxy: boolean
  /** Run background jobs (tournament finalization, ...) in this process. */
  jobsEnabled: boolean
  /** `local`: all shares in this data dir; `cosigner`: one share held by an `arena cosigner` process. */
  custody: 'local' | 'cosigner'
  /** Base URL of the paired co-signer (custody `cosigner`). */
  cosignerUrl: string | undefined
  /** Shared secret authenticating server ⇄ co-signer requests (both sides set the same value). */
  cosignerSecret: string | undefined
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

const INTS = {
  ARENA_PORT: { default: 8080, min: 0, max: 65535 },
  ARENA_ACCESS_TTL_S: { default: 900, min: 30, max: 86_400 },
  ARENA_REFRESH_TTL_S: { default: 30 * 86_400, min: 3600, max: 365 * 86_400 },
  ARENA_PIN_SESSION_TTL_S: { default: 300, min: 30, max: 3600 },
  ARENA_GAME_SESSION_TTL_S: { default: 1800, min: 60, max: 86_400 },
  ARENA_EVENT_RETENTION_DAYS: { default: 30, min: 1, max: 3650 },
  ARENA_SHUTDOWN_GRACE_S: { default: 10, min: 0, max: 300 },
} as const satisfies Record<string, IntSpec>

const STRINGS = [
  'ARENA_HOST',
  'ARENA_DATA_DIR',
  'ARENA_ENV',
  'ARENA_LOG_LEVEL',
  'ARENA_ADMIN_TOKEN',
  'ARENA_JWT_SECRET',
  'ARENA_TRUST_PROXY',
  'ARENA_JOBS_ENABLED',
  'ARENA_CUSTODY',
  'ARENA_COSIGNER_URL',
  'ARENA_COSIGNER_SECRET',
] as const

/** Every variable arena reads; any other ARENA_* name is a typo and refused. */
export const KNOWN_VARIABLES: readonly string[] = [...STRINGS, ...Object.keys(INTS)]

type Env = Record<string, string | undefined>

export function loadConfig(env: Env = process.env): Readonly<Config> {
  const problems: string[] = []

  for (const name of Object.keys(env)) {
    if (name.startsWith('ARENA_') && !KNOWN_VARIABLES.includes(name)) {
      problems.push(`${name} is not a setting arena knows (known: ${KNOWN_VARIABLES.join(', ')})`)
    }
  }

  const int = (name: keyof typeof INTS): number => {
    const spec: IntSpec = INTS[name]
    const raw = env[name]
    if (raw === undefined || raw === '') return spec.default
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

  const oneOf = <T extends string>(name: string, allowed: readonly T[], fallback: T): T => {
    const raw = env[name]
    if (raw === undefined || raw === '') return fallback
    if ((allowed as readonly string[]).includes(raw)) return raw as T
    problems.push(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`)
    return fallback
  }

  const flag = (name: string, fallback: boolean): boolean => {
    const raw = env[name]
    if (raw === undefined || raw === '') return fallback
    if (['1', 'true', 'yes'].includes(raw.toLowerCase())) return true
    if (['0', 'false', 'no'].includes(raw.toLowerCase())) return false
    problems.push(`${name} must be true or false, got "${raw}"`)
    return fallback
  }

  const optional = (name: string): string | undefined => {
    const raw = env[name]
    return raw === undefined || raw === '' ? undefined : raw
  }

  const config: Config = {
    env: oneOf('ARENA_ENV', ENVIRONMENTS, 'local'),
    host: optional('ARENA_HOST') ?? '0.0.0.0',
    port: int('ARENA_PORT'),
    dataDir: optional('ARENA_DATA_DIR') ?? './data',
    logLevel: oneOf('ARENA_LOG_LEVEL', LOG_LEVELS, 'info'),
    adminToken: optional('ARENA_ADMIN_TOKEN'),
    jwtSecret: optional('ARENA_JWT_SECRET'),
    accessTtlS: int('ARENA_ACCESS_TTL_S'),
    refreshTtlS: int('ARENA_REFRESH_TTL_S'),
    pinSessionTtlS: int('ARENA_PIN_SESSION_TTL_S'),
    gameSessionTtlS: int('ARENA_GAME_SESSION_TTL_S'),
    eventRetentionDays: int('ARENA_EVENT_RETENTION_DAYS'),
    shutdownGraceS: int('ARENA_SHUTDOWN_GRACE_S'),
    trustProxy: flag('ARENA_TRUST_PROXY', false),
    jobsEnabled: flag('ARENA_JOBS_ENABLED', true),
    custody: oneOf('ARENA_CUSTODY', ['local', 'cosigner'] as const, 'local'),
    cosignerUrl: optional('ARENA_COSIGNER_URL'),
    cosignerSecret: optional('ARENA_COSIGNER_SECRET'),
  }

  if (config.custody === 'cosigner' && config.cosignerUrl === undefined) {
    problems.push('ARENA_CUSTODY=cosigner requires ARENA_COSIGNER_URL')
  }
  if (config.cosignerUrl !== undefined && !/^https?:\/\/[^\s]+$/.test(config.cosignerUrl)) {
    problems.push('ARENA_COSIGNER_URL must be an http(s) URL')
  }
  if ((config.custody === 'cosigner' || config.cosignerSecret !== undefined) && (config.cosignerSecret ?? '').length < MIN_SECRET_LENGTH) {
    problems.push(`ARENA_COSIGNER_SECRET must be at least ${MIN_SECRET_LENGTH} characters`)
  }

  if (config.jwtSecret !== undefined && config.jwtSecret.length < MIN_SECRET_LENGTH) {
    problems.push(`ARENA_JWT_SECRET must be at least ${MIN_SECRET_LENGTH} characters`)
  }

  // Production refuses what is only acceptable on a developer's machine:
  // a signing secret that was generated onto the data volume instead of being
  // provisioned, and a guessable operator token.
  if (config.env === 'production') {
    if (config.jwtSecret === undefined) {
      problems.push('ARENA_ENV=production requires ARENA_JWT_SECRET to be set (a generated secret is a local-only default)')
    }
    if (config.adminToken !== undefined && config.adminToken.length < MIN_SECRET_LENGTH) {
      problems.push(`ARENA_ENV=production requires ARENA_ADMIN_TOKEN to be at least ${MIN_SECRET_LENGTH} characters when set`)
    }
    if (config.logLevel === 'debug') {
      problems.push('ARENA_ENV=production refuses ARENA_LOG_LEVEL=debug')
    }
  }

  if (problems.length > 0) throw new ConfigError(problems)
  return Object.freeze(config)
}
