// What the OpenID Connect web flow needs from a database (contract §13): the
// flows under way (oidc_login_flows) and the one-time exchange codes
// (login_exchange_codes). Both are taken once: a take deletes the row and
// returns it, so of two callbacks with one state, or two exchanges of one
// code, exactly one gets it. Implemented once in src/db/stores/oidc.ts.

/** A web sign-in under way: only the state's SHA-256 is kept; the PKCE verifier and the nonce are derived from the state. */
export interface OidcFlow {
  stateHash: string
  /** The configured provider name (`google`). */
  provider: string
  redirect: string
  create: boolean
  /** `login`: a game's web sign-in (the code in the fragment); `device`: the device-code page's sign-in (the code in the query). */
  purpose: 'login' | 'device'
  createdAt: Date
  expiresAt: Date
}

/** A code the callback handed out, to be traded for a session once. */
export interface ExchangeCode {
  codeHash: string
  userId: string
  created: boolean
  createdAt: Date
  expiresAt: Date
}

export interface OidcStore {
  insertFlow(flow: OidcFlow): Promise<void>
  /** Deletes the flow of this state and returns it if it had not expired at `now`; null if there was none (or it had). */
  takeFlow(stateHash: string, now: Date): Promise<OidcFlow | null>
  insertExchangeCode(code: ExchangeCode): Promise<void>
  /** Deletes the code and returns it if it had not expired at `now`; null if there was none (or it had). */
  takeExchangeCode(codeHash: string, now: Date): Promise<ExchangeCode | null>
  /** Housekeeping: deletes the flows expired at `now`; how many. */
  pruneExpiredFlows(now: Date): Promise<number>
  /** Housekeeping: deletes the exchange codes expired at `now`; how many. */
  pruneExpiredExchangeCodes(now: Date): Promise<number>
}
