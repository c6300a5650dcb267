// @arena/sdk must run in Bun, Node 20+ and browsers: fetch only, nothing of the
// server and no runtime built-ins. Here: its source bundles for the browser
// clean. package.test.ts runs the packed package under Node and Bun.
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { ROOT } from '../helpers/process'

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
    // The SDK is small: a runaway import would show here first. (About 43 KB with
    // the event socket's client, events.connect, which added 10 KB.)
    expect(code.length).toBeLessThan(50_000)
  })
})
