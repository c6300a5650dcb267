// SQLite has no vault: one server owns the data dir, and keeps its secrets
// there (secrets.json, custody/), protected as the database file is. A call
// here is a wiring mistake, so it fails loudly instead of storing a secret
// where nothing reads it.
import type { VaultStore } from '../../../vault/store'

function refuse(): never {
  throw new Error('the vault is PostgreSQL only: with SQLite the secrets and custody shares live in the data dir')
}

export const SqliteVault: VaultStore = {
  get: async () => refuse(),
  putIfAbsent: async () => refuse(),
  put: async () => refuse(),
  remove: async () => refuse(),
  list: async () => refuse(),
}
