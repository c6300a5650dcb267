// The one place a failure becomes a response. Whatever was thrown — an
// AppError, an Elysia validation or routing error, a thrown status(), a
// SQLite error, a bug — leaves as the envelope of contract §0, and nothing
// else: no stack, no SQL, no echo of the submitted values (they may be
// passwords or PINs). Modules throw AppError; they never return status().
import { Elysia, ElysiaCustomStatusResponse, ParseError, ValidationError } from 'elysia'
import { isStorageUnavailable, mapEngineError, UnstorableTextError } from '../db/errors'
import { AppError, describeError, envelope, type ErrorDetail, type ErrorEnvelope } from '../shared/errors'
import type { Logger } from '../shared/logger'
import { REQUEST_ID_HEADER, requestState } from './request-context'

interface Mapped {
  status: number
  body: ErrorEnvelope
  headers?: Record<string, string>
  /** Unexpected: log it with its stack. */
  unexpected?: boolean
}

const MAX_DETAILS = 20

/**
 * Where a 'property' failure is. Elysia checks a coerced value (t.Numeric in
 * a query: `wait=31` is a numeric string, so the query passes its check, and
 * the number fails its bounds while being decoded) on its own, and reports
 * only the value, not its name. The name is found back in the URL: the query
 * parameter whose value is the failing one (all of them if several carry that
 * same value), else `request`.
 */
function propertyPlaces(error: ValidationError, url: URL): string[] {
  const failed = error.value
  const places: string[] = []
  for (const [name, raw] of url.searchParams) {
    const same = typeof failed === 'number' ? raw.trim() !== '' && Number(raw) === failed : typeof failed === 'string' && raw === failed
    if (same && !places.includes(`query/${name}`)) places.push(`query/${name}`)
  }
  return places.length > 0 ? places : ['request']
}

/** A union of literals (a format, a role, a status) says what it takes, instead of TypeBox's "Expected union value". */
function choicesOf(issue: unknown): string | undefined {
  if ((issue as { message?: unknown }).message !== 'Expected union value') return undefined
  const options = (issue as { schema?: { anyOf?: unknown } }).schema?.anyOf
  if (!Array.isArray(options) || options.length === 0) return undefined
  const values = options.map((option) => (option as { const?: unknown } | null)?.const)
  if (!values.every((value) => typeof value === 'string' || typeof value === 'number')) return undefined
  return `Expected one of: ${values.join(', ')}`
}

function validationDetails(error: ValidationError, url: URL): ErrorDetail[] {
  // body | query | params | headers, the issue's path under it ('body/name'); a
  // failed coercion of a single value is a 'property': named as its parameter.
  const places = error.type === 'property' ? propertyPlaces(error, url) : [error.type]
  const seen = new Set<string>()
  const details: ErrorDetail[] = []
  for (const [where, issue] of places.flatMap((where) => [...error.all].map((issue) => [where, issue] as const))) {
    const path = `${where}${'path' in issue && issue.path ? issue.path : ''}`
    // TypeBox's plain message ("Expected string"); Elysia's summary can quote the value.
    const message = choicesOf(issue) ?? ('message' in issue && typeof issue.message === 'string' ? issue.message : 'Invalid value')
    const key = `${path}\u0000${message}`
    if (seen.has(key)) continue
    seen.add(key)
    details.push({ path, message })
    if (details.length >= MAX_DETAILS) break
  }
  if (details.length === 0) for (const where of places) details.push({ path: where, message: 'Invalid value' })
  return details
}

const CODE_BY_STATUS: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  410: 'session_expired',
  413: 'payload_too_large',
  422: 'validation_failed',
  429: 'rate_limited',
  503: 'service_unavailable',
}

function isEnvelope(value: unknown): value is ErrorEnvelope {
  const inner = (value as { error?: { code?: unknown; message?: unknown } } | null)?.error
  return typeof inner?.code === 'string' && typeof inner.message === 'string'
}

/** A thrown Elysia status(): keep its status, and its body if it is already an envelope. */
function fromStatus(error: ElysiaCustomStatusResponse<number, unknown>): Mapped {
  const status = Number(error.code)
  if (!Number.isInteger(status) || status < 400 || status > 599) {
    return { status: 500, body: envelope(500, 'internal', 'Internal server error'), unexpected: true }
  }
  if (isEnvelope(error.response)) {
    return { status, body: envelope(status, error.response.error.code, error.response.error.message, error.response.error.details) }
  }
  const message = typeof error.response === 'string' && error.response.length > 0 ? error.response : `HTTP ${status}`
  return { status, body: envelope(status, CODE_BY_STATUS[status] ?? (status >= 500 ? 'internal' : 'bad_request'), message) }
}

export const INTERNAL_ERROR_BODY = envelope(500, 'internal', 'Internal server error')

function map(code: string | number, error: unknown, method: string, url: URL): Mapped {
  const path = url.pathname
  // Elysia wraps anything thrown while parsing the body in a ParseError; our
  // body parser throws AppErrors (413, 415, 400) that must keep their meaning.
  if (error instanceof ParseError && error.cause instanceof AppError) error = error.cause
  if (error instanceof AppError) {
    return { status: error.status, body: error.toEnvelope(), ...(error.headers ? { headers: error.headers } : {}) }
  }
  if (error instanceof ElysiaCustomStatusResponse) return fromStatus(error)
  if (error instanceof ValidationError) {
    // A response that breaks its own schema is our bug, not the client's.
    if (error.type === 'response') return { status: 500, body: INTERNAL_ERROR_BODY, unexpected: true }
    return {
      status: 422,
      body: envelope(422, 'validation_failed', 'Request failed validation', validationDetails(error, url)),
    }
  }
  switch (code) {
    case 'PARSE':
      return { status: 400, body: envelope(400, 'malformed_json', 'Request body is not valid JSON') }
    case 'NOT_FOUND':
      return { status: 404, body: envelope(404, 'not_found', `No route for ${method} ${path}`) }
    case 'INVALID_COOKIE_SIGNATURE':
    case 'INVALID_FILE_TYPE':
      return { status: 400, body: envelope(400, 'bad_request', 'Request is malformed') }
  }
  if (mapEngineError(error) instanceof UnstorableTextError) {
    return {
      status: 422,
      body: envelope(422, 'validation_failed', 'Request failed validation', [{ path: 'request', message: 'Text may not contain the character U+0000' }]),
    }
  }
  // The storage layer tells us when the disk, not the request, is the problem.
  if (isStorageUnavailable(error)) {
    return {
      status: 503,
      body: envelope(503, 'service_unavailable', 'Storage is temporarily unavailable; try again'),
      headers: { 'retry-after': '1' },
      unexpected: true,
    }
  }
  return { status: 500, body: INTERNAL_ERROR_BODY, unexpected: true }
}

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { ...headers, 'content-type': 'application/json; charset=utf-8' },
  })
}

/** Where errors are pages, not envelopes: the console (src/console/) and the device page (src/device-page/) render their own, from the same mapping. */
export interface ErrorPages {
  /** A path prefix, e.g. `/console`. */
  prefix: string
  render(status: number, body: ErrorEnvelope, request: Request, headers: Record<string, string>): Response
}

export function errorHandler(logger: Logger, pages: readonly ErrorPages[] = []) {
  return new Elysia({ name: 'arena/errors' }).onError({ as: 'global' }, ({ code, error, request, set }) => {
    const url = new URL(request.url)
    const path = url.pathname
    const mapped = map(code, error, request.method, url)
    const state = requestState(request)
    if (state) state.errorStatus = mapped.status
    if (mapped.unexpected) {
      // A full or failing disk is the operator's to fix, not a bug: logged at
      // error level under its own name, without a stack.
      const storage = mapped.status === 503
      logger.error(storage ? 'storage unavailable' : 'unhandled error', {
        requestId: state?.id,
        method: request.method,
        path,
        status: mapped.status,
        error: describeError(error),
        stack: error instanceof Error && !storage ? error.stack : undefined,
      })
    }
    // Only the request id, the rate limiter's and the error's own headers: whatever the handler
    // set before it threw (a content type, a cache policy) does not apply.
    // Elysia merges set.headers into the returned response, so clear them.
    for (const name of Object.keys(set.headers)) delete set.headers[name]
    const headers: Record<string, string> = { ...state?.headers, ...mapped.headers }
    if (state) headers[REQUEST_ID_HEADER] = state.id
    const page = pages.find((p) => path === p.prefix || path.startsWith(`${p.prefix}/`))
    if (page) return page.render(mapped.status, mapped.body, request, headers)
    return jsonResponse(mapped.status, mapped.body, headers)
  })
}
