// ARENA_OIDC_PROVIDERS and ARENA_OIDC_REDIRECTS (contract §13): read once by
// src/config.ts, each problem named so an operator fixes them all in one go.
// Pure: no I/O (the issuer is only fetched when a player first signs in).
import { Secret } from '../../../shared/secret'

/** One OpenID Connect provider the studio configured. */
export interface OidcProviderSettings {
  /** The `{provider}` of the routes; the identity's provider is `oidc:<name>`. */
  name: string
  /** The issuer identifier, exactly as the provider's ID tokens carry it in `iss`. */
  issuer: string
  clientId: string
  /** Other client ids whose ID tokens the native sign-in accepts too (Apple: the iOS app's bundle ID, when clientId is the web flow's Services ID). */
  nativeClientIds: readonly string[]
  /** For the web flow's token request (client_secret_basic); prints as [redacted]. Apple's is a JWT the studio signs (docs/identities.md). */
  clientSecret?: Secret
}

export const OIDC_PROVIDER_NAME = /^[a-z0-9_-]{1,32}$/
const EXAMPLE = '[{"name":"google","issuer":"https://accounts.google.com","clientId":"…apps.googleusercontent.com","clientSecret":"…"}]'

/** The providers of ARENA_OIDC_PROVIDERS (none when unset), pushing a problem for each mistake. */
export function parseOidcProviders(text: string | undefined, problems: string[]): readonly OidcProviderSettings[] {
  if (text === undefined) return []
  const name = 'ARENA_OIDC_PROVIDERS'
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    problems.push(`${name} must be JSON, a list such as ${EXAMPLE} (see docs/identities.md)`)
    return []
  }
  if (!Array.isArray(parsed)) {
    problems.push(`${name} must be a JSON list of { name, issuer, clientId, clientSecret? }, such as ${EXAMPLE}`)
    return []
  }
  const providers: OidcProviderSettings[] = []
  const seen = new Set<string>()
  parsed.forEach((entry: unknown, index) => {
    const where = `${name}[${index}]`
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
      problems.push(`${where} must be an object { name, issuer, clientId, clientSecret? }`)
      return
    }
    const given = entry as Record<string, unknown>
    const before = problems.length
    for (const key of Object.keys(given)) {
      if (!['name', 'issuer', 'clientId', 'clientSecret', 'nativeClientIds'].includes(key)) problems.push(`${where} has no "${key}" (known: name, issuer, clientId, clientSecret, nativeClientIds)`)
    }
    if (typeof given.name !== 'string' || !OIDC_PROVIDER_NAME.test(given.name)) {
      problems.push(`${where}.name must be 1 to 32 of a-z, 0-9, _ and - (it is the {provider} of the routes), got ${JSON.stringify(given.name)}`)
    } else if (seen.has(given.name)) {
      problems.push(`${where}.name "${given.name}" is given twice: each provider needs its own name`)
    }
    if (typeof given.issuer !== 'string' || !isIssuer(given.issuer)) {
      problems.push(`${where}.issuer must be the provider's issuer URL, https:// (http:// only for localhost), without a query or fragment, got ${JSON.stringify(given.issuer)}`)
    }
    if (typeof given.clientId !== 'string' || given.clientId.length === 0 || given.clientId.length > 512) {
      problems.push(`${where}.clientId must be the client id the provider gave the app (1 to 512 characters)`)
    }
    if (given.nativeClientIds !== undefined && (!Array.isArray(given.nativeClientIds) || !given.nativeClientIds.every((id) => typeof id === 'string' && id.length > 0 && id.length <= 512))) {
      problems.push(`${where}.nativeClientIds must be a list of client ids (1 to 512 characters each), such as ["com.example.game"]`)
    }
    // The secret's value is never repeated in a problem.
    if (given.clientSecret !== undefined && (typeof given.clientSecret !== 'string' || given.clientSecret.length === 0)) {
      problems.push(`${where}.clientSecret must be a non-empty string when given`)
    }
    if (problems.length > before) return
    seen.add(given.name as string)
    providers.push({
      name: given.name as string,
      issuer: given.issuer as string,
      clientId: given.clientId as string,
      nativeClientIds: Object.freeze([...((given.nativeClientIds as string[] | undefined) ?? [])]),
      ...(given.clientSecret !== undefined ? { clientSecret: new Secret(given.clientSecret as string) } : {}),
    })
  })
  return Object.freeze(providers)
}

/** The allowed `redirect` prefixes of ARENA_OIDC_REDIRECTS (none when unset: the web flow refuses every redirect). */
export function parseOidcRedirects(text: string | undefined, problems: string[]): readonly string[] {
  if (text === undefined) return []
  const prefixes = text.split(',').map((prefix) => prefix.trim()).filter((prefix) => prefix !== '')
  for (const prefix of prefixes) {
    let url: URL | undefined
    try {
      url = new URL(prefix)
    } catch {}
    if (url === undefined || prefix.includes('#') || /\s/.test(prefix)) {
      problems.push(`ARENA_OIDC_REDIRECTS: "${prefix}" must be a URL prefix such as https://game.example.com/ or an app's scheme such as mygame://signin, without a fragment`)
    } else if ((url.protocol === 'https:' || url.protocol === 'http:') && !/^https?:\/\/[^/?#]+\//.test(prefix)) {
      // Else https://game.example.com would also allow https://game.example.com.evil.net.
      problems.push(`ARENA_OIDC_REDIRECTS: "${prefix}" must end its host with a slash (https://game.example.com/), or it would also allow other hosts that start the same`)
    }
  }
  return Object.freeze(prefixes)
}

function isIssuer(text: string): boolean {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return false
  }
  if (url.search !== '' || url.hash !== '' || text.includes('#') || text.includes('?')) return false
  if (url.protocol === 'https:') return true
  return url.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname)
}

/** Whether `redirect` may be a web sign-in's target: it starts with one of the allowed prefixes. */
export function redirectAllowed(redirect: string, prefixes: readonly string[]): boolean {
  return prefixes.some((prefix) => redirect.startsWith(prefix))
}
