// JSON in (contract §0): bodies are UTF-8 JSON of at most 64 KiB. The size is
// enforced twice: on the declared Content-Length before anything is read, and
// while streaming, for bodies sent without a length. Headers are capped at
// 16 KiB with a 431 envelope (contract §7: the transport's own limit sits
// higher, so arena is the one answering). Nesting is capped too
// (MAX_JSON_DEPTH). Prototype-pollution keys (and toString/valueOf) are dropped
// at parse time so no later merge or print can act on them.
import { Elysia } from 'elysia'
import { AppError } from '../shared/errors'

export const MAX_BODY_BYTES = 64 * 1024

/** A file attached to a dispute (contract §17): its bytes are the body, up to this. */
export const MAX_EVIDENCE_BYTES = 1024 * 1024

/**
 * Routes whose body is a file's raw bytes, not JSON, with their own limit
 * (declared and streamed, as JSON's). The parser hands such a route the bytes
 * as a Uint8Array (null when empty) whatever the content-type: the route
 * checks the type itself.
 */
export const RAW_BODY_ROUTES: readonly { method: string; route: string; path: RegExp; maxBytes: number }[] = [
  { method: 'POST', route: '/api/v1/matches/:id/evidence', path: /^\/api\/v1\/matches\/[^/]+\/evidence$/, maxBytes: MAX_EVIDENCE_BYTES },
]

/** The body limit of a raw-bytes route, or null for every other route (JSON, 64 KiB). */
function rawBodyLimit(request: Request): number | null {
  const url = request.url
  const start = url.indexOf('/', url.indexOf('//') + 2)
  const query = url.indexOf('?', start)
  const path = url.slice(start, query === -1 ? undefined : query)
  for (const route of RAW_BODY_ROUTES) if (route.method === request.method && route.path.test(path)) return route.maxBytes
  return null
}

/** Request headers (names, values and their separators) above this answer 431 with the envelope. */
export const MAX_HEADER_BYTES = 16 * 1024
/**
 * What the HTTP layer itself accepts: Bun's --max-http-header-size, set to this
 * in package.json's `start` and `build` scripts (for the binary, through
 * --compile-exec-argv). Bun's default equals MAX_HEADER_BYTES and answers a
 * bare 431 without calling arena; raised, arena answers 16-64 KiB itself.
 * Beyond this, Bun's bare 431 (no body, no x-request-id) is all there can be.
 */
export const TRANSPORT_HEADER_BYTES = 64 * 1024

/**
 * Arrays and objects nested deeper than this are refused (422) before the body
 * is parsed. What handles a body after us is not linear in its depth: Elysia's
 * validation error pretty-prints the whole value, two more spaces per level on
 * every line, so 30 000 levels of [ in a 60 KiB body took seconds of CPU and
 * ended in "Out of memory" (a 500). No request of this API nests beyond a few
 * levels; free-form fields (a claim's score, an event's details) stay far below.
 */
export const MAX_JSON_DEPTH = 64

const METHODS_WITHOUT_BODY = new Set(['GET', 'HEAD', 'OPTIONS'])
// Besides the prototype-pollution keys: an own toString or valueOf that is not
// a function makes the object unprintable (`${value}` throws "No default
// value"), and Elysia prints the offending value into its validation message,
// so {"pin":{"toString":[]}} was a 500. No field of this API is named so.
const POLLUTING_KEYS = new Set(['__proto__', 'constructor', 'prototype', 'toString', 'valueOf'])
const MAY_POLLUTE = /__proto__|constructor|prototype|toString|valueOf|\\u/

/**
 * The bytes each request's body arrived as, before parsing: a signed request
 * (POST /game-servers/{gameId}/results, contract §17) is verified over the
 * exact bytes sent, which no re-serialization of the parsed value reproduces.
 * Kept for the request's lifetime only (a WeakMap keyed by the Request).
 */
const rawBodies = new WeakMap<Request, Uint8Array>()

/** The body bytes of `request` as read by this plugin for a JSON route (empty when it had none); undefined when no body was read (GET, HEAD, OPTIONS, a raw-bytes route). */
export function rawBody(request: Request): Uint8Array | undefined {
  return rawBodies.get(request)
}

function tooLarge(maxBytes = MAX_BODY_BYTES): AppError {
  return new AppError('payload_too_large', `Request body exceeds ${maxBytes} bytes`)
}

function headerBytes(headers: Headers): number {
  let total = 0
  // name + ": " + value + CRLF, as on the wire.
  headers.forEach((value, name) => {
    total += name.length + value.length + 4
  })
  return total
}

function isJsonContentType(contentType: string): boolean {
  const mediaType = contentType.split(';', 1)[0]!.trim().toLowerCase()
  return mediaType === 'application/json' || (mediaType.startsWith('application/') && mediaType.endsWith('+json'))
}

async function readCapped(request: Request, maxBytes = MAX_BODY_BYTES): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0)
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let total = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    total += value.byteLength
    if (total > maxBytes) {
      await reader.cancel().catch(() => {})
      throw tooLarge(maxBytes)
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks)
}

function dropPollutingKeys(_key: string, value: unknown): unknown {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    for (const key of Object.keys(value)) {
      if (POLLUTING_KEYS.has(key)) delete (value as Record<string, unknown>)[key]
    }
  }
  return value
}

/** Whether `text` opens more than MAX_JSON_DEPTH arrays or objects at once (strings skipped). */
function nestedTooDeep(text: string): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++ // a backslash: skip the escaped character
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_JSON_DEPTH) return true
    } else if (c === 0x5d || c === 0x7d) depth--
  }
  return false
}

export function parseJsonBody(text: string): unknown {
  // Shorter texts cannot nest that deep: skip the scan for them.
  if (text.length > MAX_JSON_DEPTH && nestedTooDeep(text)) {
    throw new AppError('validation_failed', 'Request failed validation', {
      details: [{ path: 'body', message: `Nested deeper than ${MAX_JSON_DEPTH} levels` }],
    })
  }
  try {
    // The reviver costs time; only pay it when a dangerous key could be present,
    // spelled out or hidden behind a \u escape.
    return MAY_POLLUTE.test(text) ? JSON.parse(text, dropPollutingKeys) : JSON.parse(text)
  } catch {
    throw new AppError('malformed_json', 'Request body is not valid JSON')
  }
}

/**
 * The console's forms (src/console/) and the device page's (src/device-page/)
 * post application/x-www-form-urlencoded, the one body a browser sends
 * without script; only there, and read with the
 * same cap as JSON. Fields become strings of a plain object (the last of a
 * repeated name wins; keys that could pollute a prototype are dropped).
 */
function isConsoleForm(request: Request, contentType: string): boolean {
  const mediaType = contentType.split(';', 1)[0]!.trim().toLowerCase()
  if (mediaType !== 'application/x-www-form-urlencoded') return false
  const url = request.url
  const path = url.slice(url.indexOf('/', url.indexOf('//') + 2))
  return path.startsWith('/console/') || path.startsWith('/device/')
}

function parseForm(bytes: Uint8Array): Record<string, string> {
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    throw new AppError('bad_request', 'Form body is not valid UTF-8')
  }
  const fields: Record<string, string> = {}
  for (const [name, value] of new URLSearchParams(text)) {
    if (!POLLUTING_KEYS.has(name)) fields[name] = value
  }
  return fields
}

export const jsonBody = new Elysia({ name: 'arena/json-body' })
  .onRequest(({ request }) => {
    if (headerBytes(request.headers) > MAX_HEADER_BYTES) {
      throw new AppError('request_header_fields_too_large', `Request headers exceed ${MAX_HEADER_BYTES} bytes`)
    }
    // Refused from the declared length alone, before a byte of the body is read.
    const declared = request.headers.get('content-length')
    const maxBytes = rawBodyLimit(request) ?? MAX_BODY_BYTES
    if (declared !== null && Number(declared) > maxBytes) throw tooLarge(maxBytes)
  })
  .onParse({ as: 'global' }, async ({ request, contentType }) => {
    // null, never undefined: on undefined Elysia falls back to its own parsers
    // (text, arrayBuffer, formData), which read a body of any size.
    if (METHODS_WITHOUT_BODY.has(request.method)) return null
    const rawLimit = rawBodyLimit(request)
    if (rawLimit !== null) {
      const raw = await readCapped(request, rawLimit)
      return raw.byteLength === 0 ? null : raw
    }
    const bytes = await readCapped(request)
    rawBodies.set(request, bytes)
    // null (not undefined) tells Elysia the body was handled: an empty body is
    // "no body", which a route that requires one reports as a 422.
    if (bytes.byteLength === 0) return null
    if (isConsoleForm(request, contentType ?? '')) return parseForm(bytes)
    if (!isJsonContentType(contentType ?? '')) {
      throw new AppError('unsupported_media_type', 'Request body must be application/json')
    }
    let text: string
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
    } catch {
      throw new AppError('malformed_json', 'Request body is not valid UTF-8')
    }
    return parseJsonBody(text)
  })
