// sdk/csharp as a Unity package: its manifest and assembly definition agree
// with each other and with @arena/sdk's version, and every file and folder
// Unity imports has a .meta with a GUID of its own (Unity ignores files
// without one in a git-URL package). scripts/csharp-meta.ts writes missing
// metas; here it is also run on a scratch tree to show it is stable,
// idempotent and removes metas whose file is gone.
import { describe, expect, test } from 'bun:test'
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../helpers/app'
import { CSHARP_ROOT } from '../helpers/csharp'
import { ROOT } from '../helpers/process'
import { guidOf, planMetas, writeMetas } from '../../scripts/csharp-meta'

const RERUN = 'run `npx bun scripts/csharp-meta.ts` (it writes the missing metas and deletes stale ones; commit them)'

interface UnityPackage {
  name: string
  displayName: string
  version: string
  unity: string
  description: string
  dependencies: Record<string, string>
  samples: { displayName: string; description: string; path: string }[]
}

const read = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as unknown
const manifest = read(join(CSHARP_ROOT, 'package.json')) as UnityPackage
const asmdef = read(join(CSHARP_ROOT, 'Runtime', 'Arena.Sdk.asmdef')) as Record<string, unknown>
const tsSdk = read(join(ROOT, 'packages', 'sdk', 'package.json')) as { version: string }

describe('sdk/csharp as a Unity package', () => {
  test('package.json is a Unity manifest: com.arena.sdk at @arena/sdk’s version, Newtonsoft.Json 3.x, the sample', () => {
    expect(manifest.name).toBe('com.arena.sdk')
    expect(manifest.version).toBe(tsSdk.version)
    expect(manifest.version).toMatch(/^\d+\.\d+\.\d+$/)
    expect(manifest.unity).toBe('2021.3')
    expect(manifest.displayName.length).toBeGreaterThan(0)
    expect(manifest.description.length).toBeGreaterThan(0)
    expect(Object.keys(manifest.dependencies)).toEqual(['com.unity.nuget.newtonsoft-json'])
    expect(manifest.dependencies['com.unity.nuget.newtonsoft-json']).toMatch(/^3\.\d+\.\d+$/)
    expect(manifest.samples.length).toBeGreaterThan(0)
    for (const sample of manifest.samples) {
      expect(sample.path).toMatch(/^Samples~\//)
      expect(existsSync(join(CSHARP_ROOT, sample.path))).toBe(true)
      expect(sample.displayName.length).toBeGreaterThan(0)
    }
    // The sample is Unity-only code: outside Unity (mcs, a .NET project including the folder) it is nothing.
    const sample = readFileSync(join(CSHARP_ROOT, 'Samples~', 'SignInAndPlay', 'ArenaSample.cs'), 'utf8')
    expect(sample).toMatch(/^#if UNITY_5_3_OR_NEWER$/m)
    expect(sample.trimEnd().endsWith('#endif')).toBe(true)
  })

  test('Runtime/Arena.Sdk.asmdef: the assembly Arena.Sdk, referencing only the precompiled Newtonsoft.Json', () => {
    expect(asmdef.name).toBe('Arena.Sdk')
    expect(asmdef.rootNamespace).toBe('Arena.Sdk')
    expect(asmdef.references).toEqual([])
    expect(asmdef.overrideReferences).toBe(true)
    expect(asmdef.precompiledReferences).toEqual(['Newtonsoft.Json.dll'])
    expect(asmdef.autoReferenced).toBe(true)
    // The C# namespace is the asmdef's: every Runtime file declares it.
    const sources = new Bun.Glob('Runtime/**/*.cs').scanSync({ cwd: CSHARP_ROOT })
    const outside = [...sources].filter((path) => !readFileSync(join(CSHARP_ROOT, path), 'utf8').includes('namespace Arena.Sdk'))
    expect(outside).toEqual([])
  })

  test('the README says how to install it and links the guide', () => {
    const readme = readFileSync(join(CSHARP_ROOT, 'README.md'), 'utf8')
    expect(readme).toContain('.git?path=sdk/csharp')
    expect(readme).toContain('Add package from tarball')
    expect(readme).toContain('](../../docs/sdk-csharp.md)')
  })

  test('the tarball the guide\'s command makes is a Unity package: everything under package/, the tests left out', async () => {
    const guide = readFileSync(join(ROOT, 'docs', 'sdk-csharp.md'), 'utf8')
    const command = /`(tar -czf com\.arena\.sdk-[^`]+)`/.exec(guide)?.[1]
    expect(command).toBeDefined()
    // The README of the package gives the same command.
    expect(readFileSync(join(CSHARP_ROOT, 'README.md'), 'utf8')).toContain(command!)
    const dir = tempDir('arena-csharp-tarball-')
    const made = Bun.spawnSync(['sh', '-c', command!], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
    expect(made.stderr.toString()).toBe('')
    expect(made.exitCode).toBe(0)
    const tarball = join(ROOT, `com.arena.sdk-${manifest.version}.tgz`)
    try {
      expect(existsSync(tarball)).toBe(true)
      const listed = Bun.spawnSync(['tar', '-tzf', tarball], { stdout: 'pipe' }).stdout.toString().trim().split('\n')
      const files = listed.filter((path) => !path.endsWith('/'))
      expect(files.every((path) => path.startsWith('package/'))).toBe(true)
      expect(files).toContain('package/package.json')
      expect(files).toContain('package/Runtime/Arena.Sdk.asmdef')
      expect(files).toContain('package/Runtime/Core/ArenaClient.cs')
      expect(files).toContain('package/Runtime/Core/ArenaClient.cs.meta')
      expect(files).toContain('package/Samples~/SignInAndPlay/ArenaSample.cs')
      expect(files.filter((path) => path.includes('Tests~'))).toEqual([])
      // Unpacked, its manifest is this one.
      Bun.spawnSync(['tar', '-xzf', tarball, '-C', dir])
      expect(read(join(dir, 'package', 'package.json'))).toEqual(manifest)
    } finally {
      rmSync(tarball, { force: true })
    }
  })

  test('every file and folder Unity imports has a .meta, and no .meta is stale', () => {
    const plan = planMetas()
    expect(plan.assets).toContain('Runtime')
    expect(plan.assets).toContain('package.json')
    expect(plan.assets.some((path) => path.includes('~'))).toBe(false)
    const missing = plan.missing.map(({ path }) => `${path}: no .meta; ${RERUN}`)
    const stale = plan.orphans.map((path) => `${path}: its file is gone; ${RERUN}`)
    expect([...missing, ...stale]).toEqual([])
  })

  test('every .meta has its own 32-hex GUID, and folders are folder assets', () => {
    const owners = new Map<string, string[]>()
    const problems: string[] = []
    for (const path of planMetas().assets) {
      const meta = `${path}.meta`
      // A missing one is the test above's to report.
      if (!existsSync(join(CSHARP_ROOT, meta))) continue
      const text = readFileSync(join(CSHARP_ROOT, meta), 'utf8')
      const guid = /^guid: ([0-9a-f]{32})$/m.exec(text)?.[1]
      if (!text.startsWith('fileFormatVersion: 2\n')) problems.push(`${meta}: not "fileFormatVersion: 2"`)
      if (!guid) problems.push(`${meta}: no "guid: <32 hex digits>" line`)
      else owners.set(guid, [...(owners.get(guid) ?? []), meta])
      const folder = statSync(join(CSHARP_ROOT, path)).isDirectory()
      if (folder !== /^folderAsset: yes$/m.test(text)) problems.push(`${meta}: ${folder ? 'a folder without' : 'a file with'} "folderAsset: yes"`)
    }
    for (const [guid, metas] of owners) if (metas.length > 1) problems.push(`GUID ${guid} is shared by ${metas.join(', ')}`)
    expect(problems).toEqual([])
  })

  test('the meta script: stable GUIDs from the path, idempotent, the importer by kind, stale metas removed', () => {
    const root = tempDir('arena-csharp-meta-')
    try {
      mkdirSync(join(root, 'Runtime', 'Core'), { recursive: true })
      mkdirSync(join(root, 'Tests~'), { recursive: true })
      writeFileSync(join(root, 'package.json'), '{}')
      writeFileSync(join(root, 'README.md'), '#')
      writeFileSync(join(root, 'Runtime', 'A.asmdef'), '{}')
      writeFileSync(join(root, 'Runtime', 'Core', 'X.cs'), '')
      writeFileSync(join(root, 'Tests~', 'T.cs'), '')
      writeFileSync(join(root, 'Runtime', 'Gone.cs.meta'), 'fileFormatVersion: 2\n')
      const first = writeMetas(root)
      expect(first.missing.map(({ path }) => path)).toEqual(['README.md', 'Runtime', 'Runtime/A.asmdef', 'Runtime/Core', 'Runtime/Core/X.cs', 'package.json'])
      expect(first.orphans).toEqual(['Runtime/Gone.cs.meta'])
      expect(existsSync(join(root, 'Runtime', 'Gone.cs.meta'))).toBe(false)
      expect(existsSync(join(root, 'Tests~.meta'))).toBe(false)
      expect(existsSync(join(root, 'Tests~', 'T.cs.meta'))).toBe(false)
      const meta = (path: string) => readFileSync(join(root, `${path}.meta`), 'utf8')
      expect(meta('Runtime/Core/X.cs')).toContain(`guid: ${guidOf('Runtime/Core/X.cs')}\nMonoImporter:\n`)
      expect(meta('Runtime/Core')).toContain('folderAsset: yes\nDefaultImporter:\n')
      expect(meta('Runtime/A.asmdef')).toContain('\nAssemblyDefinitionImporter:\n')
      expect(meta('package.json')).toContain('\nPackageManifestImporter:\n')
      expect(meta('README.md')).toContain('\nTextScriptImporter:\n')
      // A second run changes nothing; a copy elsewhere gets the same GUIDs (they come from the path alone).
      const again = writeMetas(root)
      expect([again.missing, again.orphans]).toEqual([[], []])
      const copy = tempDir('arena-csharp-meta-copy-')
      cpSync(root, copy, { recursive: true })
      rmSync(join(copy, 'Runtime', 'Core', 'X.cs.meta'))
      writeMetas(copy)
      expect(readFileSync(join(copy, 'Runtime', 'Core', 'X.cs.meta'), 'utf8')).toBe(meta('Runtime/Core/X.cs'))
      rmSync(copy, { recursive: true, force: true })
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  })
})
