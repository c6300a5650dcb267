// One server per SQLite data dir. Everything a server keeps in its process
// (the long polls' wake-ups and caught-up cache, the singleton loops: mail
// delivery, the withdrawal resumer, scheduled backups, the job worker)
// assumes it is the only one on its database, so `arena serve` holds an
// exclusive kernel lock on `<data dir>/serve.lock` for as long as it runs, and
// a second server on the same dir stops at start, naming the first one's pid.
//
// A pid file with a liveness check is not enough: pids are reused, and a
// server killed with -9 leaves its file behind. flock(2) is held by the open
// file and released by the kernel when the process dies, however it dies. Bun
// has no flock API, so it is called from libc through bun:ffi (Linux and macOS;
// LOCK_SH/EX/NB/UN have the same values on both). A flock conflicts between
// two opens of the file even within one process, so a second server started in
// the same process (a test) is refused too.
//
// The commands that must not run beside a server take the same lock for their
// whole run, so a server cannot start under them either: `arena db copy` from
// the dir exclusively, `arena migrate` shared (several migrations at once take
// turns in SQLite's own write lock; only a server must not be beside them).
// `arena restore` and an operator command that would apply migrations ask
// whether a server holds it (`dataDirHolder`).
import { dlopen, FFIType, read } from 'bun:ffi'
import { closeSync, existsSync, ftruncateSync, openSync, readFileSync, realpathSync, writeSync } from 'node:fs'
import { join, resolve } from 'node:path'

export const LOCK_FILE = 'serve.lock'

const LOCK_SH = 1
const LOCK_EX = 2
const LOCK_NB = 4
const LOCK_UN = 8

/** EWOULDBLOCK: Linux 11, macOS 35. */
const WOULD_BLOCK = process.platform === 'darwin' ? 35 : 11

interface Libc {
  flock(fd: number, operation: number): number
  errno(): number
}

let libc: Libc | undefined

function loadLibc(): Libc {
  if (libc !== undefined) return libc
  // Opened on first use: only a SQLite server and a few commands need it.
  const darwin = process.platform === 'darwin'
  if (!darwin && process.platform !== 'linux') throw new Error(`the data dir lock (flock) is implemented for Linux and macOS, not ${process.platform}`)
  const errnoSymbol = darwin ? '__error' : '__errno_location'
  const names = darwin ? ['libc.dylib', '/usr/lib/libSystem.B.dylib'] : ['libc.so.6', `libc.musl-${process.arch === 'arm64' ? 'aarch64' : 'x86_64'}.so.1`]
  let failure: unknown
  for (const name of names) {
    try {
      const lib = dlopen(name, {
        flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
        [errnoSymbol]: { args: [], returns: FFIType.ptr },
      })
      const errnoOf = lib.symbols[errnoSymbol] as () => number | null
      libc = {
        flock: (fd, operation) => lib.symbols.flock(fd, operation) as number,
        errno: () => {
          const at = errnoOf()
          return at === null ? 0 : read.i32(at as never, 0)
        },
      }
      return libc
    } catch (error) {
      failure = error
    }
  }
  throw new Error(`cannot load libc for the data dir lock: ${failure instanceof Error ? failure.message : String(failure)}`)
}

/** Who holds a data dir's lock, as its lock file says (the holder writes it once locked). */
export interface LockHolder {
  pid: number | undefined
  /** The arena command holding it: `serve`, `migrate`, `db copy`. */
  command: string | undefined
}

/** A server (or a command that excludes one) holds the data dir. */
export class DataDirBusyError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder,
    /** What the refused process would have done, and what to do instead. */
    why: string,
  ) {
    super(`${describeHolder(holder)} ${holder.command === 'serve' ? 'is serving' : 'is using'} this data dir (${dataDir}): ${why}`)
    this.name = 'DataDirBusyError'
  }
}

function describeHolder({ pid, command }: LockHolder): string {
  const which = pid === undefined ? 'pid unknown' : `pid ${pid}`
  if (command === 'serve') return `another arena server (${which})`
  return `another arena process (${which}${command === undefined ? '' : `, arena ${command}`})`
}

export interface DataDirLock {
  readonly path: string
  /** Releases the lock (the kernel does it too when the process ends). Safe to call twice. */
  release(): void
}

/** Locks this process holds, by data dir: `dataDirHolder` does not report the process itself. */
const held = new Map<string, number>()

function keyOf(dataDir: string): string {
  try {
    return realpathSync(dataDir)
  } catch {
    return resolve(dataDir)
  }
}

function readHolder(path: string): LockHolder {
  let text = ''
  try {
    text = readFileSync(path, 'utf8')
  } catch {
    // Gone or unreadable: the refusal still says what it can.
  }
  const [pidLine, command] = text.split('\n')
  const pid = Number(pidLine)
  return { pid: Number.isSafeInteger(pid) && pid > 0 ? pid : undefined, command: command === undefined || command === '' ? undefined : command }
}

/** Tries the lock a few times: another process's probe holds it for microseconds. */
function tryLock(fd: number, operation: number): boolean {
  const { flock, errno } = loadLibc()
  for (let attempt = 0; ; attempt++) {
    if (flock(fd, operation | LOCK_NB) === 0) return true
    const code = errno()
    if (code !== WOULD_BLOCK) throw new Error(`flock failed (errno ${code})`)
    if (attempt === 4) return false
    Bun.sleepSync(40)
  }
}

/**
 * Takes the data dir's lock for `command` (exclusive unless `shared`) and
 * writes this process's pid and command into the lock file, or throws
 * DataDirBusyError naming the holder. The data dir must exist.
 */
export function lockDataDir(dataDir: string, command: string, why: string, options: { shared?: boolean } = {}): DataDirLock {
  const path = join(dataDir, LOCK_FILE)
  const fd = openSync(path, 'a+', 0o600)
  let locked = false
  try {
    locked = tryLock(fd, options.shared === true ? LOCK_SH : LOCK_EX)
  } finally {
    if (!locked) closeSync(fd)
  }
  if (!locked) {
    // The holder writes its pid right after it locks: give it that moment.
    let holder = readHolder(path)
    if (holder.pid === undefined) {
      Bun.sleepSync(50)
      holder = readHolder(path)
    }
    throw new DataDirBusyError(dataDir, holder, why)
  }
  // Replaced only once locked: a refused process never erases the holder's pid
  // (of several shared holders, the file names the last one).
  try {
    ftruncateSync(fd, 0)
    writeSync(fd, `${process.pid}\n${command}\n`, 0)
  } catch (error) {
    closeSync(fd)
    throw error
  }
  const key = keyOf(dataDir)
  held.set(key, (held.get(key) ?? 0) + 1)
  let released = false
  return {
    path,
    release() {
      if (released) return
      released = true
      const count = (held.get(key) ?? 1) - 1
      if (count === 0) held.delete(key)
      else held.set(key, count)
      loadLibc().flock(fd, LOCK_UN)
      closeSync(fd)
    },
  }
}

/**
 * Who holds the data dir's lock, other than this process; undefined when no
 * one does. Creates nothing (a restore's target stays empty): a dir without a
 * lock file has never had a server, or lost it.
 */
export function dataDirHolder(dataDir: string): LockHolder | undefined {
  const path = join(dataDir, LOCK_FILE)
  if (held.has(keyOf(dataDir)) || !existsSync(path)) return undefined
  let fd: number
  try {
    fd = openSync(path, 'r')
  } catch {
    return undefined
  }
  try {
    // Shared: two probes never refuse each other; a server's exclusive lock refuses both.
    if (tryLock(fd, LOCK_SH)) {
      loadLibc().flock(fd, LOCK_UN)
      return undefined
    }
  } finally {
    closeSync(fd)
  }
  return readHolder(path)
}

/** Throws DataDirBusyError when another process holds the data dir. */
export function refuseBesideServer(dataDir: string, why: string): void {
  const holder = dataDirHolder(dataDir)
  if (holder !== undefined) throw new DataDirBusyError(dataDir, holder, why)
}
