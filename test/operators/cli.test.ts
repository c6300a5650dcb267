// `arena operator create|list|disable|reset-password`, run as a child
// process on the app's own database: the one-time password printed once and
// usable, the actions audited as `cli:<OS user>`, bad words exit 2, a refused
// action exits 1.
import { afterAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { postJson, tempDir } from '../helpers/app'
import { createArenaApp } from '../helpers/arena'
import { CLI_OPERATOR, run, SOURCE_COMMAND } from '../helpers/process'
import { OPERATOR_PASSWORD } from '../helpers/operators'

const dataDir = tempDir('arena-cli-operators-')
const app = await createArenaApp({}, { dataDir })
afterAll(async () => {
  await app.close()
  rmSync(dataDir, { recursive: true, force: true })
})

test('create prints a one-time password once; list, reset-password and disable act on the database, audited as cli:<OS user>', async () => {
  const env = { ARENA_DATA_DIR: dataDir, ...app.databaseEnv }
  const cli = async (...args: string[]) => {
    const result = await run([...SOURCE_COMMAND, ...args], env)
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' })
    return result.stdout
  }
  const text = await cli('operator', 'create', 'Grace', '--role', 'moderator')
  const password = /password (\S+)/.exec(text)?.[1]
  expect(password).toBeDefined()
  expect(text).toContain('one-time')
  const signIn = (body: Record<string, string>) => app.handle(postJson('/api/v1/admin/sessions', { name: 'grace', ...body }))
  expect((await signIn({ password: password!, newPassword: OPERATOR_PASSWORD })).status).toBe(201)

  const { operators } = JSON.parse(await cli('operator', 'list', '--json'))
  expect(operators).toEqual([expect.objectContaining({ name: 'Grace', role: 'moderator', disabled: false })])
  expect(await cli('operator', 'list')).toContain('Grace')

  const reset = JSON.parse(await cli('operator', 'reset-password', 'GRACE', '--json'))
  expect(reset.password).not.toBe(password)
  expect((await signIn({ password: OPERATOR_PASSWORD })).status).toBe(401)
  expect((await signIn({ password: reset.password, newPassword: OPERATOR_PASSWORD })).status).toBe(201)

  expect(await cli('operator', 'disable', 'grace')).toContain('disabled')
  expect((await signIn({ password: OPERATOR_PASSWORD })).status).toBe(401)
  expect(await cli('operator', 'enable', 'grace')).toContain('enabled')
  expect(JSON.parse(await cli('operator', 'set-role', 'grace', '--role', 'finance', '--json')).operator.role).toBe('finance')
  const signedIn = await signIn({ password: OPERATOR_PASSWORD })
  expect(signedIn.status).toBe(201)
  expect(((await signedIn.json()) as { operator: { role: string } }).operator.role).toBe('finance')

  const records = await app.storage.read.audit.auditAfter(0, 100)
  const who = CLI_OPERATOR
  expect(records.map((r) => [r.action, r.operatorName, r.role, r.via])).toEqual([
    ['operator.create', who, 'admin', 'cli'],
    ['operator.reset_password', who, 'admin', 'cli'],
    ['operator.disable', who, 'admin', 'cli'],
    ['operator.enable', who, 'admin', 'cli'],
    ['operator.role', who, 'admin', 'cli'],
  ])
}, 60_000)

test('wrong words exit 2; a refused action exits 1 saying why', async () => {
  const env = { ARENA_DATA_DIR: dataDir, ...app.databaseEnv }
  expect((await run([...SOURCE_COMMAND, 'operator', 'create', 'heidi'], env)).code).toBe(2)
  expect((await run([...SOURCE_COMMAND, 'operator', 'create', 'heidi', '--role', 'root'], env)).code).toBe(2)
  expect((await run([...SOURCE_COMMAND, 'operator', 'promote', 'heidi'], env)).code).toBe(2)
  const missing = await run([...SOURCE_COMMAND, 'operator', 'disable', 'nobody'], env)
  expect(missing.code).toBe(1)
  expect(missing.stderr).toContain('No such operator')
  expect((await run([...SOURCE_COMMAND, 'operator', 'create', 'ivan', '--role', 'admin'], env)).code).toBe(0)
  const twice = await run([...SOURCE_COMMAND, 'operator', 'create', 'IVAN', '--role', 'viewer'], env)
  expect(twice.code).toBe(1)
  const notEnrolled = await run([...SOURCE_COMMAND, 'operator', 'disable-totp', 'ivan'], env)
  expect(notEnrolled.code).toBe(1)
  expect(notEnrolled.stderr).toContain('TOTP is not enrolled')
  expect((await run([...SOURCE_COMMAND, 'operator', 'set-role', 'ivan'], env)).code).toBe(2)
  expect((await run([...SOURCE_COMMAND, 'operator', 'set-role', 'ivan', '--role', 'viewer'], env)).stderr).toContain('last enabled admin')
  const last = await run([...SOURCE_COMMAND, 'operator', 'disable', 'ivan'], env)
  expect(last.code).toBe(1)
  expect(last.stderr).toContain('last enabled admin')
}, 60_000)
