// arena/sdk must run in Bun, Node 20+ and browsers: fetch only, nothing of the
// server and no runtime built-ins in its bundle, and the package export works
// for Node as it does for Bun.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import * as viaPackage from 'arena/sdk'
import * as viaSource from '../../packages/sdk/src/index'
import { createArenaApp } from '../helpers/arena'
import type { TestApp } from '../helpers/app'
import { funded, PIN } from '../helpers/purchases'
import { ROOT, run } from '../helpers/process'
import { PASSWORD } from '../helpers/auth'

describe('SDK bundle', () => {
  test('bundles for the browser with nothing of the server and no Node or Bun built-ins', async () => {
    const build = await Bun.build({ entrypoints: [join(ROOT, 'packages/sdk/src/index.ts')], target: 'browser', format: 'esm' })
    expect(build.logs).toEqual([])
    expect(build.success).toBe(true)
    const code = await build.outputs[0]!.text()
    expect(code).not.toMatch(/from\s*["'](node:|bun)/)
    expect(code).not.toMatch(/\brequire\(/)
    expect(code).not.toMatch(/\b(Buffer|process|Bun)\./)
    expect(code).not.toMatch(/elysia|drizzle|sqlite|typebox/i)
    // The SDK is small: a runaway import would show here first.
    expect(code.length).toBeLessThan(40_000)
  })

  test('arena/sdk resolves (package.json exports) to the same module in Bun', () => {
    expect(viaPackage.createClient).toBe(viaSource.createClient)
  })
})

describe('SDK on Node', () => {
  let ctx: TestApp
  let server: ReturnType<typeof Bun.serve>
  beforeAll(async () => {
    const built = await run([process.execPath, 'run', 'build:sdk'])
    expect(built.code).toBe(0)
    ctx = createArenaApp()
    server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => ctx.handle(request) })
  })
  afterAll(async () => {
    await server?.stop(true)
    ctx?.close()
  })

  test('node imports arena/sdk from the package and signs in, reads the wallet and authorizes a purchase', async () => {
    const player = await funded(ctx, '10')
    const script = `
      import { createClient, ApiError } from 'arena/sdk'
      const arena = createClient({ baseUrl: process.argv[1] })
      const user = await arena.auth.login(process.argv[2], process.argv[3])
      const wallet = await arena.wallet()
      const wrong = await arena.auth.login(process.argv[2], 'wrong password').catch((e) => e)
      const stillSignedIn = arena.auth.signedIn
      await arena.auth.login(process.argv[2], process.argv[3])
      const sale = await arena.purchases.authorize({ pin: process.argv[4], amount: '2.5', destinationAddress: wallet.address })
      console.log(JSON.stringify({ node: process.version, user: user.username, balance: wallet.balance, wrong: wrong instanceof ApiError ? wrong.code : String(wrong), stillSignedIn, valid: sale.valid, status: sale.withdrawal?.status }))
    `
    const node = Bun.spawn(['node', '--input-type=module', '-e', script, server.url.origin, player.username, PASSWORD, PIN], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
    const [out, err, code] = await Promise.all([new Response(node.stdout).text(), new Response(node.stderr).text(), node.exited])
    expect(err).toBe('')
    expect(code).toBe(0)
    const result = JSON.parse(out)
    expect(Number(result.node.slice(1).split('.')[0])).toBeGreaterThanOrEqual(20)
    expect(result).toMatchObject({ user: player.username, balance: '10', wrong: 'invalid_credentials', stillSignedIn: true, valid: true, status: 'signed' })
  })
})
