// Game servers through HTTP (contract §17): Ed25519 keys, their registration,
// and results signed with the SDK's own helper (signServerResult), sent as a
// dedicated server sends them.
import { expect } from 'bun:test'
import { generateKeyPairSync } from 'node:crypto'
import { serverResultPath, signServerResult } from '@arena/sdk'
import type { GameServer } from '../../src/modules/games/model'
import { postJson, req, type Handler } from './app'
import { admin } from './arena'
import { adminPatch } from './matchmaking'

export type { GameServer }

/** A new Ed25519 key pair: the public key and the private seed, each raw 32 bytes as base64url. */
export function serverKeys(): { publicKey: string; privateKey: string } {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519')
  return { publicKey: publicKey.export({ format: 'jwk' }).x!, privateKey: privateKey.export({ format: 'jwk' }).d! }
}

/** A registered server and the private key that signs for it. */
export interface Signer {
  server: GameServer
  privateKey: string
}

/** Registers a new server of the game (a fresh key pair) through the admin API. */
export async function registerServer(ctx: Handler, gameId: string, name = 'eu-1'): Promise<Signer> {
  const keys = serverKeys()
  const res = await ctx.handle(postJson(`/api/v1/admin/games/${gameId}/servers`, { name, publicKey: keys.publicKey }, admin))
  expect(res.status).toBe(201)
  return { server: ((await res.json()) as { server: GameServer }).server, privateKey: keys.privateKey }
}

/** Sets who reports the game's results. */
export async function setResults(ctx: Handler, gameId: string, results: 'claims' | 'server' | 'either'): Promise<void> {
  const res = await adminPatch(ctx, `/api/v1/admin/games/${gameId}`, { results })
  expect(res.status).toBe(200)
}

export interface ReportOptions {
  /** The signing time (default: the app's clock). */
  now?: Date
  /** The path signed (default: the game's result route). */
  signedPath?: string
  /** The path the request goes to (default: the signed one). */
  sentPath?: string
  /** The body sent, when it is not the one signed. */
  sentBody?: string
  /** Another server id in the header (the signature stays `signer`'s). */
  serverId?: string
}

/** A signed result as the server sends it: signed by `signer`, then (with `options`) tampered with. */
export async function signedResult(gameId: string, signer: Signer, body: Record<string, unknown>, now: Date, options: ReportOptions = {}): Promise<Request> {
  const signedPath = options.signedPath ?? serverResultPath(gameId)
  const signed = await signServerResult({ serverId: options.serverId ?? signer.server.id, privateKey: signer.privateKey, path: signedPath, body: body as never, now: options.now ?? now })
  return req(options.sentPath ?? signedPath, { method: 'POST', headers: signed.headers, body: options.sentBody ?? signed.body })
}
