// Access tokens: HS256 JWTs carrying the user (`sub`) and the auth session
// (`sid`), with the id of the key that signed them (`kid`, contract §7): the
// newest key signs, every key of the keyring verifies, so a new key can be
// made current while tokens signed by the one before keep working until they
// expire. Verification pins everything an attacker could otherwise choose: the
// algorithm (no `none`, no RS/HS confusion), the issuer, the audience and the
// token type.
//
// Signing goes through jose. Verifying runs on every authenticated request,
// and jose's general path (key import, header parsing, claim checks in JS)
// costs ~70-240 µs a token here, most of an authenticated read. So
// verification is a direct HMAC-SHA256 check, stricter than the library's:
// the header segment must be byte for byte one our signer emits for a key of
// the keyring (so alg, typ and kid cannot vary at all), the signature is
// compared in constant time, then iss, aud, exp, sub and sid are checked.
// Tokens from the signer are verified by this function in the tests, so the
// two cannot drift apart. A token that passed is remembered (by digest) with
// its key until evicted, so the next request with it only checks its expiry
// and that its key is still in the keyring.
import { SignJWT } from 'jose'
import { timingSafeEqual } from 'node:crypto'
import type { Clock } from '../../shared/clock'
import type { SigningKey } from '../../secrets'

export const ACCESS_TOKEN = { issuer: 'arena', audience: 'arena-api', type: 'at+jwt', algorithm: 'HS256' } as const

const MAX_TOKEN_LENGTH = 4096
/** Verified tokens remembered (about 200 bytes each). */
export const VERIFIED_TOKEN_CACHE = 10_000

export interface AccessClaims {
  userId: string
  sessionId: string
}

export interface AccessTokens {
  ttlS: number
  sign(claims: AccessClaims): Promise<string>
  /**
   * Null unless the token is genuine and unexpired. With `allowExpired`
   * (only /auth/validate) the expiry is not checked, up to `maxExpiredS`.
   */
  verify(token: string, options?: { allowExpired?: boolean }): Promise<AccessClaims | null>
}

interface VerificationKey {
  kid: string
  hmacKey: Uint8Array
}

/** The protected header our signer writes for a key, as it appears in the token. */
function headerFor(kid: string): { json: { alg: 'HS256'; kid: string; typ: string }; segment: string } {
  const json = { alg: ACCESS_TOKEN.algorithm, kid, typ: ACCESS_TOKEN.type }
  return { json, segment: Buffer.from(JSON.stringify(json)).toString('base64url') }
}

/**
 * Tokens issued before keys had ids carry `{ alg, typ }` only. They verify
 * against any key of the keyring (one HMAC each, at most a few keys) until
 * they expire, so upgrading signs nobody out.
 */
const KIDLESS_HEADER = Buffer.from(JSON.stringify({ alg: ACCESS_TOKEN.algorithm, typ: ACCESS_TOKEN.type })).toString('base64url')

export function createAccessTokens(options: {
  /** The keyring as it is now (oldest first, the last one signs); called on every sign and verify, so it must be cheap. */
  keys: () => readonly SigningKey[]
  ttlS: number
  maxExpiredS: number
  clock: Clock
}): AccessTokens {
  // Derived from the keyring, rebuilt only when the keyring changes.
  let ring: readonly SigningKey[] = []
  let byHeader = new Map<string, VerificationKey>()
  let kids = new Set<string>()
  const current = (): readonly SigningKey[] => {
    const keys = options.keys()
    if (keys !== ring) {
      ring = keys
      byHeader = new Map(keys.map((key) => [headerFor(key.kid).segment, { kid: key.kid, hmacKey: new TextEncoder().encode(key.secret) }]))
      kids = new Set(keys.map((key) => key.kid))
    }
    return keys
  }

  // Tokens that passed every check but expiry, by SHA-256 of the whole token.
  // A client sends the same access token with each request for its whole
  // lifetime, and the check (HMAC, base64url, JSON) cost as much as the
  // session lookup. The key is a cryptographic digest, so a lookup compares
  // digests, never attacker-chosen text against a token; a token is cached
  // only after its signature verified; expiry and its key's presence in the
  // keyring are checked on every use. Oldest entries go first once full.
  const verified = new Map<string, { claims: AccessClaims; exp: number; kid: string }>()

  const isLive = (exp: number, allowExpired: boolean) =>
    // jose's rule: expired once now >= exp (+ tolerance).
    Math.floor(options.clock.now().getTime() / 1000) < exp + (allowExpired ? options.maxExpiredS : 0)

  const verifyDirect = (token: string, allowExpired: boolean): AccessClaims | null => {
    if (token.length > MAX_TOKEN_LENGTH) return null
    current()
    const digest = Bun.SHA256.hash(token, 'base64')
    const known = verified.get(digest)
    if (known) return kids.has(known.kid) && isLive(known.exp, allowExpired) ? known.claims : null
    const checked = checkSignedToken(token)
    if (!checked) return null
    if (verified.size >= VERIFIED_TOKEN_CACHE) verified.delete(verified.keys().next().value!)
    verified.set(digest, checked)
    return isLive(checked.exp, allowExpired) ? checked.claims : null
  }

  const signedBy = (signingInput: string, signature: Buffer, key: VerificationKey): boolean =>
    timingSafeEqual(new Bun.CryptoHasher('sha256', key.hmacKey).update(signingInput).digest(), signature)

  /** Every check but expiry; the claims, exp and key of a token we signed, or null. */
  const checkSignedToken = (token: string): { claims: AccessClaims; exp: number; kid: string } | null => {
    const first = token.indexOf('.')
    const second = token.indexOf('.', first + 1)
    if (first <= 0 || second <= first || token.indexOf('.', second + 1) !== -1) return null
    const header = token.slice(0, first)
    const candidates = header === KIDLESS_HEADER ? [...byHeader.values()] : [byHeader.get(header)].filter((key) => key !== undefined)
    if (candidates.length === 0) return null
    const signature = Buffer.from(token.slice(second + 1), 'base64url')
    if (signature.length !== 32 || signature.toString('base64url') !== token.slice(second + 1)) return null
    const signingInput = token.slice(0, second)
    const key = candidates.find((candidate) => signedBy(signingInput, signature, candidate))
    if (!key) return null
    let claims: Record<string, unknown>
    try {
      claims = JSON.parse(Buffer.from(token.slice(first + 1, second), 'base64url').toString()) as Record<string, unknown>
    } catch {
      return null
    }
    if (typeof claims !== 'object' || claims === null) return null
    const { iss, aud, exp, sub, sid } = claims
    const audiences = Array.isArray(aud) ? aud : [aud]
    if (iss !== ACCESS_TOKEN.issuer || !audiences.includes(ACCESS_TOKEN.audience)) return null
    if (typeof exp !== 'number' || !Number.isFinite(exp)) return null
    if (typeof sub !== 'string' || typeof sid !== 'string' || sub === '' || sid === '') return null
    return { claims: { userId: sub, sessionId: sid }, exp, kid: key.kid }
  }

  return {
    ttlS: options.ttlS,
    sign({ userId, sessionId }) {
      const keys = current()
      const key = keys[keys.length - 1]
      if (!key) throw new Error('no access-token signing key')
      const header = headerFor(key.kid)
      const nowS = Math.floor(options.clock.now().getTime() / 1000)
      // jti: two tokens issued in the same second are still distinct.
      return new SignJWT({ iss: ACCESS_TOKEN.issuer, aud: ACCESS_TOKEN.audience, sub: userId, sid: sessionId, jti: crypto.randomUUID() })
        .setProtectedHeader(header.json)
        .setIssuedAt(nowS)
        .setExpirationTime(nowS + options.ttlS)
        .sign(byHeader.get(header.segment)!.hmacKey)
    },
    async verify(token, { allowExpired = false } = {}) {
      return verifyDirect(token, allowExpired)
    },
  }
}
