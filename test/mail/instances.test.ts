// Several instances on one PostgreSQL database each run the mail delivery
// loop as the server does (startLoop on storage.loopLeases): one sends at a
// time, so every mail reaches the SMTP server exactly once. (SQLite is one
// server per data dir; its leases are the process's own.)
import { describe, expect, test } from 'bun:test'
import { startLoop } from '../../src/background/loops'
import { MailDelivery } from '../../src/modules/mail/delivery'
import { testMail } from '../../src/modules/mail/templates'
import { createLogger } from '../../src/shared/logger'
import { describeOnEngine } from '../helpers/engine'
import { twoInstances } from '../helpers/arena'
import { startSmtp } from '../helpers/smtp'
import { waitFor } from '../helpers/wait'

describeOnEngine('postgres', 'two instances delivering', () => {
  test('every mail arrives exactly once, whichever instance sent it', async () => {
    // A slow server: a send lasts long enough for the other instance's ticks to find the loop held.
    const server = await startSmtp({ delayMs: 60 })
    const { one, two } = await twoInstances({ ARENA_SMTP_URL: `smtp://127.0.0.1:${server.port}` })
    const ticks = [0, 0]
    const loops = [one, two].map((ctx, i) => {
      const delivery = new MailDelivery({ storage: ctx.storage, clock: ctx.clock, logger: createLogger('silent'), config: ctx.config })
      const loop = startLoop({
        name: 'mail delivery',
        everyMs: 10,
        leases: ctx.storage.loopLeases,
        logger: createLogger('silent'),
        tick: async () => {
          ticks[i]!++
          await delivery.deliverDue()
        },
      })
      return { stop: async () => (delivery.stop(), await loop.stop()) }
    })
    try {
      const count = 8
      for (let i = 0; i < count; i++) {
        const ctx = i % 2 === 0 ? one : two
        await ctx.storage.write((tx) => ctx.services.mailer.queue(tx, { address: `p${i}@example.com`, userId: null }, testMail(ctx.config, ctx.clock.now()), ctx.clock.now()))
      }
      await waitFor('every mail sent', async () => ((await one.storage.read.mail.recent(100)).every((m) => m.status === 'sent') ? true : undefined))
      // A while longer: a second send would show up now.
      await Bun.sleep(300)
      expect(server.offered).toBe(count)
      expect(new Set(server.received.map((m) => m.header('message-id'))).size).toBe(count)
      expect(server.received.map((m) => m.envelopeTo[0]).sort()).toEqual(Array.from({ length: count }, (_, i) => `p${i}@example.com`).sort())
      expect(ticks[0]! + ticks[1]!).toBeGreaterThan(count)
    } finally {
      await Promise.all(loops.map((l) => l.stop()))
      await server.close()
    }
  }, 30_000)
})
