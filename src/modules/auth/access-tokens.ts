// Access tokens: HS256 JWTs signed with the server's secret, carrying the
// user (`sub`) and the auth session (`sid`). Verification pins everything an
// attacker could otherwise choose: the algorithm (no `none`, no RS/HS
// confusion), the issuer, the audience and the token type.
//
// Signing goes through @elysiajs/jwt (jose). Verifying runs on every
// authenticated request, and jose's general path (key import, header
// parsing, claim checks in JS) costs ~70-240 µs a token here, most of an
// authenticated read. So verification is a direct HMAC-SHA256 check, stricter
// than the library's: the header segment must be byte for byte the one our
// signer emits (so alg and typ cannot vary at all), the signature is compared
// in constant time, then iss, aud, exp, sub and sid are checked. Tokens from
// the signer are verified by this function in the tests, so the two cannot
// drift apart. A token that passed is remembered (by digest) until evicted,
// so the next request with it only checks its expiry.
import { jwt } from '@elysiajs/jwt'
import { timingSafeEqual } from 'node:crypto'
import type { Clock } from '../../shared/clock'

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

export function createAccessTokens(options: { secret: string; ttlS: number; maxExpiredS: number; clock: Clock }): AccessTokens {
  const signer = jwt({
    name: 'accessToken',
    secret: options.secret,
    alg: ACCESS_TOKEN.algorithm,
    iss: ACCESS_TOKEN.issuer,
    aud: ACCESS_TOKEN.audience,
    typ: ACCESS_TOKEN.type,
  }).decorator.accessToken

  const key = new TextEncoder().encode(options.secret)
  // The header segment every token we sign starts with, learnt from the signer itself.
  const expectedHeader = signer
    .sign({ sub: 'probe', sid: 'probe', exp: 1 })
    .then((token: string) => {
      const header = token.slice(0, token.indexOf('.'))
      const decoded = JSON.parse(Buffer.from(header, 'base64url').toString()) as Record<string, unknown>
      if (decoded.alg !== ACCESS_TOKEN.algorithm || decoded.typ !== ACCESS_TOKEN.type) throw new Error('access-token signer emits an unexpected header')
      return header
    })
  let header: string | undefined

  // Tokens that passed every check but expiry, by SHA-256 of the whole token.
  // A client sends the same access token with each request for its whole
  // lifetime, and the check (HMAC, base64url, JSON) cost as much as the
  // session lookup. The key is a cryptographic digest, so a lookup compares
  // digests, never attacker-chosen text against a token; a token is cached
  // only after its signature verified; expiry is checked on every use.
  // Oldest entries go first once the cache is full.
  const verified = new Map<string, { claims: AccessClaims; exp: number }>()

  const isLive = (exp: number, allowExpired: boolean) =>
    // jose's rule: expired once now >= exp (+ tolerance).
    Math.floor(options.clock.now().getTime() / 1000) < exp + (allowExpired ? options.maxExpiredS : 0)

  const verifyDirect = (token: string, allowExpired: boolean): AccessClaims | null => {
    if (token.length > MAX_TOKEN_LENGTH) return null
    const digest = Bun.SHA256.hash(token, 'base64')
    const known = verified.get(digest)
    if (known) return isLive(known.exp, allowExpired) ? known.claims : null
    const checked = checkSignedToken(token)
    if (!checked) return null
    if (verified.size >= VERIFIED_TOKEN_CACHE) verified.delete(verified.keys().next().value!)
    verified.set(digest, checked)
    return isLive(checked.exp, allowExpired) ? checked.claims : null
  }

  /** Every check but expiry; the claims and exp of a token we signed, or null. */
  const checkSignedToken = (token: string): { claims: AccessClaims; exp: number } | null => {
    const first = token.indexOf('.')
    const second = token.indexOf('.', first + 1)
    if (first <= 0 || second <= first || token.indexOf('.', second + 1) !== -1) return null
    if (token.slice(0, first) !== header) return null
    const signature = Buffer.from(token.slice(second + 1), 'base64url')
    if (signature.length !== 32 || signature.toString('base64url') !== token.slice(second + 1)) return null
    const expected = new Bun.CryptoHasher('sha256', key).update(token.slice(0, second)).digest()
    if (!timingSafeEqual(expected, signature)) return null
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
    return { claims: { userId: sub, sessionId: sid }, exp }
  }

  return {
    ttlS: options.ttlS,
    sign({ userId, sessionId }) {
      const nowS = Math.floor(options.clock.now().getTime() / 1000)
      // jti: two tokens issued in the same second are still distinct.
      return signer.sign({ sub: userId, sid: sessionId, jti: crypto.randomUUID(), exp: nowS + options.ttlS })
    },
    async verify(token, { allowExpired = false } = {}) {
      header ??= await expectedHeader
      return verifyDirect(token, allowExpired)
    },
  }
}
