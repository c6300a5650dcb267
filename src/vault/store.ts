// The vault's rows: the secrets a server keeps in the database when several
// instances share it (PostgreSQL), each sealed under the master key
// (src/shared/sealed.ts) before it reaches a store. A store never sees a
// plaintext and needs no key; src/vault/vault.ts seals and opens.
//
// SQLite keeps its secrets in the data dir (src/secrets.ts, the custody
// directory) and refuses these calls.

export interface SealedSecret {
  name: string
  sealed: string
}

export interface VaultStore {
  /** The sealed value stored under `name`, or null. */
  get(name: string): Promise<string | null>
  /**
   * Stores `sealed` under `name` unless something is stored there already,
   * and answers what is stored now: ours, or the value that was there first
   * (another instance that generated the same secret at the same time).
   */
  putIfAbsent(name: string, sealed: string, now: Date): Promise<string>
  /** Stores `sealed` under `name`, replacing what was there. */
  put(name: string, sealed: string, now: Date): Promise<void>
  /** Removes `name`; false when it was not there. */
  remove(name: string): Promise<boolean>
  /** Every secret whose name starts with `prefix`, by name. */
  list(prefix: string): Promise<SealedSecret[]>
}
