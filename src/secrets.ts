// The server's own secrets. Zero-config local use: what the operator did not
// provide is generated once and kept in <dataDir>/secrets.json (mode 0600), so
// restarts keep issued tokens valid. Production refuses a generated signing
// key (see config.ts). With PostgreSQL they live in the database instead,
// sealed under ARENA_MASTER_KEY and shared by every instance
// (src/vault/secrets.ts); this file is the data dir's side.
//
// Three secrets, each with one job, so changing one never disturbs another:
// - access-token signing keys, each with an id (`kid` in the token header);
//   the last one signs, every one listed verifies. `arena keys rotate` adds
//   one; ARENA_JWT_SECRET (+ ARENA_JWT_PREVIOUS_SECRET) replace the file's.
// - the security-event chain key, which only ever chains the security log:
//   rotating a signing key never makes `security verify-log` see tampering.
// - in `local` only, the operator token when ARENA_ADMIN_TOKEN is unset.
import { chmodSync, closeSync, fsyncSync, linkSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs'
import { holdsDatabase } from './db/open'
import { ensureDataDir } from './shared/data-dir'
import { join } from 'node:path'
import type { Config } from './config'
import { randomToken } from './shared/crypto'

export interface SigningKey {
  /** Public, in every token's header: derived from the secret, so instances given the same secret agree on it. */
  kid: string
  secret: string
}

export interface Secrets {
  /** Verification keys, oldest first; the last one signs. */
  signingKeys: readonly SigningKey[]
  /** Where the signing keys come from: the data dir's file or the database's vault (both rotatable with `arena keys rotate`), or the environment. */
  signingKeysFrom: 'file' | 'database' | 'environment'
  chainKey: string
  /** ARENA_ADMIN_TOKEN, or in `local` the generated one; undefined: the operator API is disabled. */
  adminToken: string | undefined
  /** True when adminToken was generated into the data dir (so arena prints where to find it). */
  adminTokenGenerated: boolean
  /** True when this very call generated it: the first start says "generated", later ones do not. */
  adminTokenCreated: boolean
}

/** The signing keys of a running server, as they are now. */
export interface SigningKeyring {
  /** Oldest first, the last one signs; cheap, called on every sign and verify. */
  current(): readonly SigningKey[]
  /** Reads the keys again where that takes a round trip (the database's vault: the server runs it every second); otherwise does nothing. */
  refresh(): Promise<void>
}

/**
 * Where the server's secrets are kept, behind one interface as the custody
 * shares are (KeyShares): the data dir's secrets.json (DataDirSecrets, below)
 * or the database's vault, sealed under ARENA_MASTER_KEY (VaultSecrets,
 * src/vault/secrets.ts). src/services.ts picks one by engine; nothing else
 * asks which.
 */
export interface SecretStore {
  /** Where, in words: what `arena keys list` reports the keys come from. */
  readonly where: 'data dir' | 'database'
  /** The secrets, generating what is missing (the operator token only when asked: the server and `arena admin-token`). */
  load(options?: { generateOperatorToken?: boolean }): Promise<Secrets>
  /** Adds a new signing key (`arena keys rotate`); `dropOthers`: the old keys stop verifying at once (a leaked key). */
  rotate(options: { dropOthers: boolean }): Promise<SigningKeyRotation>
  /** The signing keys of a running server, kept current as they are rotated. */
  keyring(initial: Secrets): SigningKeyring
}

export interface SigningKeyRotation {
  /** The keyring right after the rotation (the last one signs). */
  keys: SigningKey[]
  /** The new key, when it signs only from a later moment (the vault's rotations but --drop-previous). */
  next?: { kid: string; signsFrom: string }
}

/** The secrets in the data dir's secrets.json (SQLite: one server per data dir). */
export class DataDirSecrets implements SecretStore {
  readonly where = 'data dir'
  constructor(private readonly config: SecretsConfig) {}

  async load(options: { generateOperatorToken?: boolean } = {}): Promise<Secrets> {
    return resolveSecrets(this.config, options)
  }

  async rotate(options: { dropOthers: boolean }): Promise<SigningKeyRotation> {
    return { keys: rotateSigningKey(this.config, options) }
  }

  keyring(initial: Secrets): SigningKeyring {
    return { current: signingKeyring(this.config, initial), refresh: async () => {} }
  }
}

export interface StoredKey {
  secret: string
  createdAt: string
  /** When a newer key became current; the key keeps verifying a while after. */
  retiredAt?: string
  /**
   * Database keys only: when the key starts signing. Until then it only
   * verifies, so every instance knows it before any instance signs with it.
   */
  activatesAt?: string
}

interface StoredSecrets {
  /** First-edition files: the one signing secret, before keys had ids. */
  jwtSecret?: string
  signingKeys?: StoredKey[]
  chainKey?: string
  adminToken?: string
}

export const SECRETS_FILE = 'secrets.json'

export function signingKey(secret: string): SigningKey {
  return { kid: new Bun.CryptoHasher('sha256').update('arena access-token kid v1').update(secret).digest('base64url').slice(0, 16), secret }
}

/** The first edition's chain key, derived from its one signing secret; kept as the chain key of data dirs it wrote. */
export function legacyChainKey(signingSecret: string): string {
  return new Bun.CryptoHasher('sha256', signingSecret).update('arena security-event chain v1').digest('hex')
}

export type SecretsConfig = Pick<Config, 'dataDir' | 'env' | 'jwtSecret' | 'jwtPreviousSecret' | 'adminToken' | 'refreshTtlS'> & Partial<Pick<Config, 'databaseUrl'>>

/**
 * The secrets, generating what is missing. Only the server (and `arena
 * admin-token`) ask for the operator token to be generated: a command that
 * merely reads, like `security verify-log`, writes nothing to a complete file,
 * so it also works on a full disk.
 */
export function resolveSecrets(config: SecretsConfig, options: { generateOperatorToken?: boolean } = {}): Secrets {
  refuseDatabaseSecrets(config)
  ensureDataDir(config.dataDir)
  const path = join(config.dataDir, SECRETS_FILE)
  const hadToken = readStored(path)?.adminToken !== undefined
  const stored = completeStored(path, config, options.generateOperatorToken === true)
  const fromEnv = config.jwtSecret !== undefined
  const generated = config.adminToken === undefined && config.env === 'local' && stored.adminToken !== undefined
  return {
    signingKeys: fromEnv ? environmentKeys(config) : liveKeys(stored.signingKeys!, config),
    signingKeysFrom: fromEnv ? 'environment' : 'file',
    chainKey: stored.chainKey!,
    adminToken: config.adminToken ?? (config.env === 'local' ? stored.adminToken : undefined),
    adminTokenGenerated: generated,
    adminTokenCreated: generated && !hadToken,
  }
}

/**
 * What the data dir's file holds, completed as resolveSecrets completes it:
 * what `arena db copy` carries into a PostgreSQL database's vault.
 */
export function dataDirSecrets(config: SecretsConfig): { signingKeys: StoredKey[]; chainKey: string; adminToken?: string } {
  refuseDatabaseSecrets(config)
  ensureDataDir(config.dataDir)
  const stored = completeStored(join(config.dataDir, SECRETS_FILE), config, false)
  return { signingKeys: stored.signingKeys!, chainKey: stored.chainKey!, ...(stored.adminToken !== undefined ? { adminToken: stored.adminToken } : {}) }
}

/**
 * The stored keys that still verify: a retired key stays as long as a token it
 * signed can be used, and /auth/validate accepts an expired access token for
 * up to the refresh lifetime.
 */
export function liveKeys(stored: readonly StoredKey[], config: Pick<Config, 'refreshTtlS'>, now = Date.now()): SigningKey[] {
  return liveStoredKeys(stored, config, now).map((key) => signingKey(key.secret))
}

export function liveStoredKeys(stored: readonly StoredKey[], config: Pick<Config, 'refreshTtlS'>, now = Date.now()): StoredKey[] {
  return stored.filter((key) => key.retiredAt === undefined || now - Date.parse(key.retiredAt) < config.refreshTtlS * 1000)
}

export function environmentKeys(config: Pick<Config, 'jwtSecret' | 'jwtPreviousSecret'>): SigningKey[] {
  return [...(config.jwtPreviousSecret ? [signingKey(config.jwtPreviousSecret)] : []), signingKey(config.jwtSecret!)]
}

/**
 * The stored secrets with every missing one generated and saved. A missing
 * chain key is random, except in a data dir the first edition wrote (a
 * `jwtSecret` in the file, or a database beside an environment-provided
 * secret): there it is derived as the first edition derived it, so the chain
 * written then keeps verifying, and it is independent of signing keys from
 * then on.
 */
function completeStored(path: string, config: SecretsConfig, generateOperatorToken: boolean): StoredSecrets {
  const existing = readStored(path)
  const next: StoredSecrets = { ...existing }
  if (!next.signingKeys?.length) {
    next.signingKeys = [{ secret: next.jwtSecret ?? randomToken(48), createdAt: new Date().toISOString() }]
    delete next.jwtSecret
  }
  next.chainKey ??= existing?.jwtSecret
    ? legacyChainKey(existing.jwtSecret)
    : config.jwtSecret !== undefined && holdsDatabase(config.dataDir)
      ? legacyChainKey(config.jwtSecret)
      : Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex')
  if (generateOperatorToken && config.env === 'local' && config.adminToken === undefined) next.adminToken ??= randomToken(32)
  if (existing && JSON.stringify(existing) === JSON.stringify(next)) return existing

  if (!existing) {
    // Written whole under another name, then linked into place: a reader never
    // sees a half-written file, and link fails if another process created the
    // file first; then theirs wins.
    const temp = writeTemp(path, next)
    try {
      linkSync(temp, path)
      return next
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      return completeStored(path, config, generateOperatorToken)
    } finally {
      unlinkSync(temp)
    }
  }
  replaceFile(path, next)
  // Two processes upgrading one file at once: whichever renamed last won; use that.
  return readStored(path) ?? next
}

/** Adds a new current signing key to the data dir's file. `dropOthers`: the old keys stop verifying at once (a leaked key). */
export function rotateSigningKey(config: SecretsConfig & Pick<Config, 'refreshTtlS'>, options: { dropOthers: boolean; now?: Date }): SigningKey[] {
  refuseEnvironmentRotation(config)
  refuseDatabaseSecrets(config)
  ensureDataDir(config.dataDir)
  const path = join(config.dataDir, SECRETS_FILE)
  const stored = completeStored(path, config, false)
  const now = options.now ?? new Date()
  // A retired key verifies as long as a token it signed can still be used: an
  // expired access token is accepted by /auth/validate up to the refresh TTL.
  const live = new Set(liveStoredKeys(stored.signingKeys!, config, now.getTime()).map((key) => key.secret))
  const previous = options.dropOthers
    ? []
    : stored.signingKeys!.filter((key) => live.has(key.secret)).map((key) => ({ ...key, retiredAt: key.retiredAt ?? now.toISOString() }))
  const next: StoredSecrets = { ...stored, signingKeys: [...previous, { secret: randomToken(48), createdAt: now.toISOString() }] }
  replaceFile(path, next)
  return liveKeys(next.signingKeys!, config, now.getTime())
}

/** `arena keys rotate` has nothing to rotate when the keys come from the environment: it says what to do instead. */
export function refuseEnvironmentRotation(config: Pick<Config, 'jwtSecret'>): void {
  if (config.jwtSecret !== undefined) {
    throw new Error(
      'ARENA_JWT_SECRET is set, so the signing key comes from the environment: set ARENA_JWT_PREVIOUS_SECRET to the current value ' +
        'and ARENA_JWT_SECRET to a new one, restart every instance, and drop ARENA_JWT_PREVIOUS_SECRET once ARENA_REFRESH_TTL_S has passed',
    )
  }
}

/** A data-dir call with PostgreSQL configured is a wiring mistake: a secrets.json there would be one no other instance reads. */
function refuseDatabaseSecrets(config: Partial<Pick<Config, 'databaseUrl'>>): void {
  if (config.databaseUrl !== undefined) {
    throw new Error('with ARENA_DATABASE_URL the secrets are kept in the database, not in the data dir: load them through the storage (loadSecrets)')
  }
}

/**
 * The signing keys as the data dir's file has them now, re-read when the file
 * changes (checked at most once a second), so a running server starts signing
 * with a key `arena keys rotate` added without a restart.
 */
export function signingKeyring(config: SecretsConfig, initial: Secrets): () => readonly SigningKey[] {
  if (initial.signingKeysFrom === 'environment') return () => initial.signingKeys
  const path = join(config.dataDir, SECRETS_FILE)
  // Every write replaces the file (a new inode), so inode and mtime together
  // tell a change even within the file system's time resolution.
  const version = () => {
    const stat = statSync(path)
    return `${stat.ino}:${stat.mtimeMs}`
  }
  let seen = version()
  let stored = readStored(path)!
  let keys = initial.signingKeys
  let checkedAt = Date.now()
  return () => {
    const now = Date.now()
    if (now - checkedAt < 1000) return keys
    checkedAt = now
    try {
      const current = version()
      if (current !== seen) {
        stored = readStored(path) ?? stored
        seen = current
      }
    } catch {
      // The file is briefly unreadable (being replaced, disk trouble): keep the keys we have.
    }
    // Recomputed every check, so a retired key ages out even while the file stays as it is.
    const live = liveKeys(stored.signingKeys!, config, now)
    if (live.length > 0 && (live.length !== keys.length || live.some((key, i) => key.kid !== keys[i]!.kid))) keys = live
    return keys
  }
}

/** Writes `value` to a new file beside `path`, named at random (several processes, even two PID 1s in containers, may write at once). */
function writeTemp(path: string, value: StoredSecrets): string {
  const temp = `${path}.${randomToken(8)}.tmp`
  writeFile(temp, value)
  return temp
}

function writeFile(path: string, value: StoredSecrets): void {
  const fd = openSync(path, 'wx', 0o600)
  try {
    writeSync(fd, JSON.stringify(value, null, 2) + '\n')
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  chmodSync(path, 0o600)
}

/** Write-then-rename: a reader sees the old file or the new one, never half of one. */
function replaceFile(path: string, value: StoredSecrets): void {
  renameSync(writeTemp(path, value), path)
}

function readStored(path: string): StoredSecrets | undefined {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  try {
    const parsed = JSON.parse(text) as unknown
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as StoredSecrets
  } catch {
    // fall through to the error below
  }
  throw new Error(`${path} is not a JSON object; fix or remove it (removing it invalidates issued tokens)`)
}
