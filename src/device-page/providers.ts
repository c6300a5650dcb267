// The device page's "Sign in with …" links (contract §13): every OpenID
// Connect provider of ARENA_OIDC_PROVIDERS, through the OIDC service's web
// flow with purpose 'device'. The flow comes back to the page's own path with
// `?signin=<one-time code>` (or `signin_error=<code>`) in the query, which
// the page redeems on the server (once, within 60 s) for the account.
import { AppError } from '../shared/errors'
import type { DeviceSignInProviders } from './index'

/** What the page needs of the OIDC service (src/modules/auth/oidc/service.ts). */
export interface OidcFlows {
  providerNames(): string[]
  startFlow(name: string, options: { purpose: 'device'; redirect: string; create: boolean; origin: string }): Promise<string>
  redeemExchange(code: string): Promise<{ userId: string }>
}

/** How the page names the providers it knows; any other by its configured name. */
const LABELS: Record<string, string> = { google: 'Google', apple: 'Apple', microsoft: 'Microsoft', epic: 'Epic Games', twitch: 'Twitch', steam: 'Steam' }

export function oidcProviders(oidc: OidcFlows, originOf: (request: Request) => string): DeviceSignInProviders {
  return {
    list: () => oidc.providerNames().map((name) => ({ name, label: Object.hasOwn(LABELS, name) ? LABELS[name]! : name })),
    // A first sign-in with a provider creates the account, as a game's web sign-in with create=1 does: a new player may start on the TV.
    start: (name, returnTo, request) => oidc.startFlow(name, { purpose: 'device', redirect: returnTo, create: true, origin: originOf(request) }),
    async redeem(code) {
      try {
        return (await oidc.redeemExchange(code)).userId
      } catch (error) {
        if (error instanceof AppError && error.code === 'invalid_credentials') return null
        throw error
      }
    },
  }
}
