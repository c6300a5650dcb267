// One configured OpenID Connect provider as arena sees it: its discovery
// document and its signing keys (JWKS), fetched from the issuer on first use
// and cached (contract §13).
//
// - Discovery (oauth4webapi's discoveryRequest + processDiscoveryResponse,
//   which checks the document's `issuer` is the configured one) is kept
//   DISCOVERY_TTL_MS, then fetched again at the next use (the old one serves
//   while that fails).
// - The key set is kept until a token names a `kid` it does not hold (the
//   provider rotated its keys); it is then fetched again, but at most once per
//   REFETCH_FLOOR_MS by the app's clock, whatever the tokens say: a stream of
//   forged tokens with made-up kids costs the provider one request a minute.
// - Every request has a timeout; a provider that does not answer, or answers
//   nonsense, is a 503 service_unavailable for the sign-in, never a 500, and
//   never a 401 that would read as "wrong credentials".
// Concurrent first uses share one request (the in-flight promise).
import * as oauth from 'oauth4webapi'
import { createLocalJWKSet, errors as jose, type JSONWebKeySet, type JWTHeaderParameters, type FlattenedJWSInput } from 'jose'
import { AppError } from '../../../shared/errors'
import type { Clock } from '../../../shared/clock'
import type { Logger } from '../../../shared/logger'
import type { OidcProviderSettings } from './settings'

export const DISCOVERY_TTL_MS = 6 * 3_600_000
/** At most one key-set request per provider this often when tokens name unknown keys (contract §13: once a minute). */
export const REFETCH_FLOOR_MS = 60_000
export const FETCH_TIMEOUT_MS = 5_000

type KeyResolver = ReturnType<typeof createLocalJWKSet>

/** The provider did not answer as a provider should: the sign-in cannot be decided now. */
export function providerUnavailable(name: string): AppError {
  return new AppError('service_unavailable', `The sign-in provider "${name}" is not answering; try again later`, { headers: { 'retry-after': '30' } })
}

export class OidcIssuer {
  #metadata?: { server: oauth.AuthorizationServer; fetchedAt: number }
  #metadataInFlight?: Promise<oauth.AuthorizationServer>
  #keys?: { resolve: KeyResolver; fetchedAt: number }
  #keysInFlight?: Promise<KeyResolver>
  /** When the key set was last asked for (success or not): the floor counts from here. */
  #lastKeyFetch = Number.NEGATIVE_INFINITY

  constructor(
    readonly settings: OidcProviderSettings,
    private readonly deps: { clock: Clock; logger: Logger; timeoutMs?: number },
  ) {}

  get name(): string {
    return this.settings.name
  }

  /** Requests to an http:// issuer are allowed only for loopback issuers (settings.ts refuses any other). */
  get #insecure(): boolean {
    return this.settings.issuer.startsWith('http:')
  }

  /** Options every outgoing request carries: its timeout, and http allowed for a loopback issuer. */
  requestOptions(): { signal: AbortSignal; [oauth.allowInsecureRequests]?: boolean } {
    return { signal: AbortSignal.timeout(this.deps.timeoutMs ?? FETCH_TIMEOUT_MS), ...(this.#insecure ? { [oauth.allowInsecureRequests]: true } : {}) }
  }

  /** The discovery document, fetched when missing or older than DISCOVERY_TTL_MS. */
  async metadata(): Promise<oauth.AuthorizationServer> {
    const now = this.deps.clock.now().getTime()
    if (this.#metadata && now - this.#metadata.fetchedAt < DISCOVERY_TTL_MS) return this.#metadata.server
    this.#metadataInFlight ??= this.#discover(now).finally(() => (this.#metadataInFlight = undefined))
    return this.#metadataInFlight
  }

  async #discover(now: number): Promise<oauth.AuthorizationServer> {
    const issuer = new URL(this.settings.issuer)
    try {
      const server = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, this.requestOptions()))
      if (server.jwks_uri === undefined) throw new Error('the discovery document has no jwks_uri')
      this.#metadata = { server, fetchedAt: now }
      return server
    } catch (error) {
      this.deps.logger.warn('oidc.discovery_failed', { provider: this.name, error: String(error) })
      // A document past its 6 hours is still the provider's: used while the provider does not answer (asked again at the next use).
      if (this.#metadata !== undefined) return this.#metadata.server
      throw providerUnavailable(this.name)
    }
  }

  /**
   * The key that signed a token, for jose's jwtVerify: from the cached set,
   * or from the set fetched again when the token names a key the cache does
   * not hold and the floor allows a request. No key: jose's JWKSNoMatchingKey
   * (a 401 to the caller); the provider down: 503.
   */
  readonly key = async (header: JWTHeaderParameters, token: FlattenedJWSInput): ReturnType<KeyResolver> => {
    const cached = this.#keys ?? { resolve: await this.#fetchKeys(), fetchedAt: this.#lastKeyFetch }
    try {
      return await cached.resolve(header, token)
    } catch (error) {
      if (!(error instanceof jose.JWKSNoMatchingKey)) throw error
      if (this.deps.clock.now().getTime() - this.#lastKeyFetch < REFETCH_FLOOR_MS) throw error
      return (await this.#fetchKeys())(header, token)
    }
  }

  #fetchKeys(): Promise<KeyResolver> {
    this.#keysInFlight ??= this.#loadKeys().finally(() => (this.#keysInFlight = undefined))
    return this.#keysInFlight
  }

  async #loadKeys(): Promise<KeyResolver> {
    const server = await this.metadata()
    this.#lastKeyFetch = this.deps.clock.now().getTime()
    try {
      const response = await fetch(server.jwks_uri!, { signal: this.requestOptions().signal, headers: { accept: 'application/json' }, redirect: 'error' })
      if (response.status !== 200) throw new Error(`the key set answered ${response.status}`)
      const set = (await response.json()) as JSONWebKeySet
      const resolve = createLocalJWKSet(set)
      this.#keys = { resolve, fetchedAt: this.#lastKeyFetch }
      return resolve
    } catch (error) {
      this.deps.logger.warn('oidc.jwks_failed', { provider: this.name, error: String(error) })
      throw providerUnavailable(this.name)
    }
  }
}
