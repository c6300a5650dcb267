// Named secrets in the database, sealed under the master key: what the
// instances sharing one PostgreSQL database share besides their data (the
// signing keys, the chain key, the custody shares the server holds). Values
// are sealed before they reach a store and opened after, so a dump of the
// database, a replica or a backup holds no secret in the clear; the name is
// sealed in (src/shared/sealed.ts), so a value copied to another row does
// not open.
//
// Each call is its own short unit of work: sealing and opening run outside
// the transaction, which only reads or writes rows.
import type { Storage } from '../db/storage'
import type { MasterKey } from '../shared/sealed'

export class Vault {
  constructor(
    private readonly storage: Storage,
    private readonly key: MasterKey,
  ) {}

  /** The secret `name`, or null when none is stored. */
  async get(name: string): Promise<string | null> {
    const sealed = await this.storage.read.vault.get(name)
    return sealed === null ? null : this.key.open(sealed, name)
  }

  /**
   * The secret `name`, made by `create` and stored if there is none. Of
   * instances creating it at once, one value is stored and every one of
   * them answers it.
   */
  async getOrCreate(name: string, create: () => string): Promise<string> {
    const existing = await this.get(name)
    if (existing !== null) return existing
    const sealed = await this.key.seal(create(), name)
    const stored = await this.storage.write((tx) => tx.vault.putIfAbsent(name, sealed, new Date()))
    return this.key.open(stored, name)
  }

  /**
   * Stores new secrets together, all or none; fails when any name is taken
   * already (a name that is never reused, like a new wallet's shares).
   */
  async create(secrets: Record<string, string>): Promise<void> {
    const sealed = await Promise.all(Object.entries(secrets).map(async ([name, value]) => ({ name, sealed: await this.key.seal(value, name) })))
    await this.storage.write(async (tx) => {
      const now = new Date()
      for (const secret of sealed) {
        if ((await tx.vault.putIfAbsent(secret.name, secret.sealed, now)) !== secret.sealed) throw new Error(`the secret "${secret.name}" exists already`)
      }
    })
  }

  /**
   * Replaces the secret `name` by what `change` makes of its current value
   * (null: none yet), in one unit of work, so two changes at once both land,
   * one after the other. `change` may run more than once (the engine retries
   * a unit of work that lost a race) and must only compute.
   */
  async update(name: string, change: (current: string | null) => string): Promise<string> {
    return this.storage.write(async (tx) => {
      const sealed = await tx.vault.get(name)
      const next = change(sealed === null ? null : await this.key.open(sealed, name))
      await tx.vault.put(name, await this.key.seal(next, name), new Date())
      return next
    })
  }

  /** Removes the secret `name`; false when there was none. */
  async remove(name: string): Promise<boolean> {
    return this.storage.write((tx) => tx.vault.remove(name))
  }

  /** Every secret whose name starts with `prefix`, opened, by name. */
  async list(prefix: string): Promise<{ name: string; value: string }[]> {
    const rows = await this.storage.read.vault.list(prefix)
    return Promise.all(rows.map(async (row) => ({ name: row.name, value: await this.key.open(row.sealed, row.name) })))
  }

  /** Whether the vault answers (a read that reaches the table). */
  async ping(): Promise<void> {
    await this.storage.read.vault.get('')
  }
}
