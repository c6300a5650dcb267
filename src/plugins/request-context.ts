// Per-request bookkeeping shared by the cross-cutting plugins: the request id
// (echoed or generated, sent back on every response), the start time, and the
// final status. One access-log line per request is written after the response.
import { Elysia } from 'elysia'
import { newId } from '../shared/ids'
import type { Logger } from '../shared/logger'

export const REQUEST_ID_HEADER = 'x-request-id'

// An incoming id is echoed only if it is short and plain, so a client cannot
// inject control characters or megabytes into our headers and logs.
const VALID_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

export interface RequestState {
  id: string
  startedAt: number
  /** Set by the error handler: Elysia's `set.status` is not updated for unmatched routes. */
  errorStatus?: number
  /** Headers every answer to this request carries, an error's too (the rate limiter's). */
  headers?: Record<string, string>
}

const states = new WeakMap<Request, RequestState>()

export function requestState(request: Request): RequestState | undefined {
  return states.get(request)
}

export function requestContext(logger: Logger, observe?: (route: string, method: string, status: number, seconds: number) => void) {
  return new Elysia({ name: 'arena/request-context' })
    .onRequest(({ request, set }) => {
      const incoming = request.headers.get(REQUEST_ID_HEADER)
      const id = incoming !== null && VALID_REQUEST_ID.test(incoming) ? incoming : newId('request')
      states.set(request, { id, startedAt: performance.now() })
      set.headers[REQUEST_ID_HEADER] = id
    })
    .onAfterResponse({ as: 'global' }, ({ request, route, set, responseValue }) => {
      const state = states.get(request)
      if (!state) return
      // Precedence: the error handler's status, then a Response the handler
      // returned itself, then the status Elysia set.
      const status =
        state.errorStatus ??
        (responseValue instanceof Response ? responseValue.status : typeof set.status === 'number' ? set.status : 200)
      const elapsedMs = performance.now() - state.startedAt
      observe?.(route, request.method, status, elapsedMs / 1000)
      logger.info('request', {
        requestId: state.id,
        method: request.method,
        route: route || null,
        // Path only: query strings may carry cursors or other values we do not log.
        path: pathOf(request.url),
        status,
        durationMs: Math.round(elapsedMs * 100) / 100,
      })
    })
}

function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  if (start === -1) return '/'
  const query = url.indexOf('?', start)
  return query === -1 ? url.slice(start) : url.slice(start, query)
}
