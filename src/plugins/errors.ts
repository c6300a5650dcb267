// The one place a failure becomes a response. Whatever was thrown — an
// AppError, an Elysia validation or routing error, a SQLite error, a bug —
// leaves as the envelope of contract §0, and nothing else: no stack, no SQL,
// no echo of the submitted values (they may be passwords or PINs).
import { Elysia, ParseError, ValidationError } from 'elysia'
import { AppError, envelope, type ErrorDetail, type ErrorEnvelope } from '../shared/errors'
import type { Logger } from '../shared/logger'
import { requestState } from './request-context'

interface Mapped {
  status: number
  body: ErrorEnvelope
  headers?: Record<string, string>
  /** Unexpected: log it with its stack. */
  unexpected?: boolean
}

function validationDetails(error: ValidationError): ErrorDetail[] {
  // body | query | params | headers; Elysia reports a failed coercion of a single
  // value (t.Numeric in a query, say) as 'property' without naming it.
  const where = error.type === 'property' ? 'request' : error.type
  const seen = new Set<string>()
  const details: ErrorDetail[] = []
  for (const issue of error.all) {
    const path = `${where}${'path' in issue && issue.path ? issue.path : ''}`
    const message = 'message' in issue && typeof issue.message === 'string' ? issue.message : 'Invalid value'
    const key = `${path}\u0000${message}`
    if (seen.has(key)) continue
    seen.add(key)
    details.push({ path, message })
    if (details.length >= 20) break
  }
  if (details.length === 0) details.push({ path: where, message: 'Invalid value' })
  return details
}

// SQLite tells us when the disk, not the request, is the problem.
const UNAVAILABLE_SQLITE_CODES = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|CANTOPEN|READONLY)/

function map(code: string | number, error: unknown, method: string, path: string): Mapped {
  // Elysia wraps anything thrown while parsing the body in a ParseError; our
  // body parser throws AppErrors (413, 415, 400) that must keep their meaning.
  if (error instanceof ParseError && error.cause instanceof AppError) error = error.cause
  if (error instanceof AppError) {
    return { status: error.status, body: error.toEnvelope(), ...(error.headers ? { headers: error.headers } : {}) }
  }
  switch (code) {
    case 'VALIDATION':
      return {
        status: 422,
        body: envelope(422, 'validation_failed', 'Request failed validation', validationDetails(error as ValidationError)),
      }
    case 'PARSE':
      return { status: 400, body: envelope(400, 'malformed_json', 'Request body is not valid JSON') }
    case 'NOT_FOUND':
      return { status: 404, body: envelope(404, 'not_found', `No route for ${method} ${path}`) }
    case 'INVALID_COOKIE_SIGNATURE':
    case 'INVALID_FILE_TYPE':
      return { status: 400, body: envelope(400, 'bad_request', 'Request is malformed') }
  }
  const sqliteCode = (error as { code?: unknown } | null)?.code
  if (typeof sqliteCode === 'string' && UNAVAILABLE_SQLITE_CODES.test(sqliteCode)) {
    return {
      status: 503,
      body: envelope(503, 'service_unavailable', 'Storage is temporarily unavailable; try again'),
      headers: { 'retry-after': '1' },
      unexpected: true,
    }
  }
  return { status: 500, body: envelope(500, 'internal', 'Internal server error'), unexpected: true }
}

export function errorHandler(logger: Logger) {
  return new Elysia({ name: 'arena/errors' }).onError({ as: 'global' }, ({ code, error, request, set }) => {
    const path = new URL(request.url).pathname
    const mapped = map(code, error, request.method, path)
    const state = requestState(request)
    if (state) state.errorStatus = mapped.status
    if (mapped.unexpected) {
      logger.error('unhandled error', {
        requestId: state?.id,
        method: request.method,
        path,
        status: mapped.status,
        error: error instanceof Error ? error.message : String(error),
        stack: error instanceof Error ? error.stack : undefined,
      })
    }
    const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' }
    for (const [name, value] of Object.entries(set.headers)) {
      if (typeof value === 'string') headers[name] = value
    }
    Object.assign(headers, mapped.headers)
    return new Response(JSON.stringify(mapped.body), { status: mapped.status, headers })
  })
}
