// `arena cosigner`: the process that holds the second share of every wallet
// key in custody mode `cosigner`. It takes part in each wallet's DKG and in
// each signature, and signs nothing but well-formed withdrawals asked for by
// the server it is paired with (the shared secret). Its shares and in-progress
// state live in its own data dir; nonces are single use and kept in memory.
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Config } from './config'
import { ensureDataDir } from './shared/data-dir'
import type { Logger } from './shared/logger'
import { COSIGNER_PATHS, verifyRequest } from './modules/wallet/cosigner-protocol'
import {
  dkgRound1,
  dkgRound2,
  dkgRound3,
  groupPublicKey,
  addressOf,
  isValidAddress,
  signRound1,
  signRound2,
  withdrawalMessage,
  type DkgRound1Package,
  type DkgRound1State,
  type DkgRound2Package,
  type DkgRound2State,
  type KeyShare,
  type SigningCommitment,
  type SigningNonces,
} from './modules/wallet/frost'

const KEY_REF = /^key_[0-9a-f]{32}$/
const WITHDRAWAL_ID = /^wdr_[0-9a-f]{32}$/
const MINOR_UNITS = /^[1-9][0-9]{0,29}$/

class Refused extends Error {}

export interface Withdrawal {
  id: string
  asset: string
  amount: string
  destinationAddress: string
}

function checkWithdrawal(w: unknown): Withdrawal {
  const v = w as Partial<Withdrawal> | null
  if (
    !v ||
    typeof v.id !== 'string' ||
    !WITHDRAWAL_ID.test(v.id) ||
    v.asset !== 'USDC' ||
    typeof v.amount !== 'string' ||
    !MINOR_UNITS.test(v.amount) ||
    typeof v.destinationAddress !== 'string' ||
    !isValidAddress(v.destinationAddress)
  ) {
    throw new Refused('not a well-formed withdrawal')
  }
  return { id: v.id, asset: v.asset, amount: v.amount, destinationAddress: v.destinationAddress }
}

export function startCosigner(config: Readonly<Config>, logger: Logger) {
  const secret = config.cosignerSecret
  if (!secret) throw new Error('arena cosigner needs ARENA_COSIGNER_SECRET (shared with its server)')
  ensureDataDir(config.dataDir)
  const keysDir = join(config.dataDir, 'cosigner-keys')
  mkdirSync(keysDir, { recursive: true, mode: 0o700 })
  const file = (keyRef: string, name: string) => join(keysDir, keyRef, `${name}.json`)
  const write = (path: string, value: unknown) => {
    mkdirSync(join(path, '..'), { recursive: true, mode: 0o700 })
    writeFileSync(path, JSON.stringify(value), { mode: 0o600 })
    chmodSync(path, 0o600)
  }
  // A missing file is not the request's fault (a wrong data dir, a lost
  // disk): answered 503 so the server keeps the withdrawal waiting.
  const read = <T>(path: string): T => JSON.parse(readFileSync(path, 'utf8')) as T
  /** Nonces by commitment id: used at most once, for exactly one withdrawal, within a minute. */
  const nonces = new Map<string, { keyRef: string; withdrawal: string; nonces: SigningNonces; expiresAt: number }>()
  const NONCE_TTL_MS = 60_000
  const sweep = () => {
    const now = Date.now()
    for (const [id, held] of nonces) if (held.expiresAt <= now) nonces.delete(id)
  }

  const handlers: Record<string, (body: Record<string, unknown>) => unknown> = {
    [COSIGNER_PATHS.health]: () => ({ ok: true }),
    [COSIGNER_PATHS.dkgRound1]: ({ keyRef }) => {
      if (typeof keyRef !== 'string' || !KEY_REF.test(keyRef) || existsSync(join(keysDir, String(keyRef)))) throw new Refused('bad key ref')
      const { state, broadcast } = dkgRound1('cosigner')
      write(file(keyRef, 'round1'), state)
      return { broadcast }
    },
    [COSIGNER_PATHS.dkgRound2]: ({ keyRef, others }) => {
      const state = read<DkgRound1State>(file(String(keyRef), 'round1'))
      const result = dkgRound2(state, others as DkgRound1Package[])
      write(file(String(keyRef), 'round2'), result.state)
      rmSync(file(String(keyRef), 'round1'))
      return { packagesFor: result.packagesFor }
    },
    [COSIGNER_PATHS.dkgRound3]: ({ keyRef, others, forMe }) => {
      const state = read<DkgRound2State>(file(String(keyRef), 'round2'))
      const share = dkgRound3(state, others as DkgRound1Package[], forMe as DkgRound2Package[])
      write(file(String(keyRef), 'share'), share)
      rmSync(file(String(keyRef), 'round2'))
      return { address: addressOf(groupPublicKey(share)) }
    },
    [COSIGNER_PATHS.commit]: ({ keyRef, withdrawal }) => {
      const w = checkWithdrawal(withdrawal)
      const share = read<KeyShare>(file(String(keyRef), 'share'))
      const round1 = signRound1(share)
      const commitmentId = crypto.randomUUID()
      sweep()
      nonces.set(commitmentId, { keyRef: String(keyRef), withdrawal: JSON.stringify(w), nonces: round1.nonces, expiresAt: Date.now() + NONCE_TTL_MS })
      return { commitmentId, commitment: round1.commitment }
    },
    [COSIGNER_PATHS.share]: ({ keyRef, commitmentId, commitments, withdrawal }) => {
      const w = checkWithdrawal(withdrawal)
      const held = nonces.get(String(commitmentId))
      // Single use, and only for exactly the withdrawal (every field) the
      // commitment was made for.
      nonces.delete(String(commitmentId))
      if (held && (held.keyRef !== keyRef || held.withdrawal !== JSON.stringify(w))) throw new Refused('commitment was made for another withdrawal')
      // Unknown: spent, expired, or lost in a restart. The server starts over.
      if (!held || held.expiresAt <= Date.now()) throw new Error('unknown or expired commitment')
      const share = read<KeyShare>(file(String(keyRef), 'share'))
      const signatureShare = signRound2(share, held.nonces, commitments as SigningCommitment[], withdrawalMessage(w))
      logger.info('cosigner signed', { withdrawalId: w.id, keyRef })
      return { share: signatureShare }
    },
  }

  const server = Bun.serve({
    hostname: config.host,
    port: config.port,
    reusePort: false,
    async fetch(request) {
      const path = new URL(request.url).pathname
      const handler = handlers[path]
      if (request.method !== 'POST' || !handler) return Response.json({ error: { code: 'not_found', message: 'No such route', status: 404 } }, { status: 404 })
      const text = await request.text()
      if (text.length > 256 * 1024 || !verifyRequest(secret, path, text, request.headers)) {
        logger.warn('cosigner refused an unauthenticated request', { path })
        return Response.json({ error: { code: 'unauthorized', message: 'Bad or missing request MAC', status: 401 } }, { status: 401 })
      }
      try {
        const body = (text ? JSON.parse(text) : {}) as Record<string, unknown>
        return Response.json(handler(body))
      } catch (error) {
        // 422: the request itself is wrong and will stay wrong (the server
        // fails the withdrawal). Anything else may pass (a restart lost the
        // nonces, a share file is unreadable): 503, the server retries later.
        const refused = error instanceof Refused || error instanceof SyntaxError
        logger.warn(refused ? 'cosigner refused a request' : 'cosigner could not serve a request', { path, error: String(error) })
        const status = refused ? 422 : 503
        const message = refused ? (error as Error).message : 'temporarily unable; retry'
        return Response.json({ error: { code: refused ? 'refused' : 'service_unavailable', message, status } }, { status })
      }
    },
  })
  logger.info('listening', { url: `http://${config.host}:${server.port}`, port: server.port, role: 'cosigner' })
  return { port: server.port, stop: () => server.stop(true) }
}
