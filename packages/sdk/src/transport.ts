// One HTTP call: URL building, JSON, timeouts and the mapping of failures to
// errors. It never retries; the callers decide what may be sent twice.
import { ApiError, NetworkError } from './errors.js'
import type { FetchLike } from './types.js'

export interface TransportOptions {
  baseUrl: string
  fetch?: FetchLike
  /** Per request, unless the call says otherwise. Default 30 s. */
  timeoutMs?: number
  /** Headers sent on every request (a client version, say). */
  headers?: Record<string, string>
}

export interface Call {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  path: string
  query?: Record<string, string | undefined>
  body?: unknown
  /** A body that is not JSON: a file's bytes and their type (an evidence upload). Not with `body`. */
  raw?: { bytes: Uint8Array; contentType: string }
  headers?: Record<string, string>
  signal?: AbortSignal
  /** Added to the client's timeout (a long poll's wait). */
  extraTimeoutMs?: number
}

export class Transport {
  readonly baseUrl: string
  private readonly fetchImpl: FetchLike
  private readonly timeoutMs: number
  private readonly headers: Record<string, string>

  constructor(options: TransportOptions) {
    this.baseUrl = absoluteBase(options.baseUrl)
    // Looked up per call rather than captured, so a page that replaces
    // globalThis.fetch later (a test, an interceptor) is honoured.
    this.fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init))
    this.timeoutMs = options.timeoutMs ?? 30_000
    this.headers = options.headers ?? {}
  }

  /** Sends one request. Resolves with any HTTP answer; rejects with NetworkError when there is none. */
  async send(call: Call): Promise<Response> {
    const url = new URL(this.baseUrl + call.path)
    for (const [key, value] of Object.entries(call.query ?? {})) if (value !== undefined) url.searchParams.set(key, value)
    const headers: Record<string, string> = { accept: 'application/json', ...this.headers, ...call.headers }
    if (call.body !== undefined) headers['content-type'] = 'application/json'
    if (call.raw !== undefined) headers['content-type'] = call.raw.contentType
    const { signal, dispose } = deadline(this.timeoutMs + (call.extraTimeoutMs ?? 0), call.signal)
    try {
      const response = await this.fetchImpl(url.toString(), {
        method: call.method,
        headers,
        ...(call.body !== undefined ? { body: JSON.stringify(call.body) } : call.raw !== undefined ? { body: call.raw.bytes as Uint8Array<ArrayBuffer> } : {}),
        signal,
      })
      // The body is read under the same deadline: headers followed by a stall
      // must not hang the caller (a verify must end in an answer or OutcomeUnknown).
      const body = await response.arrayBuffer()
      return new Response(body.byteLength === 0 || NULL_BODY.has(response.status) ? null : body, { status: response.status, statusText: response.statusText, headers: response.headers })
    } catch (error) {
      const why = signal.aborted ? (call.signal?.aborted ? 'aborted' : 'timed out') : error instanceof Error ? error.message : String(error)
      throw new NetworkError(`${call.method} ${call.path}: ${why}`, { cause: error })
    } finally {
      dispose()
    }
  }
}

const NULL_BODY = new Set([101, 204, 205, 304])

/**
 * The base URL without a trailing slash. A relative one (a same-origin browser
 * app passing "/" or "/arena") is resolved against the page's location.
 */
function absoluteBase(baseUrl: string): string {
  const location = (globalThis as { location?: { href?: string } }).location?.href
  let url: URL
  try {
    url = location ? new URL(baseUrl, location) : new URL(baseUrl)
  } catch {
    throw new TypeError(`baseUrl "${baseUrl}" is not an absolute http(s) URL`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`baseUrl "${baseUrl}" is not an http(s) URL`)
  return url.toString().replace(/\/+$/, '')
}

/** The JSON body of a 2xx answer, or the ApiError of any other. */
export async function readJson<T>(response: Response): Promise<T> {
  if (!response.ok) throw await ApiError.from(response)
  try {
    return (await response.json()) as T
  } catch {
    throw new ApiError({ status: response.status, code: 'invalid_response', message: `The server answered ${response.status} with a body that is not JSON` })
  }
}

/** An AbortSignal that fires after `ms` or when `outer` fires (AbortSignal.any is not in every runtime the SDK supports). */
function deadline(ms: number, outer?: AbortSignal): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(new Error('timeout')), ms)
  const onAbort = () => controller.abort(outer?.reason)
  if (outer?.aborted) controller.abort(outer.reason)
  else outer?.addEventListener('abort', onAbort, { once: true })
  return {
    signal: controller.signal,
    dispose() {
      clearTimeout(timer)
      outer?.removeEventListener('abort', onAbort)
    },
  }
}
