// Where the server keeps the custody key shares it holds: in the data dir
// (SQLite: one file per share, mode 0600, under custody/<keyRef>/), or in the
// database's vault (PostgreSQL: one sealed row per share, named
// custody/<keyRef>/<participant>), so every instance can sign for every
// wallet and a database dump alone reveals no share.
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Vault } from '../../vault/vault'
import type { KeyShare, ParticipantName } from './frost'

export interface KeyShares {
  /** Keeps a new key's shares, all or none; refuses to replace a share. */
  create(keyRef: string, shares: Partial<Record<ParticipantName, KeyShare>>): Promise<void>
  /** The share as kept (JSON), or null when it is not held here (never was, or exported and removed). */
  text(keyRef: string, participant: ParticipantName): Promise<string | null>
  /** Removes a share; false when it was not held here. */
  remove(keyRef: string, participant: ParticipantName): Promise<boolean>
  /** Throws when shares cannot be kept now (the directory cannot be made, the database does not answer). */
  check(): Promise<void>
}

/** A share as custody uses it, or null when it is not held here. */
export async function readShare(shares: KeyShares, keyRef: string, participant: ParticipantName): Promise<KeyShare | null> {
  const text = await shares.text(keyRef, participant)
  return text === null ? null : (JSON.parse(text) as KeyShare)
}

/** SQLite: custody/<keyRef>/<participant>.json in the data dir. */
export class DirectoryKeyShares implements KeyShares {
  constructor(private readonly dir: string) {}

  async create(keyRef: string, shares: Partial<Record<ParticipantName, KeyShare>>) {
    const keyDir = join(this.dir, keyRef)
    mkdirSync(keyDir, { recursive: true, mode: 0o700 })
    for (const [name, share] of Object.entries(shares)) {
      const path = join(keyDir, `${name}.json`)
      writeFileSync(path, JSON.stringify(share), { mode: 0o600, flag: 'wx' })
      chmodSync(path, 0o600)
    }
  }

  async text(keyRef: string, participant: ParticipantName) {
    try {
      return readFileSync(this.path(keyRef, participant), 'utf8')
    } catch (error) {
      // Only a share that does not exist is "not held"; an unreadable one may come back.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw error
    }
  }

  async remove(keyRef: string, participant: ParticipantName) {
    try {
      rmSync(this.path(keyRef, participant))
      return true
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
      throw error
    }
  }

  async check() {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 })
  }

  private path(keyRef: string, participant: ParticipantName): string {
    return join(this.dir, keyRef, `${participant}.json`)
  }
}

/** PostgreSQL: one sealed vault row per share. */
export class VaultKeyShares implements KeyShares {
  constructor(private readonly vault: Vault) {}

  async create(keyRef: string, shares: Partial<Record<ParticipantName, KeyShare>>) {
    await this.vault.create(Object.fromEntries(Object.entries(shares).map(([name, share]) => [shareName(keyRef, name as ParticipantName), JSON.stringify(share)])))
  }

  text(keyRef: string, participant: ParticipantName) {
    return this.vault.get(shareName(keyRef, participant))
  }

  remove(keyRef: string, participant: ParticipantName) {
    return this.vault.remove(shareName(keyRef, participant))
  }

  check() {
    return this.vault.ping()
  }
}

/** The vault name of a share. */
export function shareName(keyRef: string, participant: ParticipantName): string {
  return `custody/${keyRef}/${participant}`
}
