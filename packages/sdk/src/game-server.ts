// A game server's signed result: what a dedicated server sends
// to POST /api/v1/game-servers/{gameId}/results, signed with its Ed25519 key.
// WebCrypto only (Ed25519 in crypto.subtle: Node 20+, Bun, current browsers),
// so the SDK keeps no dependency. It runs on the game SERVER, never in a
// client: whoever holds the private key decides matches.
//
//   const { headers, body } = await signServerResult({
//     serverId, privateKey, path: serverResultPath(gameId),
//     body: { matchId, outcome: 'WIN', winnerParticipantId },
//   })
//   await fetch(baseUrl + serverResultPath(gameId), { method: 'POST', headers, body })

/** What the server reports (the body of POST /game-servers/{gameId}/results). */
export interface ServerResultBody {
  matchId: string
  outcome: 'WIN' | 'DRAW'
  /** Required with WIN, refused with DRAW. */
  winnerParticipantId?: string
  score?: Record<string, unknown>
}

export interface SignServerResultInput {
  /** The game server's id (`gsv_…`), from its registration. */
  serverId: string
  /** The server's Ed25519 private key: its 32-byte seed as base64url without padding (43 characters). */
  privateKey: string
  /** The path the request is sent to, exactly: `/api/v1/game-servers/{gameId}/results`, with its query if it has one. */
  path: string
  /** The result: an object (sent as its JSON) or the exact body text to send. */
  body: ServerResultBody | string
  /** Default POST. */
  method?: string
  /** The signing time (default: now); arena takes it within ±60 s of its clock. */
  now?: Date
}

/** The path of a game's result route, for `signServerResult` and the request itself. */
export function serverResultPath(gameId: string): string {
  return `/api/v1/game-servers/${encodeURIComponent(gameId)}/results`
}

// PKCS#8 wrapping of a raw Ed25519 seed (RFC 8410): WebCrypto imports private keys only so.
const PKCS8_ED25519_PREFIX = [0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20]

function fromBase64url(text: string): Uint8Array {
  const base64 = text.replaceAll('-', '+').replaceAll('_', '/')
  const binary = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4))
  return Uint8Array.from(binary, (c) => c.charCodeAt(0))
}

function toBase64url(bytes: Uint8Array): string {
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '')
}

/**
 * The headers and body of a signed result: `x-arena-signature:
 * <serverId>.<unix seconds>.<signature>`, the signature over `<unix
 * seconds>\n<METHOD>\n<path>\n<hex SHA-256 of the body bytes>`. Send the body
 * exactly as returned (the signature covers its bytes), once: a signature is
 * accepted once (409 signature_reused); sign again to retry.
 */
export async function signServerResult(input: SignServerResultInput): Promise<{ headers: Record<string, string>; body: string }> {
  const seed = fromBase64url(input.privateKey)
  if (seed.length !== 32) throw new TypeError('privateKey must be an Ed25519 seed: 32 bytes as base64url')
  const body = typeof input.body === 'string' ? input.body : JSON.stringify(input.body)
  const bytes = new TextEncoder().encode(body)
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))
  const hex = Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('')
  const seconds = Math.floor((input.now ?? new Date()).getTime() / 1000)
  const text = `${seconds}\n${(input.method ?? 'POST').toUpperCase()}\n${input.path}\n${hex}`
  const pkcs8 = new Uint8Array([...PKCS8_ED25519_PREFIX, ...seed])
  const key = await crypto.subtle.importKey('pkcs8', pkcs8, { name: 'Ed25519' }, false, ['sign'])
  const signature = new Uint8Array(await crypto.subtle.sign('Ed25519', key, new TextEncoder().encode(text)))
  return { headers: { 'content-type': 'application/json', 'x-arena-signature': `${input.serverId}.${seconds}.${toBase64url(signature)}` }, body }
}
