// Arena.Sdk's events against a real server: an in-process app served on a
// loopback port (test/helpers/sockets.ts), a C# program (sdk/csharp/Tests~/Live/Events.cs)
// compiled with the SDK by mcs at C# 7 and run under mono: a login elsewhere heard
// by socket, then by long poll, then resumed after a reconnect with nothing lost or
// heard twice, the fall back to the long poll behind a proxy that drops the upgrade,
// and the end on 4001 when the subscribing session logs out.
import { afterEach, describe, expect } from 'bun:test'
import { join } from 'node:path'
import { createArenaApp, players } from '../helpers/arena'
import { PASSWORD } from '../helpers/auth'
import { CSHARP_ROOT, compileCsharp, csharpSources, csharpTest, runMono } from '../helpers/csharp'
import { serve, upgradeStrippingProxy } from '../helpers/sockets'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

describe('Arena.Sdk events (mono, real server)', () => {
  csharpTest(
    'socket, long poll, resume from a saved cursor, the fall back behind a proxy, 4001',
    async () => {
      const exe = await compileCsharp({ name: 'Arena.Sdk.Live.Events', sources: [...csharpSources('Runtime'), join(CSHARP_ROOT, 'Tests~', 'Live', 'Events.cs')], target: 'exe' })
      const ctx = await createArenaApp()
      cleanups.push(() => ctx.close())
      const served = serve(ctx)
      cleanups.push(() => served.stop())
      const proxy = upgradeStrippingProxy(served.url)
      cleanups.push(() => proxy.stop())
      const [player] = await players(ctx, 1)

      const result = await runMono(exe, [served.url, proxy.url, player!.username, PASSWORD], {}, 100_000)
      if (result.code !== 0) console.error(result.stdout, result.stderr)
      expect(result.stdout.trim().split('\n')).toEqual(['ok socket', 'ok long poll', 'ok resume', 'ok fall back', 'ok session ended'])
      expect(result.code).toBe(0)
      // The proxy saw the three upgrades it refused; the server's sockets are all closed.
      expect(proxy.upgradesRefused()).toBe(3)
      expect(ctx.services.sockets.openSockets()).toBe(0)
    },
    150_000,
  )
})
