// Zero-config local use: a secret the operator did not provide is generated
// once and kept in <dataDir>/secrets.json (mode 0600), so restarts keep
// issued tokens valid. Production refuses this path (see config.ts).
import { chmodSync, closeSync, fsyncSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import type { Config } from './config'
import { randomToken } from './shared/crypto'

export interface Secrets {
  jwtSecret: string
}

interface StoredSecrets {
  jwtSecret?: string
}

export const SECRETS_FILE = 'secrets.json'

export function ensureDataDir(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
}

export function resolveSecrets(config: Pick<Config, 'dataDir' | 'jwtSecret'>): Secrets {
  if (config.jwtSecret !== undefined) return { jwtSecret: config.jwtSecret }

  ensureDataDir(config.dataDir)
  const path = join(config.dataDir, SECRETS_FILE)
  const existing = readStored(path)
  if (existing?.jwtSecret) return { jwtSecret: existing.jwtSecret }

  const generated: StoredSecrets = { ...existing, jwtSecret: randomToken(48) }
  try {
    // 'wx' fails if another process created the file first; then theirs wins.
    const fd = openSync(path, existing ? 'w' : 'wx', 0o600)
    try {
      writeSync(fd, JSON.stringify(generated, null, 2) + '\n')
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    chmodSync(path, 0o600)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    const raced = readStored(path)
    if (raced?.jwtSecret) return { jwtSecret: raced.jwtSecret }
    throw error
  }
  return { jwtSecret: generated.jwtSecret! }
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
