// A real OpenID Connect provider on loopback for the §13 tests: the certified
// `oidc-provider` package (a Koa app) under node:http on 127.0.0.1, port 0.
// It serves its real discovery document, key set, authorization endpoint (its
// development login and consent forms, driven with real HTTP requests and
// cookies) and token endpoint. The test holds the private signing keys it was
// configured with, so it can also sign tokens the provider never would
// (expired, for another audience, ...) and rotate them: `rotateKeys` starts a
// new provider on the same address with a new key.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import Provider from 'oidc-provider'
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose'

export interface ProviderKey {
  kid: string
  privateJwk: JWK & { kid: string }
  privateKey: CryptoKey
}

export interface OidcProviderFixture {
  issuer: string
  clientId: string
  clientSecret: string
  /** The key the provider signs with now. */
  key: ProviderKey
  /** How many times each path was requested (`/jwks`, `/.well-known/openid-configuration`, ...). */
  hits: Map<string, number>
  /** A new signing key (new kid); the provider keeps serving the previous ones in its key set only if `keepOld`. */
  rotateKeys(options?: { keepOld?: boolean }): Promise<ProviderKey>
  /** Signs an ID token with `key` (default: the current one): sensible claims for `sub`, overridden by `claims`. */
  mint(sub: string, claims?: Record<string, unknown>, options?: { key?: ProviderKey; header?: Record<string, unknown> }): Promise<string>
  /** Stops answering (every request is refused at the socket), or answers again. */
  setDown(down: boolean): void
  /** Accepts requests and never answers them (a provider that hangs), or answers again. */
  setHanging(hanging: boolean): void
  /** Drives the provider's real authorization endpoint as a browser would: login as `account`, consent; returns the redirect to the client's redirect_uri. */
  authorize(authorizationUrl: string, account: string): Promise<URL>
  /** The same, but the player cancels at the login form: the redirect carries error=access_denied. */
  authorizeAndCancel(authorizationUrl: string): Promise<URL>
  close(): Promise<void>
}

async function newKey(): Promise<ProviderKey> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true })
  const kid = `k${crypto.randomUUID().slice(0, 8)}`
  const jwk = await exportJWK(privateKey)
  return { kid, privateJwk: { ...jwk, kid, alg: 'RS256', use: 'sig' }, privateKey }
}

/** The email the provider gives an account: `<account>@players.example`, verified, unless the account is named `unverified-…`. */
export function emailOf(account: string): string {
  return `${account}@players.example`
}

export async function startOidcProvider(options: { redirectUris: string[]; clientId?: string; clientSecret?: string }): Promise<OidcProviderFixture> {
  const clientId = options.clientId ?? 'arena-test-client'
  const clientSecret = options.clientSecret ?? 'a-client-secret-of-the-test-provider-0123456789'
  const hits = new Map<string, number>()
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined
  let down = false
  let hanging = false
  const server: Server = createServer((req, res) => {
    if (down) {
      req.socket.destroy()
      return
    }
    if (hanging) return
    const path = (req.url ?? '/').split('?')[0]!
    hits.set(path, (hits.get(path) ?? 0) + 1)
    handler!(req, res)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  // Newest key first: the provider signs with the first RS256 key of its set.
  let keys: ProviderKey[] = [await newKey()]
  const build = () => {
    const provider = new Provider(issuer, {
      clients: [
        {
          client_id: clientId,
          client_secret: clientSecret,
          redirect_uris: options.redirectUris,
          grant_types: ['authorization_code'],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_basic',
        },
      ],
      jwks: { keys: keys.map((k) => k.privateJwk) },
      async findAccount(_ctx: unknown, id: string) {
        return {
          accountId: id,
          async claims() {
            return { sub: id, email: emailOf(id), email_verified: !id.startsWith('unverified-'), name: `Player ${id}` }
          },
        }
      },
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
      features: { devInteractions: { enabled: true } },
      cookies: { keys: ['oidc-provider-test-cookie-key'] },
      // The claims of the scopes in the ID token too, as Google, Apple and Microsoft put them there.
      conformIdTokenClaims: false,
      ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
    })
    // Quiet: the provider's own error events would only be noise in the test output.
    provider.on('server_error', () => {})
    handler = provider.callback()
  }
  build()

  const jar = new Map<string, string>()
  const cookieHeader = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ')
  const keep = (response: Response) => {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const eq = pair!.indexOf('=')
      jar.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim())
    }
  }
  const step = async (url: string, init: RequestInit = {}): Promise<Response> => {
    const response = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), cookie: cookieHeader() } })
    keep(response)
    return response
  }
  const absolute = (location: string) => new URL(location, issuer)
  /** Follows redirects within the provider; returns the first one that leaves it (the client's redirect_uri), or the page it stopped at. */
  const follow = async (start: string): Promise<{ left?: URL; page?: { url: string; html: string } }> => {
    let url = start
    for (let i = 0; i < 10; i++) {
      const response = await step(url)
      if (response.status >= 300 && response.status < 400) {
        const next = absolute(response.headers.get('location')!)
        if (next.origin !== issuer) return { left: next }
        url = next.href
        continue
      }
      if (response.status !== 200) throw new Error(`the provider answered ${response.status} at ${url}: ${await response.text()}`)
      return { page: { url, html: await response.text() } }
    }
    throw new Error('too many redirects at the provider')
  }
  const submit = async (page: { html: string }, fields: Record<string, string>): Promise<string> => {
    const action = /<form[^>]*action="([^"]+)"/.exec(page.html)?.[1]
    if (action === undefined) throw new Error(`no form on the provider's page: ${page.html.slice(0, 400)}`)
    const response = await step(absolute(action.replaceAll('&amp;', '&')).href, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    })
    if (response.status < 300 || response.status >= 400) throw new Error(`the provider's form answered ${response.status}: ${await response.text()}`)
    return absolute(response.headers.get('location')!).href
  }

  return {
    issuer,
    clientId,
    clientSecret,
    get key() {
      return keys[0]!
    },
    hits,
    async rotateKeys(rotation = {}) {
      const key = await newKey()
      keys = rotation.keepOld ? [key, ...keys] : [key]
      build()
      return key
    },
    async mint(sub, claims = {}, mintOptions = {}) {
      const key = mintOptions.key ?? keys[0]!
      const now = Math.floor(Date.now() / 1000)
      return new SignJWT({ email: emailOf(sub), email_verified: true, ...claims })
        .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'JWT', ...mintOptions.header })
        .setIssuer((claims.iss as string | undefined) ?? issuer)
        .setSubject(sub)
        .setAudience((claims.aud as string | string[] | undefined) ?? clientId)
        .setIssuedAt((claims.iat as number | undefined) ?? now)
        .setExpirationTime((claims.exp as number | undefined) ?? now + 600)
        .sign(key.privateKey)
    },
    setDown(value) {
      down = value
    },
    setHanging(value) {
      hanging = value
    },
    async authorize(authorizationUrl, account) {
      jar.clear()
      let at = await follow(authorizationUrl)
      for (let i = 0; i < 4 && at.page; i++) {
        const html = at.page.html
        const next = html.includes('name="prompt" value="login"')
          ? await submit(at.page, { prompt: 'login', login: account, password: 'any' })
          : await submit(at.page, { prompt: 'consent' })
        at = await follow(next)
      }
      if (at.left === undefined) throw new Error('the provider never sent the browser back')
      return at.left
    },
    async authorizeAndCancel(authorizationUrl) {
      jar.clear()
      const at = await follow(authorizationUrl)
      if (at.page === undefined) throw new Error('the provider did not show its login page')
      const abort = /href="([^"]*\/abort)"/.exec(at.page.html)?.[1] ?? `${at.page.url}/abort`
      const left = (await follow(absolute(abort.replaceAll('&amp;', '&')).href)).left
      if (left === undefined) throw new Error('the provider never sent the browser back')
      return left
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
