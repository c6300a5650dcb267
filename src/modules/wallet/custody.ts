// Custody is a pluggable client (contract §3): create a wallet (an address),
// sign a withdrawal, report health. The local implementation keeps a 2-of-3
// FROST key made by a DKG among three separate participant states, each
// share in its own file; signing combines two shares' partial signatures, so
// no step ever reconstructs the whole key.
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { base58 } from '@scure/base'
import { aggregate, addressOf, groupPublicKey, runLocalDkg, signRound1, signRound2, type KeyShare, type ParticipantName } from './frost'

export interface CustodyClient {
  /** Creates a key and answers its address; `keyRef` names it for signing later. */
  createWallet(): Promise<{ address: string; keyRef: string }>
  /** Signs the canonical withdrawal message; answers the base58 Ed25519 signature. */
  signWithdrawal(keyRef: string, message: Uint8Array): Promise<string>
  health(): Promise<{ ok: boolean; detail?: string }>
}

/** A refusal that will not change on retry (the withdrawal fails and is reversed). */
export class CustodyRefusedError extends Error {}

const SHARE_FILES: ParticipantName[] = ['server', 'cosigner', 'recovery']

export class LocalFrostCustody implements CustodyClient {
  constructor(private readonly dir: string) {}

  async createWallet() {
    const keyRef = `key_${Bun.randomUUIDv7().replaceAll('-', '')}`
    const shares = runLocalDkg()
    const keyDir = join(this.dir, keyRef)
    mkdirSync(keyDir, { recursive: true, mode: 0o700 })
    for (const name of SHARE_FILES) {
      const path = join(keyDir, `${name}.json`)
      writeFileSync(path, JSON.stringify(shares[name]), { mode: 0o600, flag: 'wx' })
      chmodSync(path, 0o600)
    }
    return { address: addressOf(groupPublicKey(shares.server)), keyRef }
  }

  async signWithdrawal(keyRef: string, message: Uint8Array) {
    if (!/^key_[0-9a-f]{32}$/.test(keyRef)) throw new CustodyRefusedError('unknown key')
    const server = this.share(keyRef, 'server')
    const cosigner = this.share(keyRef, 'cosigner')
    const a = signRound1(server)
    const b = signRound1(cosigner)
    const commitments = [a.commitment, b.commitment]
    const shares = [signRound2(server, a.nonces, commitments, message), signRound2(cosigner, b.nonces, commitments, message)]
    return base58.encode(aggregate(server, commitments, message, shares))
  }

  async health() {
    try {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 })
      return { ok: true }
    } catch (error) {
      return { ok: false, detail: String(error) }
    }
  }

  private share(keyRef: string, name: ParticipantName): KeyShare {
    try {
      return JSON.parse(readFileSync(join(this.dir, keyRef, `${name}.json`), 'utf8')) as KeyShare
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new CustodyRefusedError(`no ${name} share for ${keyRef}`)
      throw error
    }
  }
}
