// The backup archive (`arena backup`, `arena restore`, scheduled backups):
// one age-encrypted file (scrypt passphrase) holding a consistent snapshot of
// the SQLite database, then the data dir's secrets.json and every custody
// share (read after the snapshot, so every wallet in it has its shares).
// Nothing is ever written unencrypted, and nothing is held whole in memory:
// the snapshot file is read, framed, encrypted and written in chunks, and a
// restore decrypts and writes in chunks the same way, so a database of any
// size goes through in bounded memory.
//
// The plaintext inside age (format arena-backup/2):
//
//   "arena-backup/2\n"
//   frame {type:"archive", format, createdAt}
//   for each file: frame {type:"file", path, size}, its `size` bytes, their SHA-256 (32 bytes)
//   frame {type:"end", files}
//
// where a frame is a 4-byte big-endian length and that many bytes of JSON.
// age authenticates every 64 KiB chunk and marks the last one, so an edited
// or truncated archive fails to decrypt; the SHA-256 per file and the end
// frame (with the count) are checked as well. A restore writes into a
// staging dir beside the target and renames it into place only once every
// check passed: a failed restore leaves nothing at the target.
import { createHash, randomBytes } from 'node:crypto'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { chmod, mkdir, open, readFile, rename, rm, stat, type FileHandle } from 'node:fs/promises'
import { basename, dirname, join, relative, resolve } from 'node:path'
import { Decrypter, Encrypter } from 'age-encryption'
import { BackupError } from './errors'
import { SQLITE_DB_FILE as DB_FILE, withSqliteSnapshot } from '../db/snapshot'
import { SECRETS_FILE } from '../secrets'

export const FORMAT = 'arena-backup/2'
const MAGIC = new TextEncoder().encode(`${FORMAT}\n`)
/** Directories of the data dir copied whole besides the database and secrets.json. */
const DIRECTORIES = ['custody', 'cosigner-keys']
/** How much of the snapshot is read at once. */
const READ_CHUNK = 1 << 20
/** A frame longer than this is not one arena wrote. */
const MAX_FRAME = 64 * 1024

export { BackupError }

type Frame = { type: 'archive'; format: string; createdAt: string } | { type: 'file'; path: string; size: number } | { type: 'end'; files: number }

function frame(value: Frame): Uint8Array {
  const json = Buffer.from(JSON.stringify(value))
  const out = Buffer.alloc(4 + json.length)
  out.writeUInt32BE(json.length, 0)
  json.copy(out, 4)
  return out
}

/** An fs error (no such dir, permission, disk full) as a refusal naming the path. */
function fsRefusal(error: unknown, what: string): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  return typeof code === 'string' ? new BackupError(`${what}: ${code} (${(error as Error).message})`) : error
}

function filesUnder(root: string, dir: string): string[] {
  const full = join(root, dir)
  if (!existsSync(full)) return []
  return readdirSync(full, { recursive: true, encoding: 'utf8' })
    .map((name) => join(full, name))
    .filter((path) => statSync(path).isFile())
    .map((path) => relative(root, path))
    .sort()
}

/** The archive's plaintext, chunk by chunk; `counted.files` is the number of files once it is done. */
async function* plaintext(dataDir: string, snapshot: string, counted: { files: number }): AsyncGenerator<Uint8Array> {
  yield MAGIC
  yield frame({ type: 'archive', format: FORMAT, createdAt: new Date().toISOString() })
  // The database: streamed from the snapshot file, never whole in memory.
  const handle = await open(snapshot, 'r')
  try {
    const { size } = await handle.stat()
    yield frame({ type: 'file', path: DB_FILE, size })
    const hash = createHash('sha256')
    let left = size
    while (left > 0) {
      const buffer = Buffer.allocUnsafe(Math.min(READ_CHUNK, left))
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null)
      if (bytesRead === 0) throw new BackupError('the database snapshot ended early')
      const chunk = buffer.subarray(0, bytesRead)
      hash.update(chunk)
      left -= bytesRead
      yield chunk
    }
    yield hash.digest()
    counted.files++
  } finally {
    await handle.close()
  }
  // secrets.json and the shares: small, each read whole (one consistent read
  // of a file another process may replace). After the snapshot: every wallet in it has its shares.
  const small = [...(existsSync(join(dataDir, SECRETS_FILE)) ? [SECRETS_FILE] : []), ...DIRECTORIES.flatMap((dir) => filesUnder(dataDir, dir))]
  for (const path of small) {
    const data = await readFile(join(dataDir, path))
    yield frame({ type: 'file', path, size: data.length })
    yield data
    yield createHash('sha256').update(data).digest()
    counted.files++
  }
  yield frame({ type: 'end', files: counted.files })
}

/** A pull stream over a generator: the next chunk is made only when the encrypter asks for it. */
function pullStream(chunks: AsyncGenerator<Uint8Array>): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const next = await chunks.next()
        if (next.done) controller.close()
        else controller.enqueue(next.value)
      },
      async cancel() {
        await chunks.return(undefined)
      },
    },
    { highWaterMark: 1 },
  )
}

async function writeAll(handle: FileHandle, data: Uint8Array): Promise<void> {
  let written = 0
  while (written < data.length) written += (await handle.write(data, written, data.length - written)).bytesWritten
}

export interface BackupResult {
  files: number
  bytes: number
}

/**
 * Writes the encrypted archive of the SQLite data dir `dataDir` to `out`:
 * a temp file beside it (`.<name>.<random>.tmp`, mode 0600), synced, then
 * renamed. Throws BackupError, leaving nothing behind, when it cannot.
 */
export async function writeBackup(options: { dataDir: string; passphrase: string; out: string; scryptWorkFactor?: number }): Promise<BackupResult> {
  const { dataDir, passphrase, out } = options
  if (passphrase === '') throw new BackupError('the backup passphrase is empty')
  if (!existsSync(dirname(resolve(out)))) throw new BackupError(`cannot write ${out}: ${dirname(resolve(out))} does not exist`)
  const result = await withSqliteSnapshot(dataDir, async (snapshot) => {
    const encrypter = new Encrypter()
    if (options.scryptWorkFactor !== undefined) encrypter.setScryptWorkFactor(options.scryptWorkFactor)
    encrypter.setPassphrase(passphrase)
    const tmp = join(dirname(resolve(out)), `.${basename(out)}.${randomBytes(6).toString('hex')}.tmp`)
    let handle: FileHandle
    try {
      handle = await open(tmp, 'wx', 0o600)
    } catch (error) {
      throw fsRefusal(error, `cannot write ${out}`)
    }
    const counted = { files: 0 }
    let bytes = 0
    try {
      const sealed = await encrypter.encrypt(pullStream(plaintext(dataDir, snapshot, counted)))
      const reader = sealed.getReader()
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        await writeAll(handle, value)
        bytes += value.length
      }
      await handle.sync()
      await handle.close()
      await chmod(tmp, 0o600)
      await rename(tmp, out)
    } catch (error) {
      await handle.close().catch(() => {})
      await rm(tmp, { force: true })
      throw fsRefusal(error, `cannot write ${out}`)
    }
    return { files: counted.files, bytes }
  }).catch((error: unknown) => {
    throw fsRefusal(error, `cannot snapshot the database in ${dataDir}`)
  })
  if (result === null) throw new BackupError(`no database in ${dataDir}`)
  return result
}

/** Reads a decrypted stream in exact amounts. */
class ExactReader {
  #chunks: Uint8Array[] = []
  #buffered = 0
  #ended = false

  constructor(readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}

  async #fill(): Promise<boolean> {
    if (this.#ended) return false
    let next: Awaited<ReturnType<typeof this.reader.read>>
    try {
      next = await this.reader.read()
    } catch (error) {
      throw new BackupError(`the archive is truncated or altered (${(error as Error).message})`)
    }
    if (next.done) {
      this.#ended = true
      return false
    }
    if (next.value.length > 0) {
      this.#chunks.push(next.value)
      this.#buffered += next.value.length
    }
    return true
  }

  #take(n: number): Uint8Array {
    const first = this.#chunks[0]!
    if (first.length >= n) {
      this.#chunks[0] = first.subarray(n)
      if (this.#chunks[0].length === 0) this.#chunks.shift()
      this.#buffered -= n
      return first.subarray(0, n)
    }
    const out = new Uint8Array(n)
    let filled = 0
    while (filled < n) {
      const chunk = this.#chunks[0]!
      const used = Math.min(chunk.length, n - filled)
      out.set(chunk.subarray(0, used), filled)
      filled += used
      if (used === chunk.length) this.#chunks.shift()
      else this.#chunks[0] = chunk.subarray(used)
    }
    this.#buffered -= n
    return out
  }

  /** Exactly `n` bytes; the archive ending first is a refusal. */
  async exact(n: number): Promise<Uint8Array> {
    while (this.#buffered < n) if (!(await this.#fill())) throw new BackupError('the archive ends early (truncated)')
    return this.#take(n)
  }

  /** Between 1 and `max` bytes (what is at hand); the archive ending first is a refusal. */
  async some(max: number): Promise<Uint8Array> {
    while (this.#buffered === 0) if (!(await this.#fill())) throw new BackupError('the archive ends early (truncated)')
    return this.#take(Math.min(max, this.#chunks[0]!.length))
  }

  async atEnd(): Promise<boolean> {
    while (this.#buffered === 0) if (!(await this.#fill())) return true
    return false
  }
}

async function readFrame(input: ExactReader): Promise<Frame> {
  const length = Buffer.from(await input.exact(4)).readUInt32BE(0)
  if (length > MAX_FRAME) throw new BackupError('the archive is not an arena backup (bad frame)')
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(await input.exact(length))) as Frame
  } catch (error) {
    if (error instanceof BackupError) throw error
    throw new BackupError('the archive is not an arena backup (bad frame)')
  }
}

function safePath(path: unknown): string {
  if (typeof path !== 'string' || path === '' || path.startsWith('/') || path.includes('\0') || path.split(/[\\/]/).some((part) => part === '..' || part === '')) {
    throw new BackupError(`bad path in the archive: ${JSON.stringify(path)}`)
  }
  if (path !== DB_FILE && path !== SECRETS_FILE && !DIRECTORIES.some((dir) => path.startsWith(`${dir}/`))) {
    throw new BackupError(`unexpected file in the archive: ${path}`)
  }
  return path
}

/** Decrypts `file` into the empty dir `into`, checking every file's SHA-256 and the end frame; returns the number of files. */
async function extract(file: string, passphrase: string, into: string): Promise<number> {
  const decrypter = new Decrypter()
  decrypter.addPassphrase(passphrase)
  let input: ExactReader
  try {
    input = new ExactReader((await decrypter.decrypt(Bun.file(file).stream())).getReader())
  } catch (error) {
    throw new BackupError(`cannot decrypt ${file}: wrong ARENA_BACKUP_PASSPHRASE, or not an age archive (${(error as Error).message})`)
  }
  const magic = await input.exact(MAGIC.length)
  if (Buffer.from(magic).toString('latin1').startsWith('{"format":"arena-backup/1"')) {
    throw new BackupError(`${file} is an arena-backup/1 archive (an earlier arena wrote it): restore it with that arena, or take a new backup`)
  }
  if (!Buffer.from(magic).equals(Buffer.from(MAGIC))) throw new BackupError(`${file} is not an ${FORMAT} archive`)
  const head = await readFrame(input)
  if (head.type !== 'archive' || head.format !== FORMAT) throw new BackupError(`${file} is not an ${FORMAT} archive`)
  const seen = new Set<string>()
  for (;;) {
    const next = await readFrame(input)
    if (next.type === 'end') {
      if (next.files !== seen.size) throw new BackupError(`the archive lists ${next.files} files but holds ${seen.size}`)
      break
    }
    if (next.type !== 'file' || !Number.isSafeInteger(next.size) || next.size < 0) throw new BackupError('the archive is not an arena backup (bad frame)')
    const path = safePath(next.path)
    if (seen.has(path)) throw new BackupError(`the archive holds ${path} twice`)
    seen.add(path)
    const target = join(into, path)
    await mkdir(dirname(target), { recursive: true, mode: 0o700 })
    const handle = await open(target, 'wx', 0o600)
    const hash = createHash('sha256')
    try {
      let left = next.size
      while (left > 0) {
        const chunk = await input.some(Math.min(left, READ_CHUNK))
        hash.update(chunk)
        await writeAll(handle, chunk)
        left -= chunk.length
      }
      await handle.sync()
    } finally {
      await handle.close()
    }
    if (!hash.digest().equals(Buffer.from(await input.exact(32)))) throw new BackupError(`checksum mismatch for ${path}`)
  }
  if (!(await input.atEnd())) throw new BackupError('the archive holds data after its end')
  if (!seen.has(DB_FILE)) throw new BackupError('the archive holds no database')
  return seen.size
}

/** Whether `dir` is absent or an empty directory (what restore writes into). */
function emptyOrAbsent(dir: string): boolean {
  if (!existsSync(dir)) return true
  return statSync(dir).isDirectory() && readdirSync(dir).length === 0
}

/**
 * Restores `file` into `dataDir` (absent or empty): decrypted into a staging
 * dir beside it, every checksum checked, then `check` run on the staging dir;
 * renamed into place only when `check` says ok. On any failure (a refusal, a
 * failed check) the staging dir is removed and `dataDir` is left as it was.
 */
export async function restoreBackup<R extends { ok: boolean }>(options: {
  file: string
  passphrase: string
  dataDir: string
  check: (stagingDir: string) => Promise<R>
}): Promise<{ files: number; report: R }> {
  const target = resolve(options.dataDir)
  if (!emptyOrAbsent(target)) throw new BackupError(`${options.dataDir} is not empty: restore writes only into an empty or absent data dir`)
  try {
    if (!(await stat(options.file)).isFile()) throw new BackupError(`${options.file} is not a file`)
  } catch (error) {
    throw fsRefusal(error, `cannot read ${options.file}`)
  }
  const parent = dirname(target)
  if (!existsSync(parent)) throw new BackupError(`${parent} does not exist: create it first (restore creates only the data dir itself)`)
  const staging = join(parent, `.${basename(target)}.restoring-${randomBytes(6).toString('hex')}`)
  try {
    await mkdir(staging, { mode: 0o700 })
  } catch (error) {
    throw fsRefusal(error, `cannot create ${staging}`)
  }
  try {
    const files = await extract(options.file, options.passphrase, staging)
    const report = await options.check(staging)
    if (report.ok) {
      if (!emptyOrAbsent(target)) throw new BackupError(`${options.dataDir} is no longer empty: nothing restored`)
      // rename(2) replaces an empty directory atomically.
      await rename(staging, target).catch((error: unknown) => {
        throw fsRefusal(error, `cannot move the restored data dir into ${options.dataDir}`)
      })
      await chmod(target, 0o700)
    }
    return { files, report }
  } catch (error) {
    throw fsRefusal(error, `cannot restore into ${options.dataDir}`)
  } finally {
    await rm(staging, { recursive: true, force: true })
  }
}
