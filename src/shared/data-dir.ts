import { mkdirSync, statSync } from 'node:fs'
import { resolve } from 'node:path'

/**
 * The data dir cannot be one: a file is in its place (or in its path), or it
 * may not be created. A start-up error like a bad setting: the message names
 * ARENA_DATA_DIR and the path, never an errno.
 */
export class DataDirError extends Error {
  constructor(
    readonly dataDir: string,
    reason: string,
  ) {
    super(`ARENA_DATA_DIR is "${dataDir}"${resolve(dataDir) === dataDir ? '' : ` (${resolve(dataDir)})`}, ${reason}`)
    this.name = 'DataDirError'
  }
}

/** Creates the data dir (owner-only) if it is missing. */
export function ensureDataDir(dataDir: string): void {
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EEXIST' || code === 'ENOTDIR') {
      const isFile = code === 'EEXIST' && !statSync(dataDir, { throwIfNoEntry: false })?.isDirectory()
      throw new DataDirError(
        dataDir,
        isFile
          ? 'which is a file, not a directory: point ARENA_DATA_DIR at a directory (created if missing) or move the file away'
          : 'whose path goes through a file, not a directory: point ARENA_DATA_DIR at a directory (created if missing)',
      )
    }
    if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
      throw new DataDirError(dataDir, `which cannot be created (${code === 'EROFS' ? 'read-only file system' : 'permission denied'}): create it, writable by this user, or point ARENA_DATA_DIR elsewhere`)
    }
    throw error
  }
}
