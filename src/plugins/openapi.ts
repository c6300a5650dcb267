// The OpenAPI document at /openapi/json and a Swagger UI page at /openapi.
// The UI's script and stylesheet are embedded in the binary and served from
// here, so the docs page works on a machine with no internet access.
//
// Routes describe themselves (schemas, `detail`, the response map built by
// `errors()`); finishDocument() below fixes the things the plugin's
// generator gets wrong for us, so that the document passes an OpenAPI 3.1
// validator (test/platform/openapi.test.ts) and a client generated from it
// types every request (test/platform/openapi-client.test.ts).
import { openapi, toOpenAPISchema, withHeaders } from '@elysiajs/openapi'
import { Type, type TSchema } from '@sinclair/typebox'
import { Elysia, t, type InternalRoute } from 'elysia'
import swaggerBundlePath from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'file' }
import swaggerCssPath from 'swagger-ui-dist/swagger-ui.css' with { type: 'file' }
import type { ErrorCode } from '../shared/errors'
import { ErrorResponse } from '../shared/models'
import { VERSION } from '../shared/version'

export const DOCS_PATH = '/openapi'
/** Name of the bearer scheme; routes behind the auth guard list it in `detail.security`. */
export const BEARER_SCHEME = 'bearer'
export const BEARER_SECURITY = [{ [BEARER_SCHEME]: [] }]
export const SPEC_PATH = '/openapi/json'
const ASSETS = '/openapi/assets'

// ---------------------------------------------------------------------------
// The headers arena reads besides Authorization.
//
// Each is required by the routes that use it, yet none is declared required in
// the route's TypeBox `headers`: Elysia would then refuse a request without it
// with a 422 from validation, where the route answers 401 or 403 with its own
// code (a missing x-game-key is 403 invalid_game_key, and it is checked after
// the body). So a route declares them twice, from one definition here: an
// optional string in `headers` (what is validated) and a required header
// parameter in `detail.parameters` (what is documented).

export const SPECIAL_HEADERS = {
  'x-game-key': 'The game key an operator got when creating the game (or from its last rotation). Missing or wrong: 403 invalid_game_key.',
  'x-session-token': 'The single-use `token` of a game session issued to the caller for this match. Missing, used, expired or not the caller\'s: 401 session_token_invalid.',
  'x-secure-session': 'The `sessionToken` of the PIN session being verified. Missing, wrong or another user\'s: 401 unauthorized.',
  'x-admin-token': 'The operator token (ARENA_ADMIN_TOKEN). Missing or wrong: 401 unauthorized.',
  'x-arena-signature': '`<serverId>.<unix seconds>.<signature>`: the game server\'s Ed25519 signature (base64url, no padding) over `<unix seconds>\\n<METHOD>\\n<path as sent, /api/v1 and query included>\\n<hex SHA-256 of the body bytes>`, within ±60 s, accepted once. Otherwise: 401 invalid_signature (409 signature_reused once accepted).',
} as const

export type SpecialHeader = keyof typeof SPECIAL_HEADERS

export interface HeaderParameter {
  name: SpecialHeader
  in: 'header'
  required: true
  description: string
  schema: { type: 'string' }
}

/** `names` as required header parameters, for a route's `detail.parameters`. */
export function requiredHeaders(...names: SpecialHeader[]): HeaderParameter[] {
  return names.map((name) => ({ name, in: 'header', required: true, description: SPECIAL_HEADERS[name], schema: { type: 'string' } }))
}

/** The runtime schema and the documentation of the same headers (see above). */
export function routeHeaders(...names: SpecialHeader[]) {
  return {
    schema: t.Object(Object.fromEntries(names.map((name) => [name, t.Optional(t.String({ description: SPECIAL_HEADERS[name] }))]))),
    parameters: requiredHeaders(...names),
  }
}

// ---------------------------------------------------------------------------
// Request bodies.
//
// Every body is JSON (src/plugins/json-body.ts answers anything else with 415;
// the console's forms are not in the document), and every body model has an
// `$id`, its name in `components.schemas` (describeBodies below).

/**
 * A route's body that may also be left out: no body at all is taken as `{}`.
 * Spread into the route's hooks instead of `body:`; the document then says
 * the body is not required.
 */
export function optionalBody<S extends TSchema>(schema: S) {
  return { body: schema, transform: absentBodyIsEmpty }
}

function absentBodyIsEmpty(context: { body: unknown }): void {
  if (context.body === null || context.body === undefined) context.body = {}
}

// ---------------------------------------------------------------------------
// Error responses. Every error a route can answer is in its response map, as
// the envelope, with the codes that status carries on that route in the
// response's description. Errors leave through the error handler as ready
// Responses, so these schemas are never used to validate anything: they only
// describe.

type ErrorCodes = Partial<Record<number, readonly ErrorCode[]>>

/** Any route: headers over 16 KiB or a body over 64 KiB are refused before routing; every route is rate-limited (contract §20); anything unforeseen is a 500. */
const ANY_ROUTE: ErrorCodes = { 413: ['payload_too_large'], 429: ['rate_limited'], 431: ['request_header_fields_too_large'], 500: ['internal'] }
/** Any POST or PUT: its body is parsed (when it has one) before anything else. */
export const JSON_BODY: ErrorCodes = { 400: ['malformed_json'], 415: ['unsupported_media_type'], 422: ['validation_failed'] }
/** Path parameters, a query or a body that break the route's schema. */
export const INVALID: ErrorCodes = { 422: ['validation_failed'] }
/** Behind the bearer guard. */
export const BEARER: ErrorCodes = { 401: ['unauthorized'] }
/** Reads or writes the database: a busy, full or failing disk is a 503 with Retry-After. */
export const STORAGE: ErrorCodes = { 503: ['service_unavailable'] }

// TypeBox's own Integer: Elysia's `t.Integer` also accepts numeric strings, and says so in the schema.
const RETRY_AFTER = { 'retry-after': Type.Integer({ minimum: 1, description: 'seconds to wait before trying again' }) }
/** What a rate-limited answer says about the limits (draft-ietf-httpapi-ratelimit-headers; docs/api.md, "Rate limits"). */
const RATE_LIMITED = {
  ...RETRY_AFTER,
  'ratelimit-policy': Type.String({ description: 'the policies of the route\'s group: `"<group>.<address|account|game>";q=<quota>;w=<window s>`, comma-separated' }),
  ratelimit: Type.String({ description: 'what is left of each counted policy: `"<policy>";r=<remaining>;t=<seconds to the window\'s end>`, comma-separated' }),
}

/**
 * The error part of a route's response map: `{ 200: X, ...errors(BEARER, { 404: ['not_found'] }) }`.
 * Codes of the same status from several sets are merged; 413, 431 and 500 are added to every route.
 */
export function errors(...sets: ErrorCodes[]): Record<number, TSchema> {
  const merged = new Map<number, Set<string>>()
  for (const set of [...sets, ANY_ROUTE]) {
    for (const [status, codes] of Object.entries(set)) {
      const known = merged.get(Number(status)) ?? new Set<string>()
      for (const code of codes ?? []) known.add(code)
      merged.set(Number(status), known)
    }
  }
  const map: Record<number, TSchema> = {}
  for (const [status, codes] of [...merged].sort(([a], [b]) => a - b)) {
    // The plugin takes a response's description from its schema's: a copy of
    // the envelope per status, all with the envelope's $id (one component).
    const schema = { ...ErrorResponse, description: `Error codes: ${[...codes].map((c) => `\`${c}\``).join(', ')}` }
    map[status] = status === 429 ? withHeaders(schema, RATE_LIMITED) : status === 503 ? withHeaders(schema, RETRY_AFTER) : schema
  }
  return map
}

// ---------------------------------------------------------------------------
// Finishing the generated document.

type Json = Record<string, unknown>
interface Operation extends Json {
  parameters?: { name: string; in: string }[]
}

/** Elysia's `/a/:id` as OpenAPI's `/a/{id}`. */
export function openApiPath(path: string): string {
  return path.replace(/:([^/]+)/g, '{$1}')
}

/**
 * The plugin replaces a route's `detail.parameters` with the parameters it
 * derives from the route's schemas whenever there are any (a path parameter
 * is enough): put the route's own back, winning over a derived one of the
 * same name and place (the optional header of `routeHeaders`).
 */
function restoreParameters(doc: Json, routes: InternalRoute[]): void {
  const paths = doc.paths as Record<string, Record<string, Operation>>
  for (const route of routes) {
    const declared = (route.hooks as { detail?: { parameters?: Operation['parameters'] } }).detail?.parameters
    const operation = paths[openApiPath(route.path)]?.[route.method.toLowerCase()]
    if (!declared || !operation) continue
    const derived = (operation.parameters ?? []).filter((p) => !declared.some((d) => d.name === p.name && d.in === p.in))
    operation.parameters = [...derived, ...declared]
  }
}

interface RouteHooks {
  body?: unknown
  transform?: { fn: unknown }[]
}

/**
 * The plugin describes a body by the parsers its route names, and ours is one
 * global parse hook (json-body.ts), a function it cannot name: every body came
 * out as `content: {}`, which a client generator types as no body at all. So
 * the bodies are rendered by the plugin's own generator from a probe app that
 * has each route's body schema and no parse hook (the same JSON Schema as
 * every other schema of the document gets: enums, nullables), and go in as
 * JSON, the one media type json-body.ts takes. hoistModels then turns each
 * into a `$ref` to its model's component.
 */
function describeBodies(doc: Json, routes: InternalRoute[]): void {
  const paths = doc.paths as Record<string, Record<string, Operation>>
  const probe = new Elysia()
  const described: { operation: Operation; probePath: string; required: boolean }[] = []
  for (const route of routes) {
    const hooks = route.hooks as RouteHooks
    const operation = paths[openApiPath(route.path)]?.[route.method.toLowerCase()]
    if (!operation || typeof hooks.body !== 'object' || hooks.body === null) continue
    const probePath = `/${described.length}`
    probe.post(probePath, () => null, { body: hooks.body as TSchema })
    described.push({ operation, probePath, required: !(hooks.transform ?? []).some((hook) => hook.fn === absentBodyIsEmpty) })
  }
  const rendered = toOpenAPISchema(probe).paths as Record<string, { post?: { requestBody?: { content?: Record<string, { schema?: unknown }> } } }>
  for (const { operation, probePath, required } of described) {
    const schema = rendered[probePath]?.post?.requestBody?.content?.['application/json']?.schema
    if (schema === undefined) throw new Error(`OpenAPI: no JSON Schema for the body of ${JSON.stringify(operation.summary ?? probePath)}`)
    operation.requestBody = { required, content: { 'application/json': { schema } } }
  }
}

/**
 * The plugin writes every TypeBox model inline, `$id` included, wherever it is
 * used: the error envelope alone appears dozens of times with the same `$id`,
 * which JSON Schema forbids. Each model with an `$id` becomes one entry of
 * `components.schemas` under that name, referenced where it was used. Two
 * different schemas under one `$id` are a bug in the models: refused. A use
 * may carry its own description (errors() gives each status its codes, and the
 * response already shows them); the model keeps one only if every use agrees.
 */
/**
 * A redirect's answer (the OpenID Connect web flow, `response: { 302:
 * Redirect }`): the generator writes its Void schema where the content map
 * belongs. A redirect has no body; it is its Location header. A WebSocket
 * upgrade's 101 (Void too) has none either, nor a 204 (a deletion's answer).
 */
function describeRedirects(doc: Json): void {
  for (const path of Object.values(doc.paths as Json)) {
    for (const operation of Object.values(path as Json)) {
      const responses = (operation as Json).responses as Json | undefined
      for (const [status, response] of Object.entries(responses ?? {})) {
        if (status === '101') {
          // A WebSocket upgrade (the event socket, contract §14): no body, the connection switches protocol.
          responses![status] = { description: ((response as Json).description as string | undefined) ?? 'Switching Protocols' }
          continue
        }
        if (status === '204') {
          // No Content (DELETE /admin/webhooks/{id}): the status is the whole answer.
          responses![status] = { description: ((response as Json).description as string | undefined) ?? 'No Content' }
          continue
        }
        if (!/^3\d\d$/.test(status)) continue
        const description = ((response as Json).description as string | undefined) ?? 'a redirect'
        responses![status] = { description, headers: { location: { description: 'where the browser goes next', schema: { type: 'string' } } } }
      }
    }
  }
}

function hoistModels(doc: Json): void {
  const components = (doc.components ??= {}) as Json
  const schemas = (components.schemas ??= {}) as Json
  const models = new Map<string, { body: string; descriptions: Set<unknown> }>()
  const visit = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(visit)
    if (value === null || typeof value !== 'object') return value
    const { $id, ...rest } = value as Json
    // Elysia sets `additionalProperties: false` on a route's schemas when it
    // compiles the route, i.e. on its first request: left in, the document
    // would change with traffic. No model of ours sets it, and undeclared
    // properties of a body are dropped, not refused: what the document says
    // without it.
    if (rest.additionalProperties === false) delete rest.additionalProperties
    const inner = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, visit(v)]))
    if (typeof $id !== 'string') return inner
    const { description, ...model } = inner
    const body = JSON.stringify(model)
    const known = models.get($id)
    if (!known) {
      models.set($id, { body, descriptions: new Set([description]) })
      schemas[$id] = model
    } else if (known.body !== body) {
      throw new Error(`OpenAPI: two different schemas share the $id ${JSON.stringify($id)}`)
    } else known.descriptions.add(description)
    return { $ref: `#/components/schemas/${$id}` }
  }
  doc.paths = visit(doc.paths)
  for (const [id, { descriptions }] of models) {
    const [only] = descriptions
    if (descriptions.size === 1 && typeof only === 'string') (schemas[id] as Json).description = only
  }
}

function isOpenApiDocument(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !(value instanceof Response) && typeof (value as Json).openapi === 'string' && typeof (value as Json).paths === 'object'
}

/** The document as served: a fresh copy each time, so the plugin's cached one stays as generated. */
export function finishDocument(generated: Json, routes: InternalRoute[]): Json {
  const doc = structuredClone(generated)
  restoreParameters(doc, routes)
  describeBodies(doc, routes)
  describeRedirects(doc)
  hoistModels(doc)
  // Every use of the envelope describes its own codes; the model says what it is.
  const envelope = ((doc.components as Json).schemas as Json)[ErrorResponse.$id!] as Json | undefined
  if (envelope && ErrorResponse.description) envelope.description = ErrorResponse.description
  return doc
}

/** A factory, not a shared instance: the document describes the app it is mounted in. */
export const apiDocs = () => {
  const docs = new Elysia({ name: 'arena/openapi' })
  // The plugin documents the whole app through this (protected) accessor; so do we.
  const routes = () => (docs as unknown as { getGlobalRoutes(): InternalRoute[] }).getGlobalRoutes()
  const finished = new WeakMap<object, Json>()
  return (
    docs
      // Registered before the plugin, so it applies to the plugin's routes (and
      // only to those of this instance). Of these, only the document is a plain
      // object: the page and the assets are Responses. (Recognised by its shape,
      // not by `route`, which Elysia fills only when it sees a hook use it.)
      .onAfterHandle(({ responseValue }) => {
        if (!isOpenApiDocument(responseValue)) return
        // The plugin hands out one cached document while the routes stay the same:
        // finish it once (rendering every body takes ~10-20 ms), not per request.
        let done = finished.get(responseValue)
        if (!done) finished.set(responseValue, (done = finishDocument(responseValue, routes())))
        return done
      })
      .use(
        openapi({
          path: DOCS_PATH,
          specPath: SPEC_PATH,
          provider: 'swagger-ui',
          swagger: {
            // The plugin points the page at a relative "openapi/json", which breaks
            // when the page is opened as /openapi/. Its typings omit `url`, but the
            // value given here is spread over that default.
            ...({ url: SPEC_PATH } as object),
            cdn: `${ASSETS}/swagger-ui-bundle.js`,
            theme: `${ASSETS}/swagger-ui.css`,
            autoDarkMode: true,
          },
          documentation: {
            info: {
              title: 'arena',
              version: VERSION,
              description:
                'Self-hosted backend for game platforms: player identity, match arbitration, secure purchases. ' +
                'Every error is the envelope { error: { code, message, status, details? } }; the codes a response can carry are listed in its description. ' +
                'The full reference, with every rule, is docs/api.md in the repository.',
            },
            components: {
              securitySchemes: {
                [BEARER_SCHEME]: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'access token from login or /auth/validate' },
              },
            },
          },
        }),
      )
      .get(`${ASSETS}/swagger-ui-bundle.js`, asset(swaggerBundlePath, 'application/javascript; charset=utf-8'), {
        detail: { hide: true },
      })
      .get(`${ASSETS}/swagger-ui.css`, asset(swaggerCssPath, 'text/css; charset=utf-8'), { detail: { hide: true } })
  )
}

function asset(path: string, contentType: string) {
  return () =>
    new Response(Bun.file(path), {
      headers: { 'content-type': contentType, 'cache-control': 'public, max-age=86400' },
    })
}
