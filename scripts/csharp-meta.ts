// `npx bun scripts/csharp-meta.ts`: writes the Unity .meta file of every file
// and folder of sdk/csharp that has none, and deletes every .meta whose file is
// gone. Unity ignores the files of an immutable (git-URL) package that have no
// .meta, so the package needs one beside each; folders ending in `~`
// (Samples~, Tests~) and hidden files are ignored by Unity and get none.
//
// Each GUID is the md5 of "com.arena.sdk:" + the path relative to sdk/csharp:
// the same file gets the same GUID on every machine and every run, so the
// script is idempotent and reruns after new .cs files land (a merge, say) only
// add their metas. test/sdk-csharp/package.test.ts fails when a run is due.
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, statSync, unlinkSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'

export const PACKAGE_ROOT = join(import.meta.dir, '..', 'sdk', 'csharp')

/** The stable GUID of a path relative to the package root (32 lower-case hex digits). */
export function guidOf(path: string): string {
  return createHash('md5').update(`com.arena.sdk:${path}`).digest('hex')
}

/** The importer block after `guid:` for an asset: the YAML Unity writes for it. */
function importer(path: string, folder: boolean): string {
  const tail = '  externalObjects: {}\n  userData: \n  assetBundleName: \n  assetBundleVariant: \n'
  if (folder) return `folderAsset: yes\nDefaultImporter:\n${tail}`
  if (path.endsWith('.cs')) {
    return 'MonoImporter:\n  externalObjects: {}\n  serializedVersion: 2\n  defaultReferences: []\n  executionOrder: 0\n  icon: {instanceID: 0}\n  userData: \n  assetBundleName: \n  assetBundleVariant: \n'
  }
  if (path.endsWith('.asmdef')) return `AssemblyDefinitionImporter:\n${tail}`
  if (path === 'package.json') return `PackageManifestImporter:\n${tail}`
  if (path.endsWith('.json') || path.endsWith('.md') || path.endsWith('.txt')) return `TextScriptImporter:\n${tail}`
  return `DefaultImporter:\n${tail}`
}

/** The .meta text for an asset at `path` (relative to the package root). */
export function metaOf(path: string, folder: boolean): string {
  return `fileFormatVersion: 2\nguid: ${guidOf(path)}\n${importer(path, folder)}`
}

/** Whether Unity imports this entry: not hidden, not in or a folder ending in `~`. */
function imported(name: string): boolean {
  return !name.startsWith('.') && !name.endsWith('~')
}

export interface MetaPlan {
  /** Assets (relative paths) without a .meta, with the text each should get. */
  missing: { path: string; folder: boolean; text: string }[]
  /** .meta files (relative paths) whose asset is gone. */
  orphans: string[]
  /** Every imported asset (relative paths, folders included), sorted. */
  assets: string[]
}

/** What a run would do at `root` (the package root). */
export function planMetas(root: string = PACKAGE_ROOT): MetaPlan {
  const plan: MetaPlan = { missing: [], orphans: [], assets: [] }
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      if (!imported(name)) continue
      const at = join(dir, name)
      const path = relative(root, at)
      if (name.endsWith('.meta')) {
        if (!existsSync(at.slice(0, -'.meta'.length))) plan.orphans.push(path)
        continue
      }
      const folder = statSync(at).isDirectory()
      plan.assets.push(path)
      if (!existsSync(`${at}.meta`)) plan.missing.push({ path, folder, text: metaOf(path, folder) })
      if (folder) walk(at)
    }
  }
  walk(root)
  return plan
}

/** Writes the missing metas and deletes the orphans; returns what it did. */
export function writeMetas(root: string = PACKAGE_ROOT): MetaPlan {
  const plan = planMetas(root)
  for (const { path, text } of plan.missing) writeFileSync(join(root, `${path}.meta`), text)
  for (const path of plan.orphans) unlinkSync(join(root, path))
  return plan
}

if (import.meta.main) {
  const done = writeMetas()
  for (const { path } of done.missing) console.log(`wrote ${path}.meta`)
  for (const path of done.orphans) console.log(`deleted ${path} (its file is gone)`)
  if (done.missing.length === 0 && done.orphans.length === 0) console.log(`every asset of ${relative(process.cwd(), PACKAGE_ROOT) || '.'} has its .meta`)
}
