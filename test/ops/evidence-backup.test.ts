// Evidence is kept in backups (contract §17): the files live in the database
// (evidence_blobs), so a backup of the database carries them. On SQLite,
// `arena backup` then `arena restore` into a new data dir; on PostgreSQL
// (where `arena backup` refuses: the database's own tools back it up),
// pg_dump of the database restored with pg_restore into a new one. Either
// way an operator downloads the same bytes from a server started on the copy.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { tempDir } from '../helpers/app'
import { createArenaApp } from '../helpers/arena'
import { testOnEngine } from '../helpers/engine'
import { attached, disputedMatch, download, evidenceOf, samples, sha256 } from '../helpers/evidence'
import { databaseNameOf, findPostgresBinaries, startPostgres } from '../helpers/postgres'
import { run, SOURCE_COMMAND } from '../helpers/process'

const root = mkdtempSync(join(tmpdir(), 'arena-evidence-backup-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

/** A file holding every byte value: any re-encoding on the way would show. */
const everyByte = () => new Uint8Array([...samples.png(), ...Array.from({ length: 256 }, (_, i) => 255 - i), 0, 0x0a, 0x0d])

testOnEngine('sqlite', 'SQLite: arena backup and arena restore carry the evidence; the restored server serves the same bytes', async () => {
  const dataDir = join(root, 'data')
  const source = await createArenaApp({}, { dataDir })
  const { matchId, p1, p2 } = await disputedMatch(source)
  const file = everyByte()
  const first = await attached(source, matchId, p1, file, 'image/png')
  // The same bytes from the other player: one blob, two files; both come back.
  const second = await attached(source, matchId, p2, file, 'image/png')
  const listed = await evidenceOf(source, matchId)
  await source.close()

  const env = { ARENA_DATA_DIR: dataDir, ARENA_BACKUP_PASSPHRASE: 'evidence passphrase' }
  const archive = join(root, 'evidence.age')
  const backup = await run([...SOURCE_COMMAND, 'backup', '--out', archive], env)
  expect({ code: backup.code, stderr: backup.stderr }).toEqual({ code: 0, stderr: '' })
  const restoredDir = join(root, 'restored')
  const restore = await run([...SOURCE_COMMAND, 'restore', archive, '--data-dir', restoredDir], env)
  expect({ code: restore.code, stderr: restore.stderr }).toEqual({ code: 0, stderr: '' })

  const restored = await createArenaApp({}, { dataDir: restoredDir })
  try {
    expect(await evidenceOf(restored, matchId)).toEqual(listed)
    for (const evidence of [first, second]) {
      const res = await download(restored, evidence.id)
      expect(res.status).toBe(200)
      const bytes = new Uint8Array(await res.arrayBuffer())
      expect(sha256(bytes)).toBe(sha256(file))
      expect(Buffer.from(bytes).equals(Buffer.from(file))).toBe(true)
    }
  } finally {
    await restored.close()
  }
}, 60_000)

const pgBin = findPostgresBinaries()

testOnEngine('postgres', 'PostgreSQL: pg_dump restored with pg_restore into a new database carries the evidence; a server on it serves the same bytes', async () => {
  if (pgBin === null) throw new Error('no PostgreSQL binaries (pg_dump, pg_restore) under /usr/lib/postgresql')
  const source = await createArenaApp()
  const { matchId, p1 } = await disputedMatch(source)
  const file = everyByte()
  const evidence = await attached(source, matchId, p1, file, 'image/png')
  const url = source.databaseEnv.ARENA_DATABASE_URL!
  const dump = join(root, 'evidence.dump')
  const dumped = await run([join(pgBin, 'pg_dump'), '--format=custom', '--no-owner', `--file=${dump}`, `--dbname=${url}`], {})
  expect({ code: dumped.code, stderr: dumped.stderr }).toEqual({ code: 0, stderr: '' })
  await source.close()

  const cluster = await startPostgres()
  const name = `${databaseNameOf(url)}_restored`
  await cluster.createDatabase(name)
  const target = cluster.url(name)
  const restoredDump = await run([join(pgBin, 'pg_restore'), '--no-owner', '--exit-on-error', `--dbname=${target}`, dump], {})
  expect({ code: restoredDump.code, stderr: restoredDump.stderr }).toEqual({ code: 0, stderr: '' })

  // A new instance (a data dir of its own) on the restored database, with the source's master key.
  const restored = await createArenaApp({ ARENA_DATABASE_URL: target, ARENA_MASTER_KEY: source.databaseEnv.ARENA_MASTER_KEY! }, { dataDir: tempDir() })
  try {
    const res = await download(restored, evidence.id)
    expect(res.status).toBe(200)
    expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.from(file))).toBe(true)
    expect(await evidenceOf(restored, matchId)).toEqual([expect.objectContaining({ id: evidence.id, sha256: sha256(file) })])
  } finally {
    await restored.close()
  }
}, 60_000)
