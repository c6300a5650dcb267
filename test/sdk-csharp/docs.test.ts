// docs/sdk-csharp.md's C# examples compile: every ```csharp block of the
// guide, together, with the SDK's sources, as a Unity WebGL player build
// would (UNITY_5_3_OR_NEWER and UNITY_WEBGL defined, against the UnityEngine
// stub of sdk/csharp/Tests~/Tools), by mcs at C# 7 with warnings as errors.
// A renamed method or a changed signature in the SDK fails here before a
// reader copies a dead example.
import { describe, expect } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../helpers/app'
import { compileCsharp, csharpSources, csharpTest, CSHARP_ROOT } from '../helpers/csharp'
import { ROOT } from '../helpers/process'

const GUIDE = readFileSync(join(ROOT, 'docs', 'sdk-csharp.md'), 'utf8')
const blocks = [...GUIDE.matchAll(/```csharp\n([^]*?)```/g)].map((m) => m[1]!)

describe('docs/sdk-csharp.md', () => {
  csharpTest('every C# example compiles against the SDK (and the UnityEngine stub), at C# 7 with warnings as errors', async () => {
    expect(blocks.length).toBeGreaterThanOrEqual(8)
    const dir = tempDir('arena-csharp-docs-')
    const files = blocks.map((code, index) => {
      const file = join(dir, `Example${index + 1}.cs`)
      writeFileSync(file, code)
      return file
    })
    const unity = await compileCsharp({ name: 'UnityEngine', target: 'library', sources: [join(CSHARP_ROOT, 'Tests~', 'Tools', 'UnityStubs.cs')] })
    await compileCsharp({ name: 'GuideExamples', target: 'library', sources: [...csharpSources('Runtime'), ...files], references: [unity], defines: ['UNITY_WEBGL', 'UNITY_5_3_OR_NEWER'] })
  })

  csharpTest('the SDK types the guide names exist', () => {
    const runtime = csharpSources('Runtime').map((path) => readFileSync(path, 'utf8')).join('\n')
    for (const type of ['BracketMatch', 'MatchmakingQueue', 'PlayerPrefsArenaStore', 'FileArenaStore', 'UnityWebRequestTransport', 'IntegrityBlockedException', 'OutcomeUnknownException']) {
      expect(runtime).toContain(`class ${type}`)
    }
  })
})
