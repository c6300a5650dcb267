// The C# SDK compiles as Debian Mono's mcs does it at C# 7 with warnings as
// errors, as the library a game references, and needs nothing beyond
// netstandard2.0's assemblies and Newtonsoft.Json (what Unity 2021.3 and any
// .NET have). The WebGL transport (Runtime/Unity/UnityWebRequestTransport.cs,
// under #if UNITY_WEBGL), with the rest of the Unity-only code (#if
// UNITY_5_3_OR_NEWER) and the sample of Samples~, is compile-checked with the
// symbols a WebGL player build defines against a stub of the UnityEngine
// members they use (Tests~/Tools/UnityStubs.cs, copied from Unity's scripting
// reference): that catches a syntax or API-shape slip, and is not a run — they
// run only in a Unity player.
import { beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../helpers/app'
import { compileCsharp, compileSdk, csharpMissing, csharpSources, csharpTest, CSHARP_ROOT, runMono } from '../helpers/csharp'

/**
 * The assemblies netstandard2.0 provides (netstandard.dll and the .NET Framework
 * assemblies it has facades for), and Newtonsoft.Json: an SDK reference to
 * anything else (Mono.Posix, System.Web.Extensions, ...) would not load in Unity.
 */
const NETSTANDARD20 = [
  'netstandard',
  'mscorlib',
  'System',
  'System.Core',
  'System.ComponentModel.Composition',
  'System.Data',
  'System.Drawing',
  'System.IO.Compression',
  'System.IO.Compression.FileSystem',
  'System.Net',
  'System.Net.Http',
  'System.Numerics',
  'System.Runtime.Serialization',
  'System.ServiceModel.Web',
  'System.Transactions',
  'System.Web',
  'System.Windows',
  'System.Xml',
  'System.Xml.Linq',
  'System.Xml.Serialization',
]
const ALLOWED = [...NETSTANDARD20, 'Newtonsoft.Json']

interface AssemblyInfo {
  references: string[]
  types: string[]
}

const tool = (name: string) => join(CSHARP_ROOT, 'Tests~', 'Tools', name)
/** What Unity defines for a WebGL player build (among others). */
const WEBGL = ['UNITY_WEBGL', 'UNITY_5_3_OR_NEWER']
const SAMPLE = join(CSHARP_ROOT, 'Samples~', 'SignInAndPlay', 'ArenaSample.cs')

describe('Arena.Sdk compiles at C# 7 and needs only netstandard2.0 and Newtonsoft.Json', () => {
  let inspect: (dll: string) => Promise<AssemblyInfo>
  beforeAll(async () => {
    if (csharpMissing() !== undefined) return
    const exe = await compileCsharp({ name: 'AssemblyInfo', target: 'exe', sources: [tool('AssemblyInfo.cs')] })
    inspect = async (dll) => {
      const result = await runMono(exe, [dll])
      if (result.code !== 0) throw new Error(`AssemblyInfo ${dll} failed (${result.code}):\n${result.stdout}${result.stderr}`)
      return JSON.parse(result.stdout) as AssemblyInfo
    }
  }, 240_000)

  csharpTest('the SDK alone is a library with warnings as errors, referencing only netstandard2.0 assemblies and Newtonsoft.Json', async () => {
    const info = await inspect(await compileSdk())
    expect(info.references).toContain('mscorlib')
    expect(info.references).toContain('Newtonsoft.Json')
    expect(info.references.filter((name) => !ALLOWED.includes(name))).toEqual([])
    expect(info.types).toContain('Arena.Sdk.ArenaClient')
    // Outside Unity's WebGL, the WebGL transport is not there (nothing of UnityEngine is).
    expect(info.types).not.toContain('Arena.Sdk.UnityWebRequestTransport')
  })

  const unityStub = () => compileCsharp({ name: 'UnityEngine', target: 'library', sources: [tool('UnityStubs.cs')] })

  csharpTest('the WebGL transport compiles as a WebGL build would, against the UnityEngine stub (a compile check, not a run)', async () => {
    const unity = await unityStub()
    const dll = await compileCsharp({ name: 'Arena.Sdk', target: 'library', sources: csharpSources('Runtime'), references: [unity], defines: WEBGL })
    const info = await inspect(dll)
    expect(info.types).toContain('Arena.Sdk.UnityWebRequestTransport')
    expect(info.references.filter((name) => !ALLOWED.includes(name))).toEqual(['UnityEngine'])
    // The check bites: the transport with a member UnityWebRequest lacks (timeoutSeconds for timeout) does not compile.
    const transport = join(CSHARP_ROOT, 'Runtime', 'Unity', 'UnityWebRequestTransport.cs')
    const source = readFileSync(transport, 'utf8')
    expect(source).toContain('web.timeout = ')
    const dir = tempDir('arena-csharp-slip-')
    try {
      const slip = join(dir, 'UnityWebRequestTransport.cs')
      writeFileSync(slip, source.replace('web.timeout = ', 'web.timeoutSeconds = '))
      const others = csharpSources('Runtime').filter((path) => path !== transport)
      await expect(compileCsharp({ name: 'Slip', target: 'library', sources: [...others, slip], references: [unity], defines: WEBGL })).rejects.toThrow(/timeoutSeconds/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  csharpTest('the sample (Samples~/SignInAndPlay) compiles with the SDK as a WebGL build would, against the UnityEngine stub', async () => {
    const unity = await unityStub()
    await compileCsharp({ name: 'ArenaSample', target: 'library', sources: [...csharpSources('Runtime'), SAMPLE], references: [unity], defines: WEBGL })
  })
})
