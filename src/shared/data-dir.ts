import { mkdirSync } from 'node:fs'

/** Creates the data dir (owner-only) if it is missing. */
export function ensureDataDir(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
}
