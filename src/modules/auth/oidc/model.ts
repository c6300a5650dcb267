import { t, type Static } from 'elysia'

export const ProviderParams = t.Object({ provider: t.String({ minLength: 1, maxLength: 64, description: 'a configured provider name (`google`)' }) })

export const IdTokenLoginBody = t.Object(
  {
    idToken: t.String({ minLength: 1, maxLength: 16_384, description: "the ID token the provider's SDK gave the app (a JWT)" }),
    nonce: t.Optional(t.String({ minLength: 1, maxLength: 512, description: "the nonce the app asked the provider to put in the token; checked when given" })),
    create: t.Optional(t.Boolean({ description: 'create an account when the identity has none' })),
  },
  { $id: 'IdTokenLoginBody' },
)

export const ExchangeBody = t.Object({ code: t.String({ minLength: 1, maxLength: 512, description: 'the `code` of the redirect\'s fragment' }) }, { $id: 'ExchangeBody' })

export const StartQuery = t.Object({
  redirect: t.String({ minLength: 1, maxLength: 2048, description: 'where the player comes back; must start with one of ARENA_OIDC_REDIRECTS' }),
  create: t.Optional(t.Union([t.Literal('1'), t.Literal('0'), t.Literal('true'), t.Literal('false')], { description: '`1`: a first sign-in creates an account' })),
})

/** What a provider sends back (RFC 6749 §4.1.2, RFC 9207's `iss`); anything else it adds is ignored. */
export const CallbackQuery = t.Object(
  {
    state: t.Optional(t.String({ maxLength: 512 })),
    code: t.Optional(t.String({ maxLength: 4096 })),
    error: t.Optional(t.String({ maxLength: 256 })),
    error_description: t.Optional(t.String({ maxLength: 2048 })),
    iss: t.Optional(t.String({ maxLength: 2048 })),
  },
  { additionalProperties: true },
)

/** A 302: the answer is its Location. */
export const Redirect = t.Void({ description: 'a redirect: see the Location header' })
