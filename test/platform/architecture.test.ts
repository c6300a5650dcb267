// The import rules of docs/architecture.md, checked on the source: only
// src/db/ knows the database engine, modules reach the database through the
// storage seam, and only the composition root and src/db/open.ts pick an engine.
import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'

const ROOT = join(import.meta.dir, '..', '..')
const SRC = join(ROOT, 'src')

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

const files = sourceFiles(SRC).map((path) => ({ path: relative(ROOT, path), text: readFileSync(path, 'utf8') }))

/** Module specifiers a file imports (static imports and exports, dynamic imports). */
function imports(text: string): string[] {
  return [...text.matchAll(/(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1] ?? m[2]!)
}

describe('import rules', () => {
  test('no file outside src/db/ touches an engine (SQLite, PostgreSQL) or prepares SQL', () => {
    const offenders = files.filter(
      (f) => !f.path.startsWith('src/db/') && (/bun:sqlite|drizzle-orm\/(sqlite-core|pg-core|postgres-js)|\.prepare\(/.test(f.text) || imports(f.text).includes('postgres')),
    )
    expect(offenders.map((f) => f.path)).toEqual([])
  })

  test('modules and jobs reach the database only through src/db/storage.ts and src/db/errors.ts', () => {
    const offenders: string[] = []
    for (const f of files.filter((f) => f.path.startsWith('src/modules/') || f.path.startsWith('src/jobs/'))) {
      for (const spec of imports(f.text)) {
        const db = /(^|\/)db\/(.+)$/.exec(spec)
        if (spec.startsWith('drizzle-orm') || (db && db[2] !== 'storage' && db[2] !== 'errors')) offenders.push(`${f.path} imports ${spec}`)
      }
    }
    expect(offenders).toEqual([])
  })

  test('only src/db/open.ts and the composition root name an engine', () => {
    const offenders = files
      .filter((f) => !f.path.startsWith('src/db/') && f.path !== 'src/services.ts')
      .flatMap((f) => imports(f.text).filter((spec) => /db\/(sqlite|postgres)\//.test(spec)).map((spec) => `${f.path} imports ${spec}`))
    expect(offenders).toEqual([])
  })

  // Like the custody shares, the server's secrets have one interface
  // (SecretStore: the data dir's file or the database's vault) and the
  // composition root picks one by engine; a command or the server asking for
  // one implementation by name is an engine branch outside src/services.ts.
  test('the server\'s secrets are reached through the SecretStore src/services.ts picks', () => {
    const own = (path: string) => path === 'src/secrets.ts' || path.startsWith('src/vault/') || path === 'src/services.ts'
    const offenders = files
      .filter((f) => !own(f.path))
      .flatMap((f) => [...f.text.matchAll(/\b(DataDirSecrets|VaultSecrets|vaultSecrets|vaultKeyring|signingKeyring|rotateSigningKey|rotateVaultSigningKey)\b/g)].map((m) => `${f.path} names ${m[1]}`))
    expect(offenders).toEqual([])
  })
})

// One owner per concept (docs/architecture.md, "Who owns the PIN, a
// withdrawal, a password"): the PIN walk crosses from the wallet into the
// PIN's module (the withdrawal asks the PIN service) and never back, the
// verify that makes a withdrawal is declared with the withdrawal, and the
// password asked again is auth's.
describe('one owner per concept: the PIN, withdrawals, passwords', () => {
  const under = (dir: string) => files.filter((f) => f.path.startsWith(dir))
  const declaring = (pattern: RegExp) => files.filter((f) => pattern.test(f.text)).map((f) => f.path)

  test('the security module imports nothing of the wallet', () => {
    const offenders = under('src/modules/security/').flatMap((f) => imports(f.text).filter((spec) => /(^|\/)wallet\//.test(spec)).map((spec) => `${f.path} imports ${spec}`))
    expect(offenders).toEqual([])
  })

  test("the PIN verify's route and models are the wallet's; AccountPasswords is auth's", () => {
    expect(declaring(/operationId: 'verifyPin'/)).toEqual(['src/modules/wallet/index.ts'])
    for (const model of ['Withdrawal', 'VerifyBody', 'PinVerifyResponse']) expect(declaring(new RegExp(`export const ${model} = `))).toEqual(['src/modules/wallet/model.ts'])
    expect(declaring(/export interface AccountPasswords\b/)).toEqual(['src/modules/auth/account-passwords.ts'])
  })

  test('no file of the auth, security or wallet module re-exports another file\'s names', () => {
    const offenders = [...under('src/modules/auth/'), ...under('src/modules/security/'), ...under('src/modules/wallet/')].filter((f) => /^export (type )?(\*|\{[^}]*\}) from /m.test(f.text)).map((f) => f.path)
    expect(offenders).toEqual([])
  })
})
