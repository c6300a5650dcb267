// Access tokens: HS256 JWTs signed with the server's secret, carrying the
// user (`sub`) and the auth session (`sid`). Verification pins everything an
// attacker could otherwise choose: the algorithm (no `none`, no RS/HS
// confusion), the issuer, the audience and the token type.
import { jwt } from '@elysiajs/jwt'
import type { Clock } from '../../shared/clock'

export const ACCESS_TOKEN = { issuer: 'arena', audience: 'arena-api', type: 'at+jwt', algorithm: 'HS256' } as const

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

  return {
    ttlS: options.ttlS,
    sign({ userId, sessionId }) {
      const nowS = Math.floor(options.clock.now().getTime() / 1000)
      // jti: two tokens issued in the same second are still distinct.
      return signer.sign({ sub: userId, sid: sessionId, jti: crypto.randomUUID(), exp: nowS + options.ttlS })
    },
    async verify(token, { allowExpired = false } = {}) {
      const payload = await signer.verify(token, {
        algorithms: [ACCESS_TOKEN.algorithm],
        issuer: ACCESS_TOKEN.issuer,
        audience: ACCESS_TOKEN.audience,
        typ: ACCESS_TOKEN.type,
        requiredClaims: ['exp', 'sub', 'sid'],
        currentDate: options.clock.now(),
        clockTolerance: allowExpired ? options.maxExpiredS : 0,
      })
      if (!payload) return null
      const { sub, sid } = payload as { sub?: unknown; sid?: unknown }
      if (typeof sub !== 'string' || typeof sid !== 'string') return null
      return { userId: sub, sessionId: sid }
    },
  }
}
