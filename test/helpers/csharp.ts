// Compiling and running the C# SDK (sdk/csharp) the way CI can: Debian Mono's
// mcs at C# 7 with warnings as errors, Newtonsoft.Json from Debian's
// libnewtonsoft-json-cil-dev, and mono to run. Compiled once per test process
// per set of sources (the outputs go to a temp dir).
import { copyFileSync, existsSync, readdirSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { test } from 'bun:test'
import { tempDir } from './app'
import { ROOT } from './process'

export const CSHARP_ROOT = join(ROOT, 'sdk', 'csharp')

/** Where Debian's libnewtonsoft-json-cil-dev puts the assembly (Unity brings its own). */
const NEWTONSOFT_CANDIDATES = ['/usr/lib/cli/Newtonsoft.Json-5.0/Newtonsoft.Json.dll', '/usr/lib/mono/4.5/Newtonsoft.Json.dll']

export function newtonsoftJson(): string | undefined {
  return NEWTONSOFT_CANDIDATES.find((path) => existsSync(path))
}

/** Why C# tests cannot run here, or undefined when they can. */
export function csharpMissing(): string | undefined {
  if (Bun.which('mcs') === null || Bun.which('mono') === null) return 'mcs and mono are missing: install Debian package mono-devel'
  if (newtonsoftJson() === undefined) return 'Newtonsoft.Json is missing: install Debian package libnewtonsoft-json-cil-dev'
  return undefined
}

/**
 * `describe`-level guard: where mono is missing the C# tests skip with the
 * reason, except in CI (CI=true), where one failing test says what to install.
 */
export function csharpTest(name: string, fn: () => Promise<void> | void, timeout = 120_000): void {
  const missing = csharpMissing()
  if (missing === undefined) return void test(name, fn, timeout)
  if (process.env.CI === 'true' || process.env.CI === '1') {
    test(`${name} (C# toolchain)`, () => {
      throw new Error(missing)
    })
  } else {
    console.warn(`skipping "${name}": ${missing}`)
    test.skip(name, fn)
  }
}

/** Every .cs file under `dir` (relative to sdk/csharp), sorted. */
export function csharpSources(dir: string): string[] {
  const root = join(CSHARP_ROOT, dir)
  const out: string[] = []
  const walk = (at: string) => {
    for (const name of readdirSync(at).sort()) {
      const path = join(at, name)
      if (statSync(path).isDirectory()) walk(path)
      else if (name.endsWith('.cs')) out.push(path)
    }
  }
  walk(root)
  return out
}

const compiled = new Map<string, string>()

/**
 * Compiles `sources` (absolute paths) with the SDK's flags into an exe or a
 * library in a temp dir beside a copy of Newtonsoft.Json, and returns its path.
 * `defines` adds -define: symbols (a compile check of UNITY_WEBGL code, say).
 */
export async function compileCsharp(options: { name: string; sources: string[]; target: 'exe' | 'library'; references?: string[]; defines?: string[] }): Promise<string> {
  const key = JSON.stringify(options)
  const known = compiled.get(key)
  if (known) return known
  const json = newtonsoftJson()
  if (!json) throw new Error(csharpMissing())
  const dir = tempDir('arena-csharp-')
  copyFileSync(json, join(dir, 'Newtonsoft.Json.dll'))
  for (const reference of options.references ?? []) copyFileSync(reference, join(dir, reference.split('/').pop()!))
  const out = join(dir, `${options.name}.${options.target === 'exe' ? 'exe' : 'dll'}`)
  const args = [
    'mcs',
    '-langversion:7',
    '-warnaserror+',
    '-nologo',
    `-target:${options.target}`,
    `-out:${out}`,
    '-r:System.Net.Http.dll',
    `-r:${json}`,
    ...(options.references ?? []).map((reference) => `-r:${reference}`),
    ...(options.defines ?? []).map((define) => `-define:${define}`),
    ...options.sources.map((source) => relative(CSHARP_ROOT, source)),
  ]
  const proc = Bun.spawn(args, { cwd: CSHARP_ROOT, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  if (code !== 0) throw new Error(`mcs failed (${code}):\n${stdout}${stderr}`)
  compiled.set(key, out)
  return out
}

/** The SDK alone, as the library a game references. */
export function compileSdk(): Promise<string> {
  return compileCsharp({ name: 'Arena.Sdk', sources: csharpSources('Runtime'), target: 'library' })
}

/**
 * The SDK and the unit tests of Tests~ (and `extra` sources) as one exe: internals are visible to the tests.
 * Tests~/Journey, Tests~/Live and Tests~/Tools hold programs with their own Main (journeys, live runs, the
 * drift check's dumper, the UnityEngine stub), compiled on their own.
 */
export function compileUnitTests(extra: string[] = []): Promise<string> {
  const tests = csharpSources('Tests~').filter((path) => !path.includes('/Journey/') && !path.includes('/Live/') && !path.includes('/Tools/'))
  return compileCsharp({ name: 'Arena.Sdk.Tests', sources: [...csharpSources('Runtime'), ...tests, ...extra], target: 'exe' })
}

export interface MonoResult {
  code: number
  stdout: string
  stderr: string
}

/** Runs an exe under mono; resolves with whatever it printed (never rejects on a non-zero exit). */
export async function runMono(exe: string, args: string[] = [], env: Record<string, string> = {}, timeoutMs = 120_000): Promise<MonoResult> {
  const proc = Bun.spawn(['mono', '--debug', exe, ...args], { env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'pipe' })
  const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs)
  try {
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
    return { code, stdout, stderr }
  } finally {
    clearTimeout(timer)
  }
}
