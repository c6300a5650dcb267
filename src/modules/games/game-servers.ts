// Game servers (contract §17): a game's dedicated servers, each an Ed25519
// public key an operator registers (the studio keeps the private key), and
// the signature check of their results (`x-arena-signature`). What must stay
// true:
// - a key is 32 bytes that decode to a point of the curve of no small order,
//   written canonically (43 base64url characters without padding): a key
//   that can never verify, or that verifies forged signatures, is refused at
//   registration, never found out at the first result;
// - every refusal of a signature (no header, a malformed one, an unknown,
//   disabled or other game's server, a wrong signature) is the same 401 and
//   message: a caller learns nothing of which server ids exist. Only a
//   timestamp outside the window says so, whoever sent it;
// - a signature is accepted once: its hash is stored in the decision's unit
//   of work (matches/service.ts), and the primary key refuses the second,
//   on any instance.
// Knows nothing of HTTP.
import { createHash, createPublicKey, verify } from 'node:crypto'
import { ed25519 } from '@noble/curves/ed25519.js'
import type { Storage } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { toIso } from '../../shared/clock'
import { AppError } from '../../shared/errors'
import { isId, newId } from '../../shared/ids'
import type { Actor } from '../audit/log'
import type { GameServer } from './model'
import type { GameServerRecord } from './store'

/** The most servers one game may have, enabled or disabled (a studio's fleet shares keys; rotate rather than add). */
export const GAME_SERVER_LIMIT = 20
/** How far a signature's timestamp may be from the server's clock, either way (seconds). */
export const SIGNATURE_WINDOW_S = 60
export const SIGNATURE_HEADER = 'x-arena-signature'

const PUBLIC_KEY_SHAPE = /^[A-Za-z0-9_-]{43}$/
const SIGNATURE_SHAPE = /^[A-Za-z0-9_-]{86}$/
const TIMESTAMP_SHAPE = /^[0-9]{1,12}$/

/**
 * The problem with `text` as a game server's public key, or null when it is
 * one: 32 bytes, base64url without padding, canonical (the two spare bits
 * zero), a point of the curve, not of small order.
 */
export function publicKeyProblem(text: string): string | null {
  const shape = 'An Ed25519 public key: its raw 32 bytes as base64url without padding (43 characters)'
  if (!PUBLIC_KEY_SHAPE.test(text)) return shape
  const bytes = Buffer.from(text, 'base64url')
  if (bytes.length !== 32 || bytes.toString('base64url') !== text) return shape
  try {
    if (ed25519.Point.fromBytes(bytes).isSmallOrder()) return 'Not a usable Ed25519 public key (a point of small order)'
  } catch {
    return 'Not an Ed25519 public key (not a point of the curve)'
  }
  return null
}

function checkPublicKey(text: string): void {
  const problem = publicKeyProblem(text)
  if (problem !== null) throw new AppError('validation_failed', 'Request failed validation', { details: [{ path: 'body/publicKey', message: problem }] })
}

/** The parts of an `x-arena-signature` header: `<serverId>.<unix seconds>.<signature>`; null when it is not one. */
export function parseSignatureHeader(value: string | null): { serverId: string; timestamp: number; signature: string } | null {
  if (value === null) return null
  const parts = value.split('.')
  if (parts.length !== 3) return null
  const [serverId, seconds, signature] = parts as [string, string, string]
  if (!isId('gameServer', serverId) || !TIMESTAMP_SHAPE.test(seconds) || !SIGNATURE_SHAPE.test(signature)) return null
  return { serverId, timestamp: Number(seconds), signature }
}

/** What a game server signs: `<unix seconds>\n<METHOD>\n<path as sent, query included>\n<hex SHA-256 of the body bytes>`. */
export function signedText(timestamp: number, method: string, path: string, body: Uint8Array): string {
  return `${timestamp}\n${method.toUpperCase()}\n${path}\n${createHash('sha256').update(body).digest('hex')}`
}

/** Whether `signature` (base64url) is `publicKey`'s (base64url, checked at registration) over `text`. */
export function signatureValid(publicKey: string, text: string, signature: string): boolean {
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: publicKey }, format: 'jwk' })
  const bytes = Buffer.from(signature, 'base64url')
  return bytes.length === 64 && verify(null, Buffer.from(text, 'utf8'), key, bytes)
}

/** The refusal of every signature that is not a good one of this game's enabled server: one code, one message. */
export function invalidSignature(message = 'Missing or invalid x-arena-signature'): AppError {
  return new AppError('invalid_signature', message)
}

/** A server as the admin API answers it. */
export function gameServerView(server: GameServerRecord): GameServer {
  return {
    id: server.id,
    gameId: server.gameId,
    name: server.name,
    publicKey: server.publicKey,
    createdAt: toIso(server.createdAt),
    rotatedAt: server.rotatedAt === null ? null : toIso(server.rotatedAt),
    disabledAt: server.disabledAt === null ? null : toIso(server.disabledAt),
    status: server.disabledAt === null ? 'active' : 'disabled',
  }
}

export interface GameServersDeps {
  storage: Storage
  clock: Clock
}

/** The operators' side of game servers: register, list, disable, rotate (each audited, §11). */
export class GameServers {
  constructor(private readonly deps: GameServersDeps) {}

  async create(gameId: string, input: { name: string; publicKey: string }, by: Actor): Promise<GameServer> {
    checkPublicKey(input.publicKey)
    const now = this.deps.clock.now()
    return this.deps.storage.write(async (tx) => {
      if (!(await tx.games.gameExists(gameId))) throw new AppError('not_found', 'No such game')
      // Read and insert in one unit of work: on PostgreSQL two racing registrations cannot both see 19.
      if ((await tx.games.countGameServers(gameId)) >= GAME_SERVER_LIMIT) {
        throw new AppError('server_limit', `A game has at most ${GAME_SERVER_LIMIT} game servers; rotate a key or use another game`)
      }
      const server: GameServerRecord = { id: newId('gameServer'), gameId, name: input.name, publicKey: input.publicKey, createdAt: now, rotatedAt: null, disabledAt: null }
      await tx.games.insertGameServer(server)
      await by.record(tx, { action: 'game_server.create', target: server.id, details: { gameId, name: input.name, publicKey: input.publicKey } })
      return gameServerView(server)
    })
  }

  async list(gameId: string): Promise<GameServer[]> {
    const games = this.deps.storage.read.games
    if (!(await games.gameExists(gameId))) throw new AppError('not_found', 'No such game')
    return (await games.gameServersOf(gameId)).map(gameServerView)
  }

  /** Disables a server for good: its signatures are refused from the next request. Idempotent: a second disable changes (and records) nothing. */
  async disable(id: string, by: Actor): Promise<GameServer> {
    return this.deps.storage.write(async (tx) => {
      const now = this.deps.clock.now()
      if (await tx.games.disableGameServer(id, now)) {
        const server = (await tx.games.gameServer(id))!
        await by.record(tx, { action: 'game_server.disable', target: id, details: { gameId: server.gameId, name: server.name } })
        return gameServerView(server)
      }
      const server = await tx.games.gameServer(id)
      if (!server) throw new AppError('not_found', 'No such game server')
      return gameServerView(server)
    })
  }

  /** Replaces a server's key: signatures by the old key are refused from the next request. A disabled server is not rotated (409). */
  async rotate(id: string, publicKey: string, by: Actor): Promise<GameServer> {
    checkPublicKey(publicKey)
    return this.deps.storage.write(async (tx) => {
      const now = this.deps.clock.now()
      const before = await tx.games.gameServer(id)
      if (!before) throw new AppError('not_found', 'No such game server')
      if (!(await tx.games.rotateGameServer(id, publicKey, now))) throw new AppError('conflict', 'This game server is disabled; register a new one')
      await by.record(tx, { action: 'game_server.rotate', target: id, details: { gameId: before.gameId, from: before.publicKey, to: publicKey } })
      return gameServerView({ ...before, publicKey, rotatedAt: now })
    })
  }
}
