// The dev mailbox (contract §8): without SMTP in `local`, mail is kept and
// read back through GET /api/v1/admin/dev/mail (operator token) and
// `arena mail list`; outside `local` the route does not exist. `arena mail
// test` queues a test mail wherever mail goes, and is refused where it goes
// nowhere.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { testMail, verificationMail } from '../../src/modules/mail/templates'
import { req, type TestApp } from '../helpers/app'
import { admin, createArenaApp } from '../helpers/arena'
import { SOURCE_COMMAND, run } from '../helpers/process'

const MAILBOX = '/api/v1/admin/dev/mail'

interface Mailbox {
  messages: { id: string; to: string; subject: string; text: string; createdAt: string }[]
}

let ctx!: TestApp
beforeAll(async () => {
  ctx = await createArenaApp()
})
afterAll(() => ctx.close())

/** Queues a mail through the Mailer, as the account routes do, one second after the last. */
async function queue(to: string, code: string): Promise<void> {
  ctx.clock.advance(1000)
  await ctx.storage.write((tx) => ctx.services.mailer.queue(tx, { address: to, userId: null }, verificationMail(ctx.config, to, code, 48), ctx.clock.now()))
}

/** The CLI on this app's data dir and database. */
function cli(...args: string[]) {
  return run([...SOURCE_COMMAND, 'mail', ...args], { ARENA_DATA_DIR: ctx.config.dataDir, ...ctx.databaseEnv })
}

describe('in local without SMTP', () => {
  beforeAll(async () => {
    expect(ctx.services.mailer.destination).toBe('dev_mailbox')
    await queue('Ada@Example.com', 'AAAAA-11111')
    await queue('bob@example.com', 'BBBBB-22222')
    await queue('ada@example.com', 'AAAAA-33333')
  })

  test('GET /admin/dev/mail?to= answers the mail to that address, any case, newest first', async () => {
    const res = await ctx.handle(req(`${MAILBOX}?to=ADA%40example.COM`, { headers: admin }))
    expect(res.status).toBe(200)
    const { messages } = (await res.json()) as Mailbox
    expect(messages.map((m) => m.to)).toEqual(['ada@example.com', 'Ada@Example.com'])
    expect(messages.map((m) => /[A-Z0-9]{5}-[A-Z0-9]{5}/.exec(m.text)?.[0])).toEqual(['AAAAA-33333', 'AAAAA-11111'])
    expect(Object.keys(messages[0]!).sort()).toEqual(['createdAt', 'id', 'subject', 'text', 'to'])
    expect(messages[0]).toMatchObject({ id: expect.stringMatching(/^mal_[0-9a-f]{32}$/), subject: 'Your arena verification code', createdAt: ctx.clock.now().toISOString() })
    expect(new Date(messages[0]!.createdAt).getTime()).toBeGreaterThan(new Date(messages[1]!.createdAt).getTime())
  })

  test('without `to`: the newest mail to anyone; an address with none: an empty list', async () => {
    const all = (await (await ctx.handle(req(MAILBOX, { headers: admin }))).json()) as Mailbox
    expect(all.messages.map((m) => m.to)).toEqual(['ada@example.com', 'bob@example.com', 'Ada@Example.com'])
    const none = await ctx.handle(req(`${MAILBOX}?to=nobody%40example.com`, { headers: admin }))
    expect(await none.json()).toEqual({ messages: [] })
  })

  test('the operator token is required: 401 without it or with a wrong one; a bad query is 422', async () => {
    for (const headers of [{}, { 'x-admin-token': 'not-the-token' }] as Record<string, string>[]) {
      const res = await ctx.handle(req(`${MAILBOX}?to=ada%40example.com`, { headers }))
      expect(res.status).toBe(401)
      expect(await res.json()).toEqual({ error: { code: 'unauthorized', message: expect.stringContaining('x-admin-token'), status: 401 } })
    }
    for (const query of ['to=', `to=${'a'.repeat(255)}`]) {
      const res = await ctx.handle(req(`${MAILBOX}?${query}`, { headers: admin }))
      expect(res.status).toBe(422)
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('validation_failed')
    }
  })

  test('`arena mail list` prints what was queued: every message with its text, or --json as the route answers', async () => {
    const text = await cli('list', '--to', 'ada@example.com')
    expect({ code: text.code, stderr: text.stderr }).toEqual({ code: 0, stderr: '' })
    expect(text.stdout).toMatch(/^mal_[0-9a-f]{32} {2}\S+ {2}kept {2}verify_email {2}to ada@example.com\n {2}Subject: Your arena verification code\n/)
    expect(text.stdout.indexOf('AAAAA-33333')).toBeLessThan(text.stdout.indexOf('AAAAA-11111'))
    expect(text.stdout).not.toContain('BBBBB-22222')

    const json = await cli('list', '--json')
    expect(json.code).toBe(0)
    const route = (await (await ctx.handle(req(MAILBOX, { headers: admin }))).json()) as Mailbox
    expect(JSON.parse(json.stdout)).toEqual(route)

    expect((await cli('list', '--to', 'nobody@example.com')).stdout).toBe('no mail\n')
  })

  test('`arena mail test --to` keeps a test mail in the dev mailbox; usage mistakes exit 2', async () => {
    const queued = await cli('test', '--to', 'ops@example.com', '--json')
    expect({ code: queued.code, stderr: queued.stderr }).toEqual({ code: 0, stderr: '' })
    expect(JSON.parse(queued.stdout)).toEqual({ queued: true, destination: 'dev_mailbox' })
    const { messages } = (await (await ctx.handle(req(`${MAILBOX}?to=ops%40example.com`, { headers: admin }))).json()) as Mailbox
    expect(messages).toHaveLength(1)
    expect(messages[0]).toMatchObject({ to: 'ops@example.com', subject: testMail(ctx.config, new Date()).subject })
    expect(messages[0]!.text).toContain('arena mail test')

    for (const args of [['test'], ['test', '--to', 'not-an-address'], ['list', '--to', ''], ['send'], [], ['list', 'extra']]) {
      const result = await cli(...args)
      expect(result.code).toBe(2)
      expect(result.stderr).toContain('Usage: npx arena mail')
    }
  })
})

describe('outside local', () => {
  let sandbox!: TestApp
  beforeAll(async () => {
    sandbox = await createArenaApp({ ARENA_ENV: 'sandbox' })
  })
  afterAll(() => sandbox.close())

  test('GET /admin/dev/mail is the ordinary 404, token or not', async () => {
    for (const headers of [admin, {}] as Record<string, string>[]) {
      const res = await sandbox.handle(req(`${MAILBOX}?to=ada%40example.com`, { headers }))
      expect(res.status).toBe(404)
      expect(((await res.json()) as { error: { code: string; status: number } }).error).toMatchObject({ code: 'not_found', status: 404 })
    }
  })

  test('without SMTP, `arena mail test` is refused: mail would go nowhere', async () => {
    const result = await run([...SOURCE_COMMAND, 'mail', 'test', '--to', 'ops@example.com'], { ARENA_DATA_DIR: sandbox.config.dataDir, ARENA_ENV: 'sandbox', ...sandbox.databaseEnv })
    expect(result.code).toBe(1)
    expect(result.stderr).toBe('arena: Mail is not configured on this server (ARENA_SMTP_URL)\n')
    expect(await sandbox.storage.read.mail.recent(10)).toEqual([])
  })
})

describe('with SMTP', () => {
  test('`arena mail list` shows where queued mail stands, never its body: it may carry a live code', async () => {
    const smtpApp = await createArenaApp({ ARENA_ENV: 'sandbox', ARENA_SMTP_URL: 'smtp://127.0.0.1:1' })
    try {
      await smtpApp.storage.write((tx) =>
        smtpApp.services.mailer.queue(tx, { address: 'cy@example.com', userId: null }, verificationMail(smtpApp.config, 'cy@example.com', 'CCCCC-44444', 48), smtpApp.clock.now()),
      )
      const env = { ARENA_DATA_DIR: smtpApp.config.dataDir, ARENA_ENV: 'sandbox', ARENA_SMTP_URL: 'smtp://127.0.0.1:1', ...smtpApp.databaseEnv }
      const text = await run([...SOURCE_COMMAND, 'mail', 'list', '--to', 'cy@example.com'], env)
      expect(text.code).toBe(0)
      expect(text.stdout).toContain('queued  verify_email  to cy@example.com')
      const json = await run([...SOURCE_COMMAND, 'mail', 'list', '--json'], env)
      for (const out of [text.stdout, json.stdout]) expect(out).not.toContain('CCCCC-44444')
    } finally {
      await smtpApp.close()
    }
  })
})
