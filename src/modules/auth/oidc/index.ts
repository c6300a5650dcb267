// OpenID Connect sign-in over HTTP (contract §13): the native ID-token login,
// the web flow's start and callback (redirects, not JSON), and the exchange
// of the callback's one-time code.
import { Elysia } from 'elysia'
import { errors, INVALID, JSON_BODY, STORAGE } from '../../../plugins/openapi'
import { answerSignIn, clientAddress, DEVICE_DESCRIPTION, signInFrom, type ClientAddressOptions } from '../index'
import { requestOrigin } from '../../../shared/request-origin'
import { SignInResponse } from '../model'
import { CallbackQuery, ExchangeBody, IdTokenLoginBody, ProviderParams, Redirect, StartQuery } from './model'
import type { OidcService } from './service'

/** A redirect nobody caches, that tells the next site nothing of where the player came from (the callback's URL holds the provider's code). */
function redirectTo(location: string): Response {
  return new Response(null, { status: 302, headers: { location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' } })
}

export function oidcModule(oidc: OidcService, options: ClientAddressOptions) {
  return new Elysia({ name: 'arena/oidc', prefix: '/api/v1' })
    .post(
      '/user/login/oidc/:provider',
      async ({ params, body, request, server, set }) => answerSignIn(set, await oidc.signInWithIdToken(params.provider, body, signInFrom(request, server, options))),
      {
        params: ProviderParams,
        body: IdTokenLoginBody,
        response: {
          200: SignInResponse,
          ...errors(JSON_BODY, { 401: ['invalid_credentials'], 403: ['account_banned'], 404: ['not_found'], 409: ['account_exists'], 429: ['rate_limited'] }, STORAGE),
        },
        detail: {
          tags: ['auth'],
          summary: "Sign in with an OpenID Connect provider's ID token (native and mobile apps); with create, a first sign-in creates the account",
          description: '503 also when the provider cannot be reached for its keys. ' + DEVICE_DESCRIPTION,
        },
      },
    )
    .get(
      '/auth/oidc/:provider/start',
      async ({ params, query, request }) =>
        redirectTo(await oidc.startFlow(params.provider, { purpose: 'login', redirect: query.redirect, create: query.create === '1' || query.create === 'true', origin: requestOrigin(request, options.trustProxy) })),
      {
        params: ProviderParams,
        query: StartQuery,
        response: { 302: Redirect, ...errors(INVALID, { 404: ['not_found'] }, STORAGE) },
        detail: {
          tags: ['auth'],
          summary: "Start a web sign-in: 302 to the provider's authorization endpoint (PKCE S256, state, nonce)",
          description: '503 also when the provider cannot be reached for its discovery document.',
        },
      },
    )
    .get(
      '/auth/oidc/:provider/callback',
      async ({ params, request, server }) => {
        const url = new URL(request.url)
        return redirectTo(await oidc.callback(params.provider, url.searchParams, { origin: requestOrigin(request, options.trustProxy), address: clientAddress(request, server, options) }))
      },
      {
        params: ProviderParams,
        query: CallbackQuery,
        response: { 302: Redirect, ...errors(INVALID, { 400: ['bad_request'], 404: ['not_found'] }, STORAGE) },
        detail: {
          tags: ['auth'],
          summary: "Where the provider sends the player back: 302 to the flow's redirect with #code=… or #error=<code>",
          description: '400 bad_request for a state that is unknown, used or expired (there is then nowhere trusted to send the player).',
        },
      },
    )
    .post(
      '/user/login/exchange',
      async ({ body, request, server, set }) => answerSignIn(set, await oidc.exchange(body.code, signInFrom(request, server, options))),
      {
        body: ExchangeBody,
        response: { 200: SignInResponse, ...errors(JSON_BODY, { 401: ['invalid_credentials'], 403: ['account_banned'] }, STORAGE) },
        detail: { tags: ['auth'], summary: "Trade a web sign-in's one-time code (the redirect's #code) for tokens: once, within 60 s", description: DEVICE_DESCRIPTION },
      },
    )
}
