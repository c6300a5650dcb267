// The vault on PostgreSQL: one row per sealed secret (server_secrets).
//
// putIfAbsent is how instances starting at once agree on a generated secret.
// Inside a unit of work (SERIALIZABLE) an insert that meets a row another
// transaction committed after our snapshot fails with 40001 rather than
// doing nothing, and storage.write runs the unit again on a fresh snapshot,
// where the SELECT finds the winner's row. Outside one (autocommit) the
// INSERT waits for a concurrent inserter and then does nothing; the SELECT
// that follows sees its row.
import { asc, eq, sql } from 'drizzle-orm'
import { serverSecrets } from '../schema'
import type { SealedSecret, VaultStore } from '../../../vault/store'
import type { PostgresScope } from '../scope'

export class PostgresVaultStore implements VaultStore {
  constructor(private readonly scope: PostgresScope) {}

  private get db() {
    return this.scope.db
  }

  async get(name: string): Promise<string | null> {
    const rows = await this.db.select({ sealed: serverSecrets.sealed }).from(serverSecrets).where(eq(serverSecrets.name, name))
    return rows[0]?.sealed ?? null
  }

  async putIfAbsent(name: string, sealed: string, now: Date): Promise<string> {
    const inserted = await this.db
      .insert(serverSecrets)
      .values({ name, sealed, createdAt: now })
      .onConflictDoNothing({ target: serverSecrets.name })
      .returning({ sealed: serverSecrets.sealed })
    if (inserted[0]) return inserted[0].sealed
    const stored = await this.get(name)
    // Only a row removed between the two statements (outside a unit of work) gets here.
    if (stored === null) throw new Error(`the secret "${name}" was removed while it was being stored`)
    return stored
  }

  async put(name: string, sealed: string, now: Date): Promise<void> {
    // created_at stays the first store's: when the secret first existed.
    await this.db
      .insert(serverSecrets)
      .values({ name, sealed, createdAt: now })
      .onConflictDoUpdate({ target: serverSecrets.name, set: { sealed } })
  }

  async remove(name: string): Promise<boolean> {
    const removed = await this.db.delete(serverSecrets).where(eq(serverSecrets.name, name)).returning({ name: serverSecrets.name })
    return removed.length > 0
  }

  async list(prefix: string): Promise<SealedSecret[]> {
    // starts_with, not LIKE: a name's `_` and `%` are not wildcards.
    return this.db
      .select({ name: serverSecrets.name, sealed: serverSecrets.sealed })
      .from(serverSecrets)
      .where(sql`starts_with(${serverSecrets.name}, ${prefix})`)
      .orderBy(asc(serverSecrets.name))
  }
}
