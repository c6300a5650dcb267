// The check of an ID token a native app sends (contract §13), with jose over
// the issuer's cached key set (issuer.ts), so that when a key set is fetched
// again is arena's decision (the refetch floor), by arena's clock. Every way a
// token can be wrong is the same 401 invalid_credentials, with nothing in the
// message that tells a forger which check failed (the reason goes to the debug
// log only): the answer is the one an unknown identity gets (identities.ts),
// so a forger cannot even tell a token that failed from one that passed. A
// provider that cannot be reached is a 503 (issuer.ts).
import { jwtVerify, type JWTPayload } from 'jose'
import { AppError } from '../../../shared/errors'
import { invalidCredentials } from '../identities'
import { constantTimeEqual } from '../../../shared/crypto'
import type { Clock } from '../../../shared/clock'
import type { Logger } from '../../../shared/logger'
import type { OidcIssuer } from './issuer'

/** How far a token's `iat` may be ahead of arena's clock, and its `exp` behind: clocks of two servers differ a little. */
export const CLOCK_SKEW_S = 60

/** Asymmetric signatures only: a provider signs with a private key; `none` and HMAC (which would verify with a public key as the secret) are refused. */
export const ID_TOKEN_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']

/** What an ID token proved: the provider's subject and what it says of the address. */
export interface IdTokenClaims {
  sub: string
  email: string | null
  emailVerified: boolean
  /** Apple sends the name only at the first authorization, and not in the token: kept here for what a token does carry. */
  name: string | null
}


/**
 * Checks `idToken` against the provider: the signature (a key of its key
 * set), `iss` (the configured issuer, exactly), `aud` (contains the client id
 * or one of nativeClientIds; with several audiences `azp` must be one of them
 * too), `exp`, `iat` (not ahead of the clock beyond
 * CLOCK_SKEW_S), `sub`, and `nonce` when the caller gives one.
 */
export async function verifyIdToken(
  issuer: OidcIssuer,
  idToken: string,
  expected: { nonce?: string },
  deps: { clock: Clock; logger: Logger },
): Promise<IdTokenClaims> {
  const { issuer: iss, clientId, nativeClientIds } = issuer.settings
  const accepted = [clientId, ...nativeClientIds]
  const now = deps.clock.now()
  let payload: JWTPayload
  try {
    ;({ payload } = await jwtVerify(idToken, issuer.key, {
      issuer: iss,
      audience: accepted,
      algorithms: ID_TOKEN_ALGORITHMS,
      currentDate: now,
      clockTolerance: CLOCK_SKEW_S,
      requiredClaims: ['sub', 'iat', 'exp'],
    }))
  } catch (error) {
    if (error instanceof AppError) throw error // the provider down: 503
    deps.logger.debug('oidc.id_token_refused', { provider: issuer.name, reason: error instanceof Error ? error.message : String(error) })
    throw invalidCredentials()
  }
  const refuse = (reason: string): never => {
    deps.logger.debug('oidc.id_token_refused', { provider: issuer.name, reason })
    throw invalidCredentials()
  }
  if (typeof payload.sub !== 'string' || payload.sub.length === 0 || payload.sub.length > 255) refuse('sub missing or too long')
  if (typeof payload.iat !== 'number' || payload.iat > now.getTime() / 1000 + CLOCK_SKEW_S) refuse('iat in the future')
  const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud]
  // With several audiences the token must say which party it was issued to, and that must be ours. With one, `azp` may
  // name another client of the studio's (Google's Android and iOS clients asking a token for the server's client id).
  if (audiences.length > 1 && (typeof payload.azp !== 'string' || !accepted.includes(payload.azp))) refuse('several audiences and azp not ours')
  if (expected.nonce !== undefined && (typeof payload.nonce !== 'string' || !constantTimeEqual(payload.nonce, expected.nonce))) refuse('nonce differs')
  return {
    sub: payload.sub as string,
    email: typeof payload.email === 'string' ? payload.email : null,
    // Apple writes it as the string "true". Counting it verified only ever refuses more (account_exists), never links.
    emailVerified: payload.email_verified === true || payload.email_verified === 'true',
    name: typeof payload.name === 'string' ? payload.name : null,
  }
}
