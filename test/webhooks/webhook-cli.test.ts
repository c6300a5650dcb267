// `arena webhook add|list|update|delete|rotate-secret|deliveries|resend`, run
// as a child process on the app's own database (either engine): the admin
// API's service methods, audited as `cli:<OS user>`, printing what the routes
// answer (`--json`); the secret printed once, at add and rotate-secret; what
// the API refuses exits 1 naming the flag or the code, wrong words exit 2.
import { afterAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { tempDir } from '../helpers/app'
import { createArenaApp } from '../helpers/arena'
import { publishMatchDecided, recordAttempt } from '../helpers/webhook-deliveries'
import { CLI_OPERATOR, run, SOURCE_COMMAND } from '../helpers/process'
import { sealedSecretName, webhookSealKey } from '../../src/modules/webhooks/secret'

const dataDir = tempDir('arena-webhook-cli-')
const app = await createArenaApp({}, { dataDir })
afterAll(async () => {
  await app.close()
  rmSync(dataDir, { recursive: true, force: true })
})

const PUBLIC = 'https://93.184.215.14/hooks/arena'

test('add, update, disable and enable, resend, list deliveries, rotate the secret, list and delete (audited as cli:<OS user>); refusals exit 1 naming the flag, wrong words 2', async () => {
  const env = { ARENA_DATA_DIR: dataDir, ...app.databaseEnv }
  const arena = (...args: string[]) => run([...SOURCE_COMMAND, 'webhook', ...args], env)
  const opened = async (id: string) => webhookSealKey(app.secrets.chainKey).open((await app.storage.read.webhooks.get(id))!.secretSealed, sealedSecretName(id))

  const [added, badTypes, loopback, wrong, noUrl] = await Promise.all([
    arena('add', '--url', PUBLIC, '--types', 'match.decided, user.created', '--description', 'Studio backend', '--json'),
    arena('add', '--url', PUBLIC, '--types', 'match.decided,user.deleted'),
    arena('add', '--url', 'http://127.0.0.1:8080/hook', '--types', 'match.decided'),
    arena('remove', 'whk_00000000000000000000000000000000'),
    arena('add', '--types', 'match.decided'),
  ])
  expect({ code: added.code, stderr: added.stderr }).toEqual({ code: 0, stderr: '' })
  const { webhook, secret } = JSON.parse(added.stdout)
  expect(webhook.id).toMatch(/^whk_/)
  expect(webhook).toMatchObject({ url: PUBLIC, types: ['user.created', 'match.decided'], description: 'Studio backend', enabled: true })
  expect(secret).toBe(await opened(webhook.id))
  expect([badTypes.code, badTypes.stderr]).toEqual([1, expect.stringContaining('--types')])
  expect(badTypes.stderr).toContain('user.deleted')
  expect([loopback.code, loopback.stderr]).toEqual([1, expect.stringContaining('127.0.0.1')])
  expect([wrong.code, noUrl.code]).toEqual([2, 2])
  expect(noUrl.stderr).toContain('missing --url')
  expect(await app.storage.read.webhooks.count()).toBe(1)

  // A delivery that failed: not resent while its endpoint is disabled.
  const [deliveryId] = await publishMatchDecided(app)
  await recordAttempt(app, deliveryId!, { statusCode: 500, error: 'http_500' })
  const disabled = await arena('update', webhook.id, '--types', 'match.decided', '--description', '', '--disable', '--json')
  expect({ code: disabled.code, stderr: disabled.stderr }).toEqual({ code: 0, stderr: '' })
  expect(JSON.parse(disabled.stdout).webhook).toMatchObject({ types: ['match.decided'], description: null, enabled: false, disabledReason: 'operator' })
  const refused = await arena('resend', deliveryId!)
  expect([refused.code, refused.stderr]).toEqual([1, expect.stringContaining('endpoint is disabled')])

  expect((await arena('update', webhook.id, '--enable')).stdout).toMatch(/^webhook whk_\w+ updated\nenabled\s+whk_/)
  const resent = await arena('resend', deliveryId!, '--json')
  expect({ code: resent.code, stderr: resent.stderr }).toEqual({ code: 0, stderr: '' })
  expect(JSON.parse(resent.stdout).delivery).toMatchObject({ id: deliveryId, status: 'pending', attempts: [{ attempt: 1, statusCode: 500, error: 'http_500' }] })

  const [deliveries, rotated, unknownFlag, listed] = await Promise.all([arena('deliveries', webhook.id), arena('rotate-secret', webhook.id, '--json'), arena('list', '--url', PUBLIC), arena('list')])
  expect(deliveries.stdout.trim()).toMatch(new RegExp(`^pending\\s+${deliveryId}\\s+match\\.decided .*msg_\\w+\\n  #1  \\S+  http_500  HTTP 500  12 ms$`))
  const fresh = JSON.parse(rotated.stdout)
  expect(fresh.secret).not.toBe(secret)
  expect(fresh.secret).toBe(await opened(webhook.id))
  expect(fresh.webhook.previousSecretExpiresAt).toEqual(expect.any(String))
  expect(unknownFlag.code).toBe(2)

  expect(listed.stdout.trim()).toBe(`enabled              ${webhook.id}  ${PUBLIC}  match.decided`)
  expect(listed.stdout).not.toContain(fresh.secret.slice(6))
  const deleted = await arena('delete', webhook.id)
  expect({ code: deleted.code, stdout: deleted.stdout.trim() }).toEqual({ code: 0, stdout: `webhook ${webhook.id} deleted with its deliveries` })
  expect((await arena('delete', webhook.id)).code).toBe(1)

  const records = (await app.storage.read.audit.auditAfter(0, 200)).filter((r) => r.target === webhook.id || r.target === deliveryId)
  expect(records.map((r) => [r.action, r.operatorName, r.via])).toEqual([
    ['webhook.create', CLI_OPERATOR, 'cli'],
    ['webhook.update', CLI_OPERATOR, 'cli'],
    ['webhook.update', CLI_OPERATOR, 'cli'],
    ['webhook_delivery.resend', CLI_OPERATOR, 'cli'],
    ['webhook.rotate_secret', CLI_OPERATOR, 'cli'],
    ['webhook.delete', CLI_OPERATOR, 'cli'],
  ])
})
