// Custody is a pluggable client (contract §3): create a wallet (an address),
// sign a withdrawal, report health. The local implementation keeps a 2-of-3
// FROST key made by a DKG among three separate participant states, each
// share kept on its own (a file in the data dir, or a sealed row of the
// database's vault: key-shares.ts); signing combines two shares' partial
// signatures, so no step ever reconstructs the whole key.
import { base58 } from '@scure/base'
import { aggregate, addressOf, groupPublicKey, runLocalDkg, signRound1, signRound2, type KeyShare, type ParticipantName } from './frost'
import { DirectoryKeyShares, readShare, type KeyShares } from './key-shares'

export interface CustodyClient {
  /** Creates a key and answers its address; `keyRef` names it for signing later. */
  createWallet(): Promise<{ address: string; keyRef: string }>
  /** Signs the canonical withdrawal message; answers the base58 Ed25519 signature. */
  signWithdrawal(keyRef: string, message: Uint8Array): Promise<string>
  health(): Promise<{ ok: boolean; detail?: string }>
}

/** A refusal that will not change on retry (the withdrawal fails and is reversed). */
export class CustodyRefusedError extends Error {}

export class LocalFrostCustody implements CustodyClient {
  private readonly shares: KeyShares

  /** `shares`: where the three shares are kept; a directory path keeps them as files there. */
  constructor(shares: KeyShares | string) {
    this.shares = typeof shares === 'string' ? new DirectoryKeyShares(shares) : shares
  }

  async createWallet() {
    const keyRef = `key_${Bun.randomUUIDv7().replaceAll('-', '')}`
    const shares = runLocalDkg()
    await this.shares.create(keyRef, { server: shares.server, cosigner: shares.cosigner, recovery: shares.recovery })
    return { address: addressOf(groupPublicKey(shares.server)), keyRef }
  }

  async signWithdrawal(keyRef: string, message: Uint8Array) {
    if (!/^key_[0-9a-f]{32}$/.test(keyRef)) throw new CustodyRefusedError('unknown key')
    const server = await this.share(keyRef, 'server')
    const cosigner = await this.share(keyRef, 'cosigner')
    const a = signRound1(server)
    const b = signRound1(cosigner)
    const commitments = [a.commitment, b.commitment]
    const shares = [signRound2(server, a.nonces, commitments, message), signRound2(cosigner, b.nonces, commitments, message)]
    return base58.encode(aggregate(server, commitments, message, shares))
  }

  async health() {
    try {
      await this.shares.check()
      return { ok: true }
    } catch (error) {
      return { ok: false, detail: String(error) }
    }
  }

  private async share(keyRef: string, name: ParticipantName): Promise<KeyShare> {
    // Only a share that does not exist is final; an unreadable one may come back.
    const share = await readShare(this.shares, keyRef, name)
    if (share === null) throw new CustodyRefusedError(`no ${name} share for ${keyRef}`)
    return share
  }
}
