// The C# SDK's unit tests (sdk/csharp/Tests~, against FakeTransport): compiled
// with the SDK by mcs at C# 7, run once under mono; each C# test is reported
// here as its own test, so a failure names it.
import { beforeAll, describe, expect } from 'bun:test'
import { compileUnitTests, csharpMissing, csharpTest, runMono, type MonoResult } from '../helpers/csharp'

describe('Arena.Sdk unit tests (mono)', () => {
  let result: MonoResult
  beforeAll(async () => {
    if (csharpMissing() !== undefined) return
    result = await runMono(await compileUnitTests())
  }, 240_000)

  csharpTest('every test ran and passed', () => {
    const lines = result.stdout.trim().split('\n')
    const failed = lines.filter((line) => line.startsWith('FAIL '))
    if (failed.length > 0) console.error(result.stderr)
    expect(failed).toEqual([])
    expect(result.code).toBe(0)
    const summary = lines.at(-1)!
    expect(summary).toMatch(/^\d+ tests, 0 failed$/)
    expect(Number(summary.split(' ')[0])).toBeGreaterThan(0)
    // Each test said ok by name.
    const ok = lines.filter((line) => line.startsWith('ok '))
    expect(ok.length).toBe(Number(summary.split(' ')[0]))
  })
})
