// The compiled binary loses no mail to a crash: a mail queued while the SMTP
// server is down waits in the outbox through a SIGKILL; a send cut off by a
// SIGKILL before the server's 250 is made again after the restart; the mail
// arrives exactly once.
import { afterAll, expect, test } from 'bun:test'
import { tempDir, testDatabaseEnv } from '../helpers/app'
import { BINARY, buildBinary, run, startServe, type ServerProcess } from '../helpers/process'
import { freePort, startSmtp, type TestSmtp } from '../helpers/smtp'
import { waitFor } from '../helpers/wait'

const started: ServerProcess[] = []
let smtp: TestSmtp | undefined
afterAll(async () => {
  for (const server of started) server.proc.kill('SIGKILL')
  await smtp?.close()
})

test('killed before and during the send, restarted: the mail arrives exactly once', async () => {
  await buildBinary()
  const port = await freePort()
  const env = {
    ARENA_DATA_DIR: tempDir('arena-mail-crash-'),
    ...(await testDatabaseEnv()),
    ARENA_SMTP_URL: `smtp://127.0.0.1:${port}`,
    ARENA_MAIL_FROM: 'arena <no-reply@crash.example>',
  }
  const cli = async (...args: string[]) => {
    const result = await run([BINARY, 'mail', ...args], env)
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' })
    return result.stdout
  }
  const serve = async () => {
    const server = await startServe([BINARY, 'serve'], env)
    started.push(server)
    return server
  }

  // 1. No SMTP server: the running server tries, fails, and the mail waits.
  const first = await serve()
  expect(JSON.parse(await cli('test', '--to', 'ops@example.com', '--json'))).toEqual({ queued: true, destination: 'smtp' })
  await waitFor('a failed attempt', async () => ((await cli('list', '--to', 'ops@example.com')).includes('queued (1 attempts') ? true : undefined))
  expect(first.lines.some((l) => l.msg === 'mail delivery failed, will retry' && l.attempt === 1)).toBe(true)
  first.proc.kill('SIGKILL')
  await first.proc.exited

  // 2. The SMTP server is up but hangs after the message: killed mid-send, no 250 ever came.
  smtp = await startSmtp({ port, stall: (n) => n === 1 })
  const second = await serve()
  await waitFor('the first offer', async () => (smtp!.offered >= 1 ? true : undefined))
  second.proc.kill('SIGKILL')
  await second.proc.exited
  expect(smtp.received).toHaveLength(0)

  // 3. Restarted: sent again, accepted, marked; never a third time.
  const third = await serve()
  await waitFor('the mail accepted', async () => (smtp!.received.length > 0 ? true : undefined))
  await waitFor('the mail marked sent', async () => ((await cli('list', '--to', 'ops@example.com')).includes('  sent  test  ') ? true : undefined))
  await Bun.sleep(2500)
  expect(smtp.received).toHaveLength(1)
  expect(smtp.offered).toBe(2)
  const mail = smtp.received[0]!
  expect(mail.header('subject')).toBe('arena test mail')
  expect(mail.header('from')).toBe('arena <no-reply@crash.example>')
  expect(mail.text).toContain('arena mail test')
  expect(third.lines.filter((l) => l.msg === 'mail sent')).toHaveLength(1)
  expect((await third.signal('SIGTERM')).code).toBe(0)
}, 90_000)
