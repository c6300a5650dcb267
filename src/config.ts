// The environment is read once, here, validated as a whole, and frozen.
// A bad value stops the process with one message naming every problem, so an
// operator fixes them in one go instead of one restart per typo.
//
// Every setting is declared once, in SETTINGS below: its name, the Config key
// it fills, how its text is read, its default, its bounds and its words. The
// Config type, loadConfig's reading, `arena --help` (helpLine) and the README's
// Configuration table (`npm run docs:settings`, checked fresh by
// test/platform/config.test.ts) all derive from that one table. What relates
// two settings (production's refusals, a key that needs a URL) follows it in
// loadConfig, as rules over the values read.
import { LOG_LEVELS } from './shared/logger'
import { MasterKey } from './shared/sealed'
import { MoneyFormatError, parseAmount, parsePositiveAmount, USDC } from './shared/money'
import { INTEGRITY_SIGNALS, type IntegritySignal } from './modules/integrity/store'
import { Secret } from './shared/secret'
import { parseRateLimits } from './shared/rate-limit'
import { parseOidcProviders, parseOidcRedirects } from './modules/auth/oidc/settings'

export const ENVIRONMENTS = ['local', 'sandbox', 'staging', 'production'] as const
export type Environment = (typeof ENVIRONMENTS)[number]

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`)
    this.name = 'ConfigError'
  }
}

/** Secrets shorter than this are refused where it matters (production, HS256 keys). */
export const MIN_SECRET_LENGTH = 32

/** What a setting's reader may consult: its own name, the problems so far, and the settings read before it. */
interface ReadContext {
  readonly name: string
  readonly problems: string[]
  /** The settings above this one in SETTINGS, already read (ARENA_HOST's default depends on ARENA_ENV). */
  readonly before: Readonly<Record<string, unknown>>
}

/** One row of the table: everything arena knows about one ARENA_* variable. */
interface Setting<K extends string, T> {
  /** The Config field it fills. */
  readonly key: K
  /** Its meaning in one line, for `arena --help` (the default and bounds are added). */
  readonly help: string
  /** Its meaning in the README's table (Markdown; the default and bounds have their own columns). */
  readonly doc: string
  /** The default, in Markdown (`` `8080` ``, `unset (no limit)`); `arena --help` prints it without the marks. */
  readonly defaultText: string
  /** The values it accepts, in words for `arena --help` and in Markdown for the README; none for free text. */
  readonly bounds?: { readonly help: string; readonly doc: string }
  /** Reads the value (undefined: unset), pushing a problem and returning a fallback when it is bad. */
  read(raw: string | undefined, context: ReadContext): T
}

interface Words<K extends string> {
  key: K
  help: string
  doc: string
}

/** A whole number: a default and the range a value must fall in. */
export interface IntSpec {
  default: number
  min: number
  max: number
}

function int<K extends string>(spec: Words<K> & IntSpec & { note?: string }): Setting<K, number> & { int: IntSpec } {
  const range = `${spec.min} to ${spec.max}`
  return {
    key: spec.key,
    help: spec.help,
    doc: spec.doc,
    defaultText: `\`${spec.default}\`${spec.note ? ` (${spec.note})` : ''}`,
    bounds: { help: range, doc: range },
    int: { default: spec.default, min: spec.min, max: spec.max },
    read(raw, { name, problems }) {
      if (raw === undefined) return spec.default
      if (!/^[0-9]+$/.test(raw.trim())) {
        problems.push(`${name} must be a whole number, got "${raw}"`)
        return spec.default
      }
      const value = Number(raw.trim())
      if (value < spec.min || value > spec.max) problems.push(`${name} must be between ${spec.min} and ${spec.max}, got ${value}`)
      return value
    },
  }
}

/** One of a few words. */
function choice<K extends string, const V extends readonly string[]>(
  spec: Words<K> & { values: V; default: V[number] },
): Setting<K, V[number]> & { choice: { values: V; default: V[number] } } {
  const quoted = spec.values.map((value) => `\`${value}\``)
  return {
    key: spec.key,
    help: spec.help,
    doc: spec.doc,
    defaultText: `\`${spec.default}\``,
    bounds: { help: spec.values.join(' | '), doc: `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}` },
    choice: { values: spec.values, default: spec.default },
    read(raw, { name, problems }) {
      if (raw === undefined) return spec.default
      if ((spec.values as readonly string[]).includes(raw)) return raw as V[number]
      problems.push(`${name} must be one of ${spec.values.join(', ')}, got "${raw}"`)
      return spec.default
    },
  }
}

/** The words a boolean setting takes, in any case: what unit files, compose files and shell habits write. */
export const BOOLEAN_WORDS = { true: ['true', '1', 'yes', 'on'], false: ['false', '0', 'no', 'off'] } as const

/** A boolean setting's value, or undefined when it is none of BOOLEAN_WORDS. */
export function parseBoolean(raw: string): boolean | undefined {
  const word = raw.trim().toLowerCase()
  if ((BOOLEAN_WORDS.true as readonly string[]).includes(word)) return true
  if ((BOOLEAN_WORDS.false as readonly string[]).includes(word)) return false
  return undefined
}

/** true or false; the default may depend on the settings above (ARENA_REQUIRE_VERIFIED_EMAIL on ARENA_ENV). */
function flag<K extends string>(
  spec: Words<K> & ({ default: boolean } | { default: (before: Readonly<Record<string, unknown>>) => boolean; defaultText: string }),
): Setting<K, boolean> {
  return {
    key: spec.key,
    help: spec.help,
    doc: spec.doc,
    defaultText: typeof spec.default === 'boolean' ? `\`${spec.default}\`` : (spec as { defaultText: string }).defaultText,
    bounds: {
      help: `${BOOLEAN_WORDS.true.join(', ')} / ${BOOLEAN_WORDS.false.join(', ')}`,
      doc: `\`true\` or \`false\` (${[...BOOLEAN_WORDS.true.slice(1), ...BOOLEAN_WORDS.false.slice(1)].map((word) => `\`${word}\``).join(', ')} too, any case)`,
    },
    read(raw, { name, problems, before }) {
      const fallback = typeof spec.default === 'boolean' ? spec.default : spec.default(before)
      if (raw === undefined) return fallback
      const value = parseBoolean(raw)
      if (value !== undefined) return value
      problems.push(`${name} must be true or false (${BOOLEAN_WORDS.true.join(', ')} / ${BOOLEAN_WORDS.false.join(', ')}, any case), got "${raw}"`)
      return fallback
    },
  }
}

/** The shortest length of a secret or token: always, or only in one environment (checked among loadConfig's rules). */
export interface MinLength {
  min: number
  only: Environment | undefined
}

/** The bounds of a text setting said in words (Markdown): `an http(s) URL`. */
function accepting(accepts: string | undefined): { bounds?: { help: string; doc: string } } {
  return accepts === undefined ? {} : { bounds: { help: plain(accepts), doc: accepts } }
}

/** Free text, unset when absent: a URL, a token, a path. */
function text<K extends string>(
  spec: Words<K> & { defaultText?: string; minLength?: MinLength; accepts?: string; tidy?: (value: string) => string },
): Setting<K, string | undefined> & { minLength: MinLength | undefined } {
  const minLength = spec.minLength
  return {
    key: spec.key,
    help: spec.help,
    doc: spec.doc,
    defaultText: spec.defaultText ?? 'unset',
    ...accepting(spec.accepts),
    ...(minLength && {
      bounds: {
        help: `at least ${minLength.min} characters${minLength.only ? ` in ${minLength.only}` : ''}`,
        doc: `at least ${minLength.min} characters${minLength.only ? ` in \`${minLength.only}\`` : ''}`,
      },
    }),
    minLength,
    read: (raw) => (raw === undefined || spec.tidy === undefined ? raw : spec.tidy(raw)),
  }
}

/** Free text with a default, which may depend on the settings above (ARENA_HOST on ARENA_ENV). */
function textOr<K extends string>(
  spec: Words<K> & { accepts?: string } & ({ default: string } | { default: (before: Readonly<Record<string, unknown>>) => string; defaultText: string }),
): Setting<K, string> {
  return {
    key: spec.key,
    help: spec.help,
    doc: spec.doc,
    defaultText: typeof spec.default === 'string' ? `\`${spec.default}\`` : (spec as { defaultText: string }).defaultText,
    ...accepting(spec.accepts),
    read: (raw, { before }) => raw ?? (typeof spec.default === 'string' ? spec.default : spec.default(before)),
  }
}

/** A secret kept as a Secret, so that it prints as `[redacted]`. */
function secret<K extends string>(spec: Words<K>): Setting<K, Secret | undefined> {
  return { key: spec.key, help: spec.help, doc: spec.doc, defaultText: 'unset', read: (raw) => (raw === undefined ? undefined : new Secret(raw)) }
}

/**
 * A USDC amount in the money grammar, positive, in minor units once read: 0
 * would read as either "no withdrawals" or "no limit", so it is refused and
 * unset means no limit.
 */
function amount<K extends string>(spec: Words<K> & { defaultText: string }): Setting<K, bigint | undefined> & { amount: true } {
  return {
    key: spec.key,
    help: spec.help,
    doc: spec.doc,
    defaultText: spec.defaultText,
    bounds: { help: `a positive ${USDC.code} amount, at most ${USDC.decimals} decimals`, doc: `a positive ${USDC.code} amount, at most ${USDC.decimals} decimals` },
    amount: true,
    read(raw, { name, problems }) {
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
    },
  }
}

/**
 * Every variable arena reads, in the order `arena --help` and the README list
 * them. Any other ARENA_* name is a typo and refused.
 */
export const SETTINGS = {
  ARENA_ENV: choice({
    key: 'env',
    values: ENVIRONMENTS,
    default: 'local',
    help: 'the kind of deployment; production refuses local-only defaults',
    doc: 'the kind of deployment: `production` refuses the local-only defaults (see below)',
  }),
  ARENA_HOST: textOr({
    key: 'host',
    accepts: 'an IP address or host name',
    // `local` listens on loopback only: `arena seed` prints a password and PIN
    // shared by every seeded player, and a laptop on a shared network should
    // not serve them. Every other environment (and the Docker image, which sets
    // ARENA_HOST=0.0.0.0) listens on all interfaces.
    default: (before) => (before.env === 'local' ? '127.0.0.1' : '0.0.0.0'),
    defaultText: '`127.0.0.1` in `local`, `0.0.0.0` elsewhere',
    help: 'address to listen on',
    doc: 'address to listen on. `local` stays on loopback because `arena seed` prints a password and PIN every seeded player shares; the Docker image sets `0.0.0.0`',
  }),
  ARENA_PORT: int({
    key: 'port',
    default: 8080,
    min: 0,
    max: 65535,
    help: 'port to listen on; 0 picks a free one',
    doc: 'port to listen on (`0`: any free port, printed in the `listening` log line)',
  }),
  ARENA_DATA_DIR: textOr({
    key: 'dataDir',
    accepts: 'a path',
    default: './data',
    help: 'database, generated secrets and custody shares',
    doc: 'where the SQLite database (`arena.sqlite`), generated secrets (`secrets.json`) and custody shares live; created with mode 0700',
  }),
  ARENA_LOG_LEVEL: choice({ key: 'logLevel', values: LOG_LEVELS, default: 'info', help: 'the least severe log line written', doc: 'the least severe log line written (JSON lines on stdout)' }),
  ARENA_ADMIN_TOKEN: text({
    key: 'adminToken',
    minLength: { min: MIN_SECRET_LENGTH, only: 'production' },
    help: 'operator token for /api/v1/admin (x-admin-token); local generates one, elsewhere unset disables the operator API',
    doc: 'operator token for `/api/v1/admin/...` (header `x-admin-token`). Unset in `local`: one is generated once into the data dir, printed at start when stderr is a terminal (never in the JSON log) and by `arena admin-token`. Unset elsewhere: the whole tree answers 404 `operator_api_disabled`',
  }),
  ARENA_METRICS_TOKEN: text({
    key: 'metricsToken',
    minLength: { min: MIN_SECRET_LENGTH, only: 'production' },
    help: 'bearer token for GET /metrics (Prometheus); unset answers 404',
    doc: 'bearer token for `GET /metrics` (Prometheus text format, [docs/operations.md](docs/operations.md#monitoring)); unset: `/metrics` answers 404',
  }),
  ARENA_JWT_SECRET: text({
    key: 'jwtSecret',
    defaultText: 'generated into the data dir',
    minLength: { min: MIN_SECRET_LENGTH, only: undefined },
    help: 'access-token signing key; required in production',
    doc: 'HS256 access-token signing key; when set it replaces the data dir\'s keys. Required in `production`',
  }),
  ARENA_JWT_PREVIOUS_SECRET: text({
    key: 'jwtPreviousSecret',
    minLength: { min: MIN_SECRET_LENGTH, only: undefined },
    help: 'the signing key ARENA_JWT_SECRET replaced: its tokens still verify until they expire',
    doc: 'the value `ARENA_JWT_SECRET` had before you changed it: tokens it signed keep verifying (see [Signing keys](#signing-keys)); not the same as `ARENA_JWT_SECRET`',
  }),
  ARENA_ACCESS_TTL_S: int({
    key: 'accessTtlS',
    default: 900,
    min: 30,
    max: 86_400,
    note: '15 min',
    help: 'access-token lifetime in seconds',
    doc: 'access-token lifetime in seconds',
  }),
  ARENA_REFRESH_TTL_S: int({
    key: 'refreshTtlS',
    default: 30 * 86_400,
    min: 3600,
    max: 365 * 86_400,
    note: '30 days',
    help: 'auth-session lifetime in seconds',
    doc: 'refresh-token absolute lifetime in seconds (an hour to a year)',
  }),
  ARENA_REFRESH_REUSE_GRACE_S: int({
    key: 'refreshReuseGraceS',
    default: 10,
    min: 0,
    max: 300,
    help: 'a spent refresh token sent again this soon is a retry, not a replay (0 disables)',
    doc: 'a spent refresh token presented again this soon after its rotation is a retry, not a replay, in seconds (`0` turns the grace off)',
  }),
  ARENA_GUEST_CREATE_PER_HOUR: int({
    key: 'guestCreatePerHour',
    default: 20,
    min: 1,
    max: 1_000_000,
    help: 'accounts one client address may create per hour by a first sign-in (guest, OpenID Connect, Steam)',
    doc: 'accounts one client address may create per hour by signing in with `create` (a guest, an OpenID Connect or a Steam identity); more answer 429 with `Retry-After`',
  }),
  ARENA_PIN_SESSION_TTL_S: int({ key: 'pinSessionTtlS', default: 300, min: 30, max: 3600, help: 'PIN-session lifetime in seconds', doc: 'PIN-session lifetime in seconds' }),
  ARENA_OPERATOR_SESSION_TTL_S: int({
    key: 'operatorSessionTtlS',
    default: 28_800,
    min: 300,
    max: 604_800,
    note: '8 h',
    help: "an operator's console or API session lives this long from sign-in, in seconds",
    doc: "how long a named operator's session (console cookie or API bearer from `POST /api/v1/admin/sessions`) lives from sign-in, in seconds; it ends earlier at sign-out, when the operator is disabled or its password reset ([docs/operators.md](docs/operators.md#signing-in-the-console-and-the-api))",
  }),
  ARENA_DEVICE_CODE_TTL_S: int({
    key: 'deviceCodeTtlS',
    default: 600,
    min: 60,
    max: 3600,
    note: '10 min',
    help: 'how long a device code (sign-in on a TV or console, RFC 8628) waits for the player, in seconds',
    doc: 'how long a device code from `POST /api/v1/auth/device-code` waits for the player to approve it on the `/device` page, in seconds (contract §13; [docs/identities.md](docs/identities.md#devices-without-a-keyboard))',
  }),
  ARENA_SOCKETS_PER_USER: int({
    key: 'socketsPerUser',
    default: 5,
    min: 1,
    max: 100,
    help: 'WebSockets one account may hold open on this instance (contract §14); one more is closed with 4029',
    doc: 'how many event-plane WebSockets (`GET /api/v1/events/socket`) one account may hold open on one instance; the next is closed with code 4029 (contract §14; [docs/api.md](docs/api.md#realtime-the-event-plane-over-a-websocket))',
  }),
  ARENA_SOCKETS_MAX: int({
    key: 'socketsMax',
    default: 10_000,
    min: 1,
    max: 1_000_000,
    help: 'WebSockets this instance holds open at most (contract §14); one more is closed with 4029',
    doc: 'how many event-plane WebSockets one instance holds open at most, whoever holds them; the next is closed with code 4029 (contract §14). An idle socket costs about 9 KiB of server memory ([docs/performance.md](docs/performance.md#event-sockets-issue-37))',
  }),
  ARENA_SOCKET_SLOW_S: int({
    key: 'socketSlowS',
    default: 10,
    min: 1,
    max: 300,
    help: 'a WebSocket whose reader has not taken what was sent for this long, with more events waiting, is closed with 4008',
    doc: 'how long, in seconds, an event-plane WebSocket may stay behind (its reader has not taken the last frame sent) while more events wait for it; then it is closed with code 4008 and the client resumes from its cursor (contract §14). What a socket holds in memory is bounded by one frame meanwhile',
  }),
  ARENA_GAME_SESSION_TTL_S: int({ key: 'gameSessionTtlS', default: 1800, min: 60, max: 86_400, help: 'game-session lifetime in seconds', doc: 'game (match) session lifetime in seconds' }),
  ARENA_EVENT_RETENTION_DAYS: int({
    key: 'eventRetentionDays',
    default: 30,
    min: 1,
    max: 3650,
    help: 'days the event plane keeps events',
    doc: 'how many days the event plane keeps events',
  }),
  ARENA_EVIDENCE_RETENTION_DAYS: int({
    key: 'evidenceRetentionDays',
    default: 180,
    min: 1,
    max: 3650,
    help: 'days evidence files of a match no longer disputed are kept',
    doc: 'how many days the files players attached to a dispute (contract §17) are kept once their match is no longer disputed (counted from each upload); hourly housekeeping then deletes them, and the stored bytes no file references',
  }),
  ARENA_SECURITY_LOG_RETENTION_DAYS: int({
    key: 'securityLogRetentionDays',
    default: 90,
    min: 1,
    max: 3650,
    help: "days the security-event log keeps an event before housekeeping cuts the chain's old end",
    doc: "how long the security-event log keeps an event (the server's and the clients' reports) before hourly housekeeping cuts the chain's old end; the chain still verifies; in days",
  }),
  // 8 s: a graceful stop (grace, then closing the database) fits inside the
  // 10 s that `docker stop` and Kubernetes give before SIGKILL.
  ARENA_SHUTDOWN_GRACE_S: int({
    key: 'shutdownGraceS',
    default: 8,
    min: 0,
    max: 300,
    help: 'seconds a graceful stop waits for in-flight requests',
    doc: 'how long a graceful stop waits for in-flight requests, in seconds',
  }),
  ARENA_TRUST_PROXY: flag({
    key: 'trustProxy',
    default: false,
    help: 'true behind one reverse proxy: client address from X-Forwarded-For',
    doc: 'behind one reverse proxy: take the client address (for login throttling and rate limits) from the right-most `X-Forwarded-For` entry, the one the proxy appended. Leave off when clients reach arena directly, or they can pick their own address',
  }),
  ARENA_RATE_LIMITS: {
    key: 'rateLimits',
    defaultText: 'the limits in [docs/api.md](docs/api.md#rate-limits)',
    ...accepting('JSON'),
    help: 'overrides the rate limits by route group, e.g. {"player-read":{"account":{"limit":600,"windowS":60}}} or {"*":false} for none',
    doc: 'overrides the rate limits by route group, per address, account or game: `{"player-read":{"account":{"limit":600,"windowS":60}}}`; `false` for a group, a dimension or `"*"` (every group) switches it off. Checked at start-up',
    /** The rate limits in force by route group: the defaults with ARENA_RATE_LIMITS applied (contract §20). */
    read: (raw: string | undefined, { problems }: ReadContext) => parseRateLimits(raw, problems),
  },
  ARENA_JOBS_ENABLED: flag({
    key: 'jobsEnabled',
    default: true,
    help: 'run background jobs in this process',
    doc: 'run background jobs (tournament finalization) in this server; `false` leaves them queued in the database',
  }),
  ARENA_CUSTODY: choice({
    key: 'custody',
    values: ['local', 'cosigner'],
    default: 'local',
    help: 'local: all key shares in the data dir; cosigner: one share held by an `arena cosigner`',
    doc: '`local`: all three key shares in this data dir; `cosigner`: one share held by a separate `arena cosigner` process',
  }),
  ARENA_COSIGNER_URL: text({
    key: 'cosignerUrl',
    accepts: 'an `http(s)://` URL',
    help: 'base URL of the `arena cosigner` (custody cosigner)',
    doc: "the co-signer's base URL (custody `cosigner`)",
  }),
  ARENA_COSIGNER_SECRET: text({
    key: 'cosignerSecret',
    minLength: { min: MIN_SECRET_LENGTH, only: undefined },
    help: 'shared secret of server and co-signer',
    doc: 'shared secret authenticating server ⇄ co-signer requests (the same value on both)',
  }),
  ARENA_ACCEPT_SINGLE_VOLUME_CUSTODY: flag({
    key: 'acceptSingleVolumeCustody',
    default: false,
    help: 'true lets production run with custody local (every key share on one volume)',
    doc: '`true` lets `production` run with custody `local`, all three key shares of every wallet on one volume (a warning is logged at every start)',
  }),
  ARENA_DATABASE_URL: text({
    key: 'databaseUrl',
    accepts: 'a `postgres://` or `postgresql://` URL',
    defaultText: 'unset (SQLite in the data dir)',
    help: 'postgres://user:password@host:5432/db to keep the data in PostgreSQL 15+',
    doc: '`postgres://user:password@host:5432/db`: keep the data in PostgreSQL 15+ instead of SQLite in the data dir, so several instances can share it',
  }),
  ARENA_DATABASE_POOL: int({ key: 'databasePool', default: 10, min: 1, max: 1000, help: 'connections each instance opens to PostgreSQL', doc: 'connections each instance opens to PostgreSQL' }),
  ARENA_DATABASE_PREPARE: flag({
    key: 'databasePrepare',
    default: true,
    help: 'named prepared statements on PostgreSQL; false behind a pooler that cannot keep them',
    doc: 'run statements on PostgreSQL as named prepared statements (one round trip each, planned once per connection). Set `false` behind a connection pooler in transaction mode that does not keep prepared statements (PgBouncer before 1.21, or with `max_prepared_statements` 0); statements then take two round trips each',
  }),
  ARENA_MASTER_KEY: {
    key: 'masterKey',
    defaultText: 'unset',
    ...accepting('32 bytes: 64 hex digits or base64'),
    help: 'with ARENA_DATABASE_URL, required: 32 random bytes (64 hex digits or base64) sealing the secrets kept in the database; the same on every instance',
    doc: 'required with `ARENA_DATABASE_URL`, refused without it: 32 random bytes as 64 hex digits or base64 (`openssl rand -hex 32`), the same on every instance. The signing keys, the chain key, the operator token and the custody shares the server holds are kept in the database sealed under it (AES-256-GCM): a dump without it reveals none. Lose it and they are lost with it',
    // Decoded only beside a database URL: with SQLite a key would seal
    // nothing, and loadConfig's rules refuse it (and one that does not
    // decode). It prints as `[master key]`.
    read: (raw: string | undefined, { before }: ReadContext): MasterKey | undefined =>
      raw === undefined || before.databaseUrl === undefined ? undefined : (MasterKey.decode(raw) ?? undefined),
  },
  ARENA_SMTP_URL: text({
    key: 'smtpUrl',
    accepts: 'an `smtp://` or `smtps://` URL',
    help: 'smtp://user:password@host:587 or smtps://…:465, the server mail is sent through (without one, local keeps mail in a dev mailbox)',
    doc: '`smtp://user:password@host:587` (STARTTLS when offered) or `smtps://user:password@host:465`: the server verification and reset codes are mailed through. Unset in `local`: mail is kept in a dev mailbox (`GET /api/v1/admin/dev/mail`, `arena mail list`); unset elsewhere: forgot and resend answer 503 `mail_not_configured`',
  }),
  ARENA_MAIL_FROM: textOr({ key: 'mailFrom', accepts: 'a mail address, with a name or without', default: 'arena <no-reply@localhost>', help: 'From address of the mail arena sends', doc: 'the From of that mail' }),
  ARENA_PUBLIC_URL: text({
    key: 'publicUrl',
    accepts: 'an `http(s)://` URL',
    help: "base URL of the studio's site, for links in mail (without it, mail carries the code alone)",
    doc: "base URL of the studio's site: mail then links to `<url>/verify-email#code=…` and `<url>/reset-password#email=…&code=…` beside the code (in the fragment, so neither reaches the site's access logs; the page reads `location.hash`)",
    tidy: (value) => value.replace(/\/+$/, ''),
  }),
  ARENA_SERVER_URL: text({
    key: 'serverUrl',
    accepts: 'an `http(s)://` URL',
    defaultText: "unset (the request's own origin)",
    help: "arena's own base URL as players' browsers reach it (https://api.example.com), for the OpenID Connect callback",
    doc: "arena's own base URL as players' browsers reach it (`https://api.example.com`, behind any proxy): the OpenID Connect web flow's `redirect_uri` is `<url>/api/v1/auth/oidc/<name>/callback`, the address registered with each provider ([docs/identities.md](docs/identities.md)). Unset: the origin of the request that started the flow",
    tidy: (value) => value.replace(/\/+$/, ''),
  }),
  ARENA_OIDC_PROVIDERS: {
    key: 'oidcProviders',
    defaultText: 'unset (none)',
    ...accepting('JSON'),
    help: 'the OpenID Connect providers players sign in with: a JSON list of {"name","issuer","clientId","clientSecret"?}',
    doc: 'the OpenID Connect providers players sign in with (Google, Apple, Microsoft, Epic, Twitch or any issuer): a JSON list of `{"name":"google","issuer":"https://accounts.google.com","clientId":"…","clientSecret":"…"}`; `name` (1 to 32 of `a-z0-9_-`, unique) is the `{provider}` of the routes, `clientSecret` is needed for the web flow only, `nativeClientIds` (optional) lists the client ids of native apps whose ID tokens are accepted too (Apple\'s bundle ID beside its Services ID). Checked at start-up; the issuer is contacted at the first sign-in ([docs/identities.md](docs/identities.md))',
    /** The configured providers (contract §13). */
    read: (raw: string | undefined, { problems }: ReadContext) => parseOidcProviders(raw, problems),
  },
  ARENA_OIDC_REDIRECTS: {
    key: 'oidcRedirects',
    defaultText: 'unset (no web sign-in)',
    ...accepting('comma-separated URL prefixes'),
    help: 'where the OpenID Connect web flow may send the player back: comma-separated URL prefixes, e.g. https://game.example.com/,mygame://',
    doc: 'where the OpenID Connect web flow may send the player back (`redirect` of `GET /api/v1/auth/oidc/{provider}/start` must start with one): comma-separated prefixes, `https://game.example.com/` (the slash after the host is required) or an app\'s scheme `mygame://signin`',
    /** The allowed `redirect` prefixes. */
    read: (raw: string | undefined, { problems }: ReadContext) => parseOidcRedirects(raw, problems),
  },
  ARENA_PRODUCT_NAME: textOr({ key: 'productName', default: 'arena', help: 'the name mail calls the service by', doc: 'the name the mail calls the service by' }),
  ARENA_REQUIRE_VERIFIED_EMAIL: flag({
    key: 'requireVerifiedEmail',
    default: (before) => before.env === 'production',
    defaultText: '`true` in production, else `false`',
    help: 'true: a PIN verify needs a verified email',
    doc: 'a PIN verify (a withdrawal) of an account whose email is not verified answers 403 `email_not_verified`, consuming nothing (contract §8)',
  }),
  // Steam sign-in (contract §13): a session ticket checked with the Steam Web API.
  ARENA_STEAM_APP_ID: text({
    key: 'steamAppId',
    accepts: 'a Steam app id (a whole number)',
    defaultText: 'unset (no Steam sign-in)',
    help: 'the Steam app id of the game; with ARENA_STEAM_WEB_API_KEY turns Steam sign-in on',
    doc: 'the game\'s Steam app id (Steamworks partner site). With `ARENA_STEAM_WEB_API_KEY` it turns Steam sign-in on (`POST /api/v1/user/login/steam`, [docs/identities.md](docs/identities.md#steam)); without both that route answers 404 `not_found`',
  }),
  ARENA_STEAM_WEB_API_KEY: secret({
    key: 'steamWebApiKey',
    help: "a publisher Web API key of the game's Steamworks group, for ISteamUserAuth/AuthenticateUserTicket; never printed or logged",
    doc: "a **publisher** Web API key of the Steamworks group that owns the game (Users & Permissions → Manage Groups → the group's Web API key), which `ISteamUserAuth/AuthenticateUserTicket` needs. Steam takes it in the query string: arena never logs that URL, and never prints the key",
  }),
  ARENA_STEAM_IDENTITY: textOr({
    key: 'steamIdentity',
    accepts: '1 to 128 printable ASCII characters, no spaces',
    default: 'arena',
    help: 'the identity string the game passes to GetAuthTicketForWebApi; Steam refuses a ticket made for another',
    doc: 'the identity string the game passes to Steamworks\' `GetAuthTicketForWebApi`: a ticket made for another identity is refused by Steam (401 `invalid_credentials`)',
  }),
  ARENA_STEAM_API_URL: textOr({
    key: 'steamApiUrl',
    accepts: 'an `http(s)://` URL (`https://` in production)',
    default: 'https://partner.steam-api.com',
    help: 'base URL of the Steam Web API (the publisher endpoint)',
    doc: "base URL of the Steam Web API: the publisher endpoint, which a publisher key needs. Change it only to point at a stand-in (tests) or a proxy of your own",
  }),
  ARENA_STEAM_TIMEOUT_MS: int({
    key: 'steamTimeoutMs',
    default: 5000,
    min: 50,
    max: 60_000,
    note: '5 s',
    help: 'how long a Steam sign-in waits for the Steam Web API before answering 503, in milliseconds',
    doc: 'how long a Steam sign-in waits for the Steam Web API, in milliseconds; past it the sign-in answers 503 `service_unavailable` and writes nothing',
  }),
  ARENA_WEBHOOKS_ALLOW_PRIVATE: flag({
    key: 'webhooksAllowPrivate',
    default: false,
    help: 'true: webhooks may go to private, loopback and link-local addresses',
    doc: 'let webhook endpoints resolve to private, loopback, link-local or other non-public addresses (a studio backend on premises, tests); off, such a destination is refused when an endpoint is created and again at every delivery attempt (docs/webhooks.md)',
  }),
  ARENA_WITHDRAWAL_MAX: amount({
    key: 'withdrawalMax',
    defaultText: 'unset (no limit)',
    help: 'the largest single withdrawal, a USDC amount such as "1000" or "250.5"',
    doc: 'the largest single withdrawal, in the money grammar (`1000`, `250.5`). A larger one answers 422 `withdrawal_limit`, consuming nothing',
  }),
  ARENA_WITHDRAWAL_DAILY_MAX: amount({
    key: 'withdrawalDailyMax',
    defaultText: 'unset (no limit)',
    help: 'the most one user may withdraw in any 24 hours, a USDC amount',
    doc: 'the most one user may withdraw in any 24 hours: the user\'s withdrawals of the last 24 hours that were not refused by custody (and so reversed), plus the new one, may not exceed it; otherwise 422 `withdrawal_limit`, consuming nothing (see [docs/decisions.md](docs/decisions.md#withdrawal-limits-issue-20))',
  }),
  ARENA_WITHDRAWAL_APPROVAL_ABOVE: amount({
    key: 'withdrawalApprovalAbove',
    defaultText: 'unset (none)',
    help: 'a withdrawal strictly above this USDC amount waits for an operator to approve it',
    doc: 'a withdrawal strictly above it is `awaiting_approval` (debited, not signed) until an operator approves it (`POST /api/v1/admin/withdrawals/{id}/approve`) or rejects it (`…/reject`, the amount returned)',
  }),
  ARENA_NEW_DESTINATION_HOLD_S: int({
    key: 'newDestinationHoldS',
    default: 0,
    min: 0,
    max: 30 * 86_400,
    note: 'no hold',
    help: 'seconds the first withdrawal to a new address is held before it is signed',
    doc: 'seconds the first withdrawal of a user to an address they have no signed withdrawal to is `held` before it is signed by a job (up to 30 days; see [docs/decisions.md](docs/decisions.md#withdrawal-approval-and-the-new-destination-hold-issue-20))',
  }),
  ARENA_INTEGRITY_SIGNALS: {
    key: 'integritySignals',
    defaultText: 'every signal',
    bounds: { help: `a comma list of ${INTEGRITY_SIGNALS.join(', ')}, or none`, doc: `a comma list of ${INTEGRITY_SIGNALS.map((s) => `\`${s}\``).join(', ')}; \`none\` for none` },
    help: 'the integrity signals evaluated when a staked or prize match is decided with a win',
    doc: 'the integrity signals evaluated when a staked match or a match of a prize tournament is decided with a win; a raised one flags the match and holds the winner\'s payout for an operator (see [docs/integrity.md](docs/integrity.md#signals))',
    /** The signals switched on, in INTEGRITY_SIGNALS order. */
    read(raw: string | undefined, { name, problems }: ReadContext): readonly IntegritySignal[] {
      if (raw === undefined) return INTEGRITY_SIGNALS
      if (raw.trim() === 'none') return []
      const words = raw.split(',').map((word) => word.trim())
      const unknown = words.filter((word) => !(INTEGRITY_SIGNALS as readonly string[]).includes(word))
      if (unknown.length > 0) problems.push(`${name} must be a comma list of ${INTEGRITY_SIGNALS.join(', ')} (or none), got "${raw}"`)
      return INTEGRITY_SIGNALS.filter((signal) => words.includes(signal))
    },
  },
  ARENA_INTEGRITY_PAIR_LIMIT: int({
    key: 'integrityPairLimit',
    default: 5,
    min: 1,
    max: 1000,
    help: 'pair_limit: more decided matches than this between two players in 24 hours raises it',
    doc: 'the `pair_limit` signal: the winner and the loser met (decided matches, any game) more times than this in the last 24 hours, this one included',
  }),
  ARENA_INTEGRITY_UPSET_GAP: int({
    key: 'integrityUpsetGap',
    default: 400,
    min: 0,
    max: 10_000,
    help: 'upset: a provisional winner whose loser\'s rating exceeds theirs by more than this',
    doc: 'the `upset` signal: the winner was provisional and the loser\'s displayed rating exceeded the winner\'s by more than this, with more than `ARENA_INTEGRITY_STAKE_REVIEW` at stake',
  }),
  ARENA_INTEGRITY_STAKE_REVIEW: {
    key: 'integrityStakeReview',
    defaultText: '`0`',
    bounds: { help: `a ${USDC.code} amount, 0 or more`, doc: `a ${USDC.code} amount, \`0\` or more, at most ${USDC.decimals} decimals` },
    help: 'upset: only when more than this USDC amount is at stake (a stake; a prize tournament\'s largest prize)',
    doc: 'the `upset` signal is raised only when more than this is at stake: a staked match\'s stake, a prize tournament\'s largest prize',
    /** In minor units; unset (undefined) is 0, kept out of the config as printed like the other amounts. */
    read(raw: string | undefined, { name, problems }: ReadContext): bigint | undefined {
      if (raw === undefined) return undefined
      try {
        return parseAmount(raw.trim(), USDC)
      } catch (error) {
        if (!(error instanceof MoneyFormatError)) throw error
        problems.push(`${name} must be a ${USDC.code} amount such as "0" or "25.5" (at most ${USDC.decimals} decimals, no sign or exponent), got "${raw}"`)
        return undefined
      }
    },
  },
  ARENA_BACKUP_PASSPHRASE: secret({
    key: 'backupPassphrase',
    help: 'passphrase `arena backup` and scheduled backups encrypt with and `arena restore` decrypts with (age, scrypt); without it they refuse',
    doc: 'the passphrase `arena backup` and the scheduled backups encrypt with and `arena restore` decrypts with (age format, scrypt); without it they refuse and nothing is written. Keep it apart from the backups: the archive holds the secrets and custody shares. Never printed or logged',
  }),
  ARENA_BACKUP_DIR: text({
    key: 'backupDir',
    accepts: 'a path',
    defaultText: 'unset (no scheduled backups)',
    help: 'the server writes an encrypted backup (arena-<UTC time>.age) here every ARENA_BACKUP_INTERVAL_S; needs ARENA_BACKUP_PASSPHRASE; SQLite only',
    doc: 'the server writes an encrypted backup `arena-<UTC time>.age` (e.g. `arena-20261124T030000.000Z.age`) into this dir at start and then every `ARENA_BACKUP_INTERVAL_S`, and deletes the oldest of those beyond `ARENA_BACKUP_KEEP`; a failed one is logged and tried again at the next interval. Requires `ARENA_BACKUP_PASSPHRASE`; refused with `ARENA_DATABASE_URL` (PostgreSQL: `pg_dump`, see [docs/operations.md](docs/operations.md#backup-and-restore))',
  }),
  ARENA_BACKUP_INTERVAL_S: int({
    key: 'backupIntervalS',
    default: 86_400,
    min: 1,
    max: 30 * 86_400,
    note: 'a day',
    help: 'seconds between scheduled backups, the first one at start',
    doc: 'seconds between scheduled backups (only with `ARENA_BACKUP_DIR`)',
  }),
  ARENA_BACKUP_KEEP: int({
    key: 'backupKeep',
    default: 7,
    min: 1,
    max: 10_000,
    help: 'how many scheduled backups ARENA_BACKUP_DIR keeps, the newest; older ones arena wrote there are deleted',
    doc: 'how many scheduled backups `ARENA_BACKUP_DIR` keeps, the newest; only files named like the ones arena writes there are ever deleted (only with `ARENA_BACKUP_DIR`)',
  }),
} as const

export type SettingName = keyof typeof SETTINGS
type AnySetting = Setting<string, unknown> & { int?: IntSpec; choice?: { values: readonly string[]; default: string }; minLength?: MinLength; amount?: true }
const rows = Object.entries(SETTINGS) as [SettingName, AnySetting][]

/** The configuration loadConfig returns: one field per setting, its type the one its row reads. */
export type Config = { -readonly [N in SettingName as (typeof SETTINGS)[N]['key']]: ReturnType<(typeof SETTINGS)[N]['read']> }

// Views of the table by kind, for the rules below and for tests.

/** Whole numbers: a default and the range a value must fall in. */
export const INTS: Readonly<Record<string, IntSpec>> = Object.fromEntries(rows.flatMap(([name, row]) => (row.int ? [[name, row.int]] : [])))
/** Settings that are one of a few words, and the word they default to. */
export const CHOICES: Readonly<Record<string, { values: readonly string[]; default: string }>> = Object.fromEntries(
  rows.flatMap(([name, row]) => (row.choice ? [[name, row.choice]] : [])),
)
/** Secrets and tokens with a shortest length: always, or only in `production`. */
export const MIN_LENGTHS: Readonly<Record<string, MinLength>> = Object.fromEntries(rows.flatMap(([name, row]) => (row.minLength ? [[name, row.minLength]] : [])))
/** USDC amounts: positive, in the money grammar (at most USDC's decimals); unset means no limit. */
export const AMOUNTS: readonly string[] = rows.flatMap(([name, row]) => (row.amount ? [name] : []))

/** The bounds of a setting in words (`30 to 86400`, `at least 32 characters`), or undefined for one without. */
export function boundsOf(name: string): string | undefined {
  return Object.hasOwn(SETTINGS, name) ? (SETTINGS[name as SettingName] as AnySetting).bounds?.help : undefined
}

/** A default in the words `arena --help` prints: the README's Markdown without its marks. */
function plain(markdown: string): string {
  return markdown.replace(/\[([^\]]+)\]\([^)]+\)/g, '$1').replaceAll('`', '')
}

/** Every variable with its meaning and default as `arena --help` prints them (the binary may be far from any README). */
export const VARIABLES: Readonly<Record<SettingName, string>> = Object.fromEntries(
  rows.map(([name, row]) => [name, `${row.help} (default: ${plain(row.defaultText).replace(/ \((.*)\)$/, ', $1')})`]),
) as Record<SettingName, string>

export const KNOWN_VARIABLES: readonly string[] = Object.keys(SETTINGS)

/** A variable's line in `arena --help`: its meaning and default, then the values it accepts where it has bounds. */
export function helpLine(name: SettingName): string {
  const bounds = boundsOf(name)
  return bounds === undefined ? VARIABLES[name] : `${VARIABLES[name]}; ${bounds}`
}

/** The README's Configuration table, written from SETTINGS (`npm run docs:settings`). */
export function settingsTable(): string {
  const cell = (text: string) => text.replaceAll('|', '\\|')
  return [
    '| variable | default | accepts | meaning |',
    '|---|---|---|---|',
    ...rows.map(([name, row]) => `| \`${name}\` | ${cell(row.defaultText)} | ${cell(row.bounds?.doc ?? 'text')} | ${cell(row.doc)} |`),
  ].join('\n')
}

type Env = Record<string, string | undefined>

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

  // Each setting in table order, so a default may depend on one above it.
  const config: Record<string, unknown> = {}
  for (const [name, row] of rows) config[row.key] = row.read(given(name), { name, problems, before: config })
  return rulesHold(config as Config, env, problems)
}

/**
 * What relates settings to one another, checked over the values read:
 * production's refusals, a key that only means something beside a URL. The
 * configuration frozen, or a ConfigError naming every problem.
 */
function rulesHold(config: Config, env: Env, problems: string[]): Readonly<Config> {
  const given = (name: SettingName): string | undefined => {
    const raw = env[name]
    return raw === undefined || raw.trim() === '' ? undefined : raw
  }
  const least = (name: SettingName): number => MIN_LENGTHS[name]!.min

  if (config.smtpUrl !== undefined && !/^smtps?:\/\/[^\s/]+(\/\S*)?$/.test(config.smtpUrl)) {
    // The value itself is not repeated: it may hold a password.
    problems.push('ARENA_SMTP_URL must be an smtp:// or smtps:// URL (smtp://user:password@host:587)')
  }
  if (config.publicUrl !== undefined && !/^https?:\/\/\S+$/.test(config.publicUrl)) {
    problems.push('ARENA_PUBLIC_URL must be an http(s) URL')
  }
  if (config.serverUrl !== undefined && !/^https?:\/\/\S+$/.test(config.serverUrl)) {
    problems.push('ARENA_SERVER_URL must be an http(s) URL')
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
    } else if (config.masterKey === undefined) {
      problems.push('ARENA_MASTER_KEY must be exactly 32 bytes, as 64 hex digits or base64 (e.g. `openssl rand -hex 32`)')
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

  // Steam sign-in needs the app id and the publisher key together; the other
  // Steam settings mean nothing without them. The key is never repeated.
  const steamOn = config.steamAppId !== undefined || config.steamWebApiKey !== undefined
  if (steamOn) {
    if (config.steamAppId === undefined) problems.push('ARENA_STEAM_WEB_API_KEY requires ARENA_STEAM_APP_ID (the game\'s Steam app id)')
    if (config.steamWebApiKey === undefined) problems.push('ARENA_STEAM_APP_ID requires ARENA_STEAM_WEB_API_KEY (a publisher Web API key of the game\'s Steamworks group)')
  } else {
    for (const name of ['ARENA_STEAM_IDENTITY', 'ARENA_STEAM_API_URL', 'ARENA_STEAM_TIMEOUT_MS'] as const) {
      if (given(name) !== undefined) problems.push(`${name} only applies with ARENA_STEAM_APP_ID and ARENA_STEAM_WEB_API_KEY (Steam sign-in); set them or unset ${name}`)
    }
  }
  if (config.steamAppId !== undefined && !/^[1-9][0-9]{0,9}$/.test(config.steamAppId)) {
    problems.push(`ARENA_STEAM_APP_ID must be a Steam app id, a whole number such as 480, got "${config.steamAppId}"`)
  }
  if (config.steamWebApiKey !== undefined && !/^[\x21-\x7e]+$/.test(config.steamWebApiKey.reveal())) {
    problems.push('ARENA_STEAM_WEB_API_KEY must be the key as the Steamworks partner site shows it (no spaces)')
  }
  if (!/^[\x21-\x7e]{1,128}$/.test(config.steamIdentity)) {
    problems.push('ARENA_STEAM_IDENTITY must be 1 to 128 printable ASCII characters without spaces, the string the game passes to GetAuthTicketForWebApi')
  }
  if (!/^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/.test(config.steamApiUrl)) {
    problems.push('ARENA_STEAM_API_URL must be an http(s) URL without a query, such as https://partner.steam-api.com')
  } else if (config.env === 'production' && steamOn && !config.steamApiUrl.startsWith('https://')) {
    // The publisher key travels in the query string.
    problems.push('ARENA_ENV=production requires ARENA_STEAM_API_URL to be https://: the publisher key travels in its query string')
  }

  if (config.custody === 'cosigner' && config.cosignerUrl === undefined) {
    problems.push('ARENA_CUSTODY=cosigner requires ARENA_COSIGNER_URL')
  }
  if (config.cosignerUrl !== undefined && !/^https?:\/\/[^\s]+$/.test(config.cosignerUrl)) {
    problems.push('ARENA_COSIGNER_URL must be an http(s) URL')
  }
  if ((config.custody === 'cosigner' || config.cosignerSecret !== undefined) && (config.cosignerSecret ?? '').length < least('ARENA_COSIGNER_SECRET')) {
    problems.push(`ARENA_COSIGNER_SECRET must be at least ${least('ARENA_COSIGNER_SECRET')} characters`)
  }

  if (config.jwtSecret !== undefined && config.jwtSecret.length < least('ARENA_JWT_SECRET')) {
    problems.push(`ARENA_JWT_SECRET must be at least ${least('ARENA_JWT_SECRET')} characters`)
  }
  if (config.jwtPreviousSecret !== undefined) {
    if (config.jwtSecret === undefined) problems.push('ARENA_JWT_PREVIOUS_SECRET only makes sense beside ARENA_JWT_SECRET (the key it was replaced by)')
    else if (config.jwtPreviousSecret === config.jwtSecret) problems.push('ARENA_JWT_PREVIOUS_SECRET must differ from ARENA_JWT_SECRET')
    if (config.jwtPreviousSecret.length < least('ARENA_JWT_PREVIOUS_SECRET')) {
      problems.push(`ARENA_JWT_PREVIOUS_SECRET must be at least ${least('ARENA_JWT_PREVIOUS_SECRET')} characters`)
    }
  }

  // Production refuses what is only acceptable on a developer's machine:
  // a signing secret that was generated onto the data volume instead of being
  // provisioned, and a guessable operator token.
  if (config.env === 'production') {
    if (config.jwtSecret === undefined) {
      problems.push('ARENA_ENV=production requires ARENA_JWT_SECRET to be set (a generated secret is a local-only default)')
    }
    if (config.adminToken !== undefined && config.adminToken.length < least('ARENA_ADMIN_TOKEN')) {
      problems.push(`ARENA_ENV=production requires ARENA_ADMIN_TOKEN to be at least ${least('ARENA_ADMIN_TOKEN')} characters when set`)
    }
    if (config.metricsToken !== undefined && config.metricsToken.length < least('ARENA_METRICS_TOKEN')) {
      problems.push(`ARENA_ENV=production requires ARENA_METRICS_TOKEN to be at least ${least('ARENA_METRICS_TOKEN')} characters when set`)
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
