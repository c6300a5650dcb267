// `arena backup` / `arena restore` as processes (source command): refusals and
// a round trip. (The load-during-backup test with a signed withdrawal after
// restore on the compiled binary is still to be written.)
import { describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { run, SOURCE_COMMAND } from '../helpers/process'

const arena = (args: string[], env: Record<string, string>) => run([...SOURCE_COMMAND, ...args], env)

describe('arena backup and restore', () => {
  test('refusals, and a round trip that checks the ledger and both chains', async () => {
    const root = mkdtempSync(join(tmpdir(), 'arena-backup-'))
    const data = join(root, 'data')
    expect((await arena(['migrate'], { ARENA_DATA_DIR: data })).code).toBe(0)
    const archive = join(root, 'b.age')

    const unencrypted = await arena(['backup', '--out', archive], { ARENA_DATA_DIR: data })
    expect(unencrypted.code).toBe(1)
    expect(unencrypted.stderr).toContain('ARENA_BACKUP_PASSPHRASE')
    expect(readdirSync(root)).toEqual(['data'])

    const env = { ARENA_DATA_DIR: data, ARENA_BACKUP_PASSPHRASE: 'correct horse' }
    expect((await arena(['backup', '--out', archive], env)).code).toBe(0)

    const wrong = await arena(['restore', archive, '--data-dir', join(root, 'w')], { ...env, ARENA_BACKUP_PASSPHRASE: 'wrong' })
    expect(wrong.code).toBe(1)
    expect(existsSync(join(root, 'w'))).toBe(false)

    const bytes = readFileSync(archive)
    writeFileSync(join(root, 't.age'), bytes.subarray(0, bytes.length - 100))
    const edited = Buffer.from(bytes)
    edited[edited.length - 50]! ^= 1
    writeFileSync(join(root, 'e.age'), edited)
    for (const name of ['t.age', 'e.age']) {
      const refused = await arena(['restore', join(root, name), '--data-dir', join(root, `r-${name}`)], env)
      expect(refused.code).toBe(1)
      expect(existsSync(join(root, `r-${name}`))).toBe(false)
    }

    expect((await arena(['restore', archive, '--data-dir', data], env)).code).toBe(1)

    const restored = await arena(['restore', archive, '--data-dir', join(root, 'r'), '--json'], env)
    expect(restored.code).toBe(0)
    const report = JSON.parse(restored.stdout) as { ok: boolean }
    expect(report.ok).toBe(true)
  }, 60_000)
})
