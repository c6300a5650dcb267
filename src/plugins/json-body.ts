// JSON in (contract §0): bodies are UTF-8 JSON of at most 64 KiB. The size is
// enforced twice: on the declared Content-Length before anything is read, and
// while streaming, for bodies sent without a length. Prototype-pollution keys
// are dropped at parse time so no later merge can act on them.
import { Elysia } from 'elysia'
import { AppError } from '../shared/errors'

export const MAX_BODY_BYTES = 64 * 1024

const METHODS_WITHOUT_BODY = new Set(['GET', 'HEAD', 'OPTIONS'])
const POLLUTING_KEYS = new Set(['__proto__', 'constructor', 'prototype'])
const MAY_POLLUTE = /__proto__|constructor|prototype|\\u/

function tooLarge(): AppError {
  return new AppError('payload_too_large', `Request body exceeds ${MAX_BODY_BYTES} bytes`)
}

function isJsonContentType(contentType: string): boolean {
  const mediaType = contentType.split(';', 1)[0]!.trim().toLowerCase()
  return mediaType === 'application/json' || (mediaType.startsWith('application/') && mediaType.endsWith('+json'))
}

async function readCapped(request: Request): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0)
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let total = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    total += value.byteLength
    if (total > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => {})
      throw tooLarge()
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

export function parseJsonBody(text: string): unknown {
  try {
    // The reviver costs time; only pay it when a dangerous key could be present,
    // spelled out or hidden behind a \u escape.
    return MAY_POLLUTE.test(text) ? JSON.parse(text, dropPollutingKeys) : JSON.parse(text)
  } catch {
    throw new AppError('malformed_json', 'Request body is not valid JSON')
  }
}

export const jsonBody = new Elysia({ name: 'arena/json-body' })
  .onRequest(({ request }) => {
    const declared = request.headers.get('content-length')
    if (declared !== null && Number(declared) > MAX_BODY_BYTES) throw tooLarge()
  })
  .onParse({ as: 'global' }, async ({ request, contentType }) => {
    if (METHODS_WITHOUT_BODY.has(request.method)) return
    const bytes = await readCapped(request)
    // null (not undefined) tells Elysia the body was handled: an empty body is
    // "no body", which a route that requires one reports as a 422.
    if (bytes.byteLength === 0) return null
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
