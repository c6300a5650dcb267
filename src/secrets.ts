// The server's own secrets. Zero-config local use: what the operator did not
// provide is generated once and kept in <dataDir>/secrets.json (mode 0600), so
// restarts keep issued tokens valid. Production refuses a generated signing
// key (see config.ts).
//
// Three secrets, each with one job, so changing one never disturbs another:
// - access-token signing keys, each with an id (`kid` in the token header);
//   the last one signs, every one listed verifies. `arena keys rotate` adds
//   one; ARENA_JWT_SECRET (+ ARENA_JWT_PREVIOUS_SECRET) replace the file's.
// - the security-event chain key, which only ever chains the security log:
//   rotating a signing key never makes `security verify-log` see tampering.
// - in `local` only, the operator token when ARENA_ADMIN_TOKEN is unset.
import { chmodSync, closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, statSync, writeSync } from 'node:fs'
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
  /** Where the signing keys come from: the data dir's file (rotatable with `arena keys rotate`) or the environment. */
  signingKeysFrom: 'file' | 'environment'
  chainKey: string
  /** ARENA_ADMIN_TOKEN, or in `local` the generated one; undefined: the operator API is disabled. */
  adminToken: string | undefined
  /** True when adminToken was generated into the data dir (so arena prints where to find it). */
  adminTokenGenerated: boolean
}

interface StoredKey {
  secret: string
  createdAt: string
  /** When a newer key became current; the key keeps verifying a while after. */
  retiredAt?: string
}

interface StoredSecrets {
  /** First-edition files: the one signing secret, before keys had ids. */
  jwtSecret?: string
  signingKeys?: StoredKey[]
  chainKey?: string
  adminToken?: string
}

export const SECRETS_FILE = 'secrets.json'

export function ensureDataDir(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
}

export function signingKey(secret: string): SigningKey {
  return { kid: new Bun.CryptoHasher('sha256').update('arena access-token kid v1').update(secret).digest('base64url').slice(0, 16), secret }
}

/** The first edition's chain key, derived from its one signing secret; kept as the chain key of data dirs it wrote. */
export function legacyChainKey(signingSecret: string): string {
  return new Bun.CryptoHasher('sha256', signingSecret).update('arena security-event chain v1').digest('hex')
}

type SecretsConfig = Pick<Config, 'dataDir' | 'env' | 'jwtSecret' | 'jwtPreviousSecret' | 'adminToken'>

/**
 * The secrets, generating what is missing. Only the server (and `arena
 * admin-token`) ask for the operator token to be generated: a command that
 * merely reads, like `security verify-log`, writes nothing to a complete file,
 * so it also works on a full disk.
 */
export function resolveSecrets(config: SecretsConfig, options: { generateOperatorToken?: boolean } = {}): Secrets {
  ensureDataDir(config.dataDir)
  const path = join(config.dataDir, SECRETS_FILE)
  const stored = completeStored(path, config, options.generateOperatorToken === true)
  const fromEnv = config.jwtSecret !== undefined
  return {
    signingKeys: fromEnv ? environmentKeys(config) : stored.signingKeys!.map((key) => signingKey(key.secret)),
    signingKeysFrom: fromEnv ? 'environment' : 'file',
    chainKey: stored.chainKey!,
    adminToken: config.adminToken ?? (config.env === 'local' ? stored.adminToken : undefined),
    adminTokenGenerated: config.adminToken === undefined && config.env === 'local' && stored.adminToken !== undefined,
  }
}

function environmentKeys(config: SecretsConfig): SigningKey[] {
  return [...(config.jwtPreviousSecret ? [signingKey(config.jwtPreviousSecret)] : []), signingKey(config.jwtSecret!)]
}

/**
 * The stored secrets with every missing one generated and saved. A missing
 * chain key is derived the way the first edition derived it (from the signing
 * secret in effect), so a chain written before keys rotated keeps verifying.
 */
function completeStored(path: string, config: SecretsConfig, generateOperatorToken: boolean): StoredSecrets {
  const existing = readStored(path)
  const next: StoredSecrets = { ...existing }
  if (!next.signingKeys?.length) {
    next.signingKeys = [{ secret: next.jwtSecret ?? randomToken(48), createdAt: new Date().toISOString() }]
    delete next.jwtSecret
  }
  next.chainKey ??= legacyChainKey(config.jwtSecret ?? next.signingKeys[0]!.secret)
  if (generateOperatorToken && config.env === 'local' && config.adminToken === undefined) next.adminToken ??= randomToken(32)
  if (existing && JSON.stringify(existing) === JSON.stringify(next)) return existing

  if (!existing) {
    // 'wx' fails if another process created the file first; then theirs wins.
    try {
      writeFile(path, next, 'wx')
      return next
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      return completeStored(path, config, generateOperatorToken)
    }
  }
  replaceFile(path, next)
  // Two processes upgrading one file at once: whichever renamed last won; use that.
  return readStored(path) ?? next
}

/** Adds a new current signing key to the data dir's file. `dropOthers`: the old keys stop verifying at once (a leaked key). */
export function rotateSigningKey(config: SecretsConfig & Pick<Config, 'refreshTtlS'>, options: { dropOthers: boolean; now?: Date }): SigningKey[] {
  if (config.jwtSecret !== undefined) {
    throw new Error(
      'ARENA_JWT_SECRET is set, so the signing key comes from the environment: set ARENA_JWT_PREVIOUS_SECRET to the current value ' +
        'and ARENA_JWT_SECRET to a new one, restart every instance, and drop ARENA_JWT_PREVIOUS_SECRET once ARENA_REFRESH_TTL_S has passed',
    )
  }
  ensureDataDir(config.dataDir)
  const path = join(config.dataDir, SECRETS_FILE)
  const stored = completeStored(path, config, false)
  const now = options.now ?? new Date()
  // A retired key verifies as long as a token it signed can still be used: an
  // expired access token is accepted by /auth/validate up to the refresh TTL.
  const keep = (key: StoredKey) => key.retiredAt === undefined || now.getTime() - Date.parse(key.retiredAt) < config.refreshTtlS * 1000
  const previous = options.dropOthers ? [] : stored.signingKeys!.filter(keep).map((key) => ({ ...key, retiredAt: key.retiredAt ?? now.toISOString() }))
  const next: StoredSecrets = { ...stored, signingKeys: [...previous, { secret: randomToken(48), createdAt: now.toISOString() }] }
  replaceFile(path, next)
  return next.signingKeys!.map((key) => signingKey(key.secret))
}

/**
 * The signing keys as the data dir's file has them now, re-read when the file
 * changes (checked at most once a second), so a running server starts signing
 * with a key `arena keys rotate` added without a restart.
 */
export function signingKeyring(config: SecretsConfig, initial: Secrets): () => readonly SigningKey[] {
  if (initial.signingKeysFrom === 'environment') return () => initial.signingKeys
  const path = join(config.dataDir, SECRETS_FILE)
  let keys = initial.signingKeys
  let checkedAt = Date.now()
  let mtimeMs = statSync(path).mtimeMs
  return () => {
    const now = Date.now()
    if (now - checkedAt < 1000) return keys
    checkedAt = now
    try {
      const mtime = statSync(path).mtimeMs
      if (mtime !== mtimeMs) {
        const stored = readStored(path)
        if (stored?.signingKeys?.length) keys = stored.signingKeys.map((key) => signingKey(key.secret))
        mtimeMs = mtime
      }
    } catch {
      // The file is briefly unreadable (being replaced, disk trouble): keep the keys we have.
    }
    return keys
  }
}

function writeFile(path: string, value: StoredSecrets, flags: 'wx' | 'w'): void {
  const fd = openSync(path, flags, 0o600)
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
  const temp = `${path}.${process.pid}.tmp`
  writeFile(temp, value, 'w')
  renameSync(temp, path)
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
