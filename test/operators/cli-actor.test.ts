// The command line's actor is named by the OS account database, never by the
// environment: an `arena` command run with `USER` unset (root under docker
// exec, systemd, cron) is audited as `cli:<the uid's name>`, not
// `cli:unknown`, and one run with `USER=mallory` is not audited as mallory.
import { afterAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { tempDir } from '../helpers/app'
import { createArenaApp } from '../helpers/arena'
import { CLI_OPERATOR, run, SOURCE_COMMAND } from '../helpers/process'
import { accountNameOf } from '../../src/cli/actor'

const dataDir = tempDir('arena-cli-actor-')
const app = await createArenaApp({}, { dataDir })
afterAll(async () => {
  await app.close()
  rmSync(dataDir, { recursive: true, force: true })
})

test('accountNameOf reads the uid from passwd(5) lines', () => {
  const passwd = ['root:x:0:0:root:/root:/bin/bash', '+nis::::::', 'daemon:x:1:1::/usr/sbin:/usr/sbin/nologin', '', 'broken line', 'arena:x:1000:1000::/home/arena:/bin/sh', 'shadow:x:1000:1000::/:/bin/sh'].join('\n')
  expect([0, 1, 1000, 4242].map((uid) => accountNameOf(uid, passwd))).toEqual(['root', 'daemon', 'arena', null])
  expect(accountNameOf(0, '')).toBeNull()
  expect(accountNameOf(0, 'x:y:0a:0')).toBeNull()
})

test('a command run with USER unset, empty or naming someone else is audited under the name of the uid running it', async () => {
  expect(CLI_OPERATOR).not.toBe('cli:unknown')
  const env = { ARENA_DATA_DIR: dataDir, ...app.databaseEnv }
  const environments: Record<string, string>[] = [{ USER: '', LOGNAME: '' }, { USER: 'mallory', LOGNAME: 'mallory' }]
  for (const [i, names] of environments.entries()) {
    const result = await run([...SOURCE_COMMAND, 'operator', 'create', `op${i}`, '--role', 'viewer'], { ...env, ...names })
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' })
  }
  const records = await app.storage.read.audit.auditAfter(0, 10)
  expect(records.map((r) => [r.action, r.target !== null, r.operatorName, r.via])).toEqual([
    ['operator.create', true, CLI_OPERATOR, 'cli'],
    ['operator.create', true, CLI_OPERATOR, 'cli'],
  ])
}, 60_000)
