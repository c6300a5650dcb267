// A data dir's secrets and custody shares carried into a PostgreSQL
// database's vault, sealed under its master key, so the copy keeps every
// issued token valid, its security-event chain verifying, and every wallet
// signable. The data dir is only read. `arena db copy` reads them with
// dataDirVaultEntries and writes them sealed in the transaction that copies
// the tables; importDataDirSecrets puts them into a live vault.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Config } from '../config'
import { shareName } from '../modules/wallet/key-shares'
import type { ParticipantName } from '../modules/wallet/frost'
import { dataDirSecrets } from '../secrets'
import { VAULT_SECRETS } from './secrets'
import type { Vault } from './vault'

const KEY_REF = /^key_[0-9a-f]{32}$/
const SHARE_FILE = /^(server|cosigner|recovery)\.json$/
/** Secrets stored per unit of work: a large data dir is not one huge transaction. */
const BATCH = 300

export interface ImportedSecrets {
  /** The vault names of the server's own secrets copied. */
  secrets: string[]
  /** Custody shares copied (a wallet's two or three). */
  shares: number
}

/** A data dir's secrets as the vault names them, in the clear: for a vault, or to be sealed by whoever writes them (`arena db copy`). */
export interface DataDirVaultEntries {
  /** The server's own secrets: signing keys (with their history), chain key, operator token. */
  own: [name: string, value: string][]
  /** Custody shares, a wallet's two or three, by vault name. */
  shares: [name: string, value: string][]
}

/**
 * Reads the data dir's secrets.json (completed as resolveSecrets completes
 * it) and custody/<keyRef>/<participant>.json, named as the vault names them.
 */
export function dataDirVaultEntries(config: Parameters<typeof dataDirSecrets>[0] & Pick<Config, 'dataDir'>): DataDirVaultEntries {
  const stored = dataDirSecrets(config)
  const own: [string, string][] = [
    [VAULT_SECRETS.signingKeys, JSON.stringify(stored.signingKeys)],
    [VAULT_SECRETS.chainKey, stored.chainKey],
    ...(stored.adminToken !== undefined ? [[VAULT_SECRETS.adminToken, stored.adminToken] as [string, string]] : []),
  ]
  return { own, shares: custodyShares(join(config.dataDir, 'custody')) }
}

/**
 * Copies the data dir's secrets.json (signing keys with their history, chain
 * key, operator token) and custody/<keyRef>/<participant>.json into `vault`.
 * Fails, naming it, when the vault holds one of them already (an instance
 * started on the target before the copy generated its own): nothing is
 * overwritten.
 */
export async function importDataDirSecrets(config: Parameters<typeof dataDirSecrets>[0] & Pick<Config, 'dataDir'>, vault: Vault): Promise<ImportedSecrets> {
  const { own, shares } = dataDirVaultEntries(config)
  const entries = [...own, ...shares]
  for (let i = 0; i < entries.length; i += BATCH) await vault.create(Object.fromEntries(entries.slice(i, i + BATCH)))
  return { secrets: own.map(([name]) => name), shares: shares.length }
}

/** Every share file under custody/, as [vault name, text]. */
function custodyShares(dir: string): [string, string][] {
  if (!existsSync(dir)) return []
  return readdirSync(dir)
    .filter((keyRef) => KEY_REF.test(keyRef))
    .sort()
    .flatMap((keyRef) =>
      readdirSync(join(dir, keyRef))
        .filter((file) => SHARE_FILE.test(file))
        .sort()
        .map((file): [string, string] => [shareName(keyRef, file.slice(0, -'.json'.length) as ParticipantName), readFileSync(join(dir, keyRef, file), 'utf8')]),
    )
}
