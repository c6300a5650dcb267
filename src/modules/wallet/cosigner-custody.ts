// Custody mode `cosigner`: this server holds the `server` share (and the
// `recovery` share until the operator exports it), the paired `arena
// cosigner` process holds the `cosigner` share. Signing always uses the
// server and co-signer shares, so without the co-signer nothing is signed:
// a network error is a transient failure (the withdrawal waits), a refusal
// from the co-signer is final.
import { base58 } from '@scure/base'
import { CustodyRefusedError, type CustodyClient } from './custody'
import { DirectoryKeyShares, readShare, type KeyShares } from './key-shares'
import { COSIGNER_PATHS, signRequest } from './cosigner-protocol'
import {
  addressOf,
  aggregate,
  dkgRound1,
  dkgRound2,
  dkgRound3,
  groupPublicKey,
  signRound1,
  signRound2,
  type DkgRound1Package,
  type DkgRound2Package,
  type ParticipantName,
  type SigningCommitment,
} from './frost'

export class CosignerCustody implements CustodyClient {
  private readonly shares: KeyShares

  /** `shares`: where the server and recovery shares are kept; a directory path keeps them as files there. */
  constructor(
    shares: KeyShares | string,
    private readonly url: string,
    private readonly secret: string,
  ) {
    this.shares = typeof shares === 'string' ? new DirectoryKeyShares(shares) : shares
  }

  private async call<T>(path: string, body: unknown): Promise<T> {
    const text = JSON.stringify(body)
    const res = await fetch(new URL(path, this.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signRequest(this.secret, path, text) },
      body: text,
      signal: AbortSignal.timeout(10_000),
    })
    if (res.status === 422) throw new CustodyRefusedError(`co-signer refused: ${((await res.json()) as { error?: { message?: string } }).error?.message ?? ''}`)
    if (!res.ok) throw new Error(`co-signer answered ${res.status}`)
    return (await res.json()) as T
  }

  async createWallet() {
    const keyRef = `key_${Bun.randomUUIDv7().replaceAll('-', '')}`
    // Round 1: two local participants, one remote.
    const local = { server: dkgRound1('server'), recovery: dkgRound1('recovery') }
    const { broadcast: cosignerR1 } = await this.call<{ broadcast: DkgRound1Package }>(COSIGNER_PATHS.dkgRound1, { keyRef })
    const all = [local.server.broadcast, local.recovery.broadcast, cosignerR1]
    const others = (name: ParticipantName) => all.filter((b) => b.from !== name)
    // Round 2.
    const server2 = dkgRound2(local.server.state, others('server'))
    const recovery2 = dkgRound2(local.recovery.state, others('recovery'))
    const { packagesFor: cosigner2 } = await this.call<{ packagesFor: Partial<Record<ParticipantName, DkgRound2Package>> }>(COSIGNER_PATHS.dkgRound2, {
      keyRef,
      others: others('cosigner'),
    })
    const packagesFor = (name: ParticipantName) =>
      [server2.packagesFor[name], recovery2.packagesFor[name], cosigner2[name]].filter((p): p is DkgRound2Package => p !== undefined)
    // Round 3: every participant derives its share and the same group key.
    const shares = {
      server: dkgRound3(server2.state, others('server'), packagesFor('server')),
      recovery: dkgRound3(recovery2.state, others('recovery'), packagesFor('recovery')),
    }
    const { address: cosignerAddress } = await this.call<{ address: string }>(COSIGNER_PATHS.dkgRound3, {
      keyRef,
      others: others('cosigner'),
      forMe: packagesFor('cosigner'),
    })
    const address = addressOf(groupPublicKey(shares.server))
    // All three must agree on the key before anyone funds its address.
    if (cosignerAddress !== address || addressOf(groupPublicKey(shares.recovery)) !== address) {
      throw new CustodyRefusedError('DKG participants disagree on the group key')
    }
    await this.shares.create(keyRef, shares)
    return { address, keyRef }
  }

  async signWithdrawal(keyRef: string, message: Uint8Array) {
    const withdrawal = parseWithdrawalMessage(message)
    // Only a share that does not exist is final; an unreadable one may come back.
    const server = await readShare(this.shares, keyRef, 'server')
    if (server === null) throw new CustodyRefusedError(`no server share for ${keyRef}`)
    const mine = signRound1(server)
    const theirs = await this.call<{ commitmentId: string; commitment: SigningCommitment }>(COSIGNER_PATHS.commit, { keyRef, withdrawal })
    const commitments = [mine.commitment, theirs.commitment]
    const myShare = signRound2(server, mine.nonces, commitments, message)
    const { share } = await this.call<{ share: Parameters<typeof aggregate>[3][number] }>(COSIGNER_PATHS.share, {
      keyRef,
      commitmentId: theirs.commitmentId,
      commitments,
      withdrawal,
    })
    return base58.encode(aggregate(server, commitments, message, [myShare, share]))
  }

  async health() {
    try {
      await this.call(COSIGNER_PATHS.health, {})
      return { ok: true }
    } catch (error) {
      return { ok: false, detail: `co-signer unreachable: ${String(error)}` }
    }
  }
}

/** The co-signer checks the withdrawal itself, so send it the fields, not just bytes. */
function parseWithdrawalMessage(message: Uint8Array) {
  const [tag, id, asset, amount, destinationAddress, ...rest] = new TextDecoder().decode(message).split('\n')
  if (tag !== 'arena-withdrawal-v1' || rest.length > 0 || !id || !asset || !amount || !destinationAddress) {
    throw new CustodyRefusedError('not a withdrawal message')
  }
  return { id, asset, amount, destinationAddress }
}
