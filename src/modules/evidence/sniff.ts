// Which of the evidence types a file's bytes are (contract §17), from the
// bytes alone: a content-type is the client's word, and an operator opens
// these files. Pure: no I/O.
import { parseJsonBody } from '../../plugins/json-body'
import { AppError } from '../../shared/errors'
import type { EvidenceType } from './store'

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
const JPEG = [0xff, 0xd8, 0xff]
const EBML = [0x1a, 0x45, 0xdf, 0xa3]
const DOC_TYPE_ID = 0x4282

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return bytes.byteLength >= prefix.length && prefix.every((b, i) => bytes[i] === b)
}

/** An EBML variable-length integer at `at`: its length in bytes and its value (`keepMarker`: an element id keeps its length bits). */
function vint(bytes: Uint8Array, at: number, keepMarker: boolean): { length: number; value: number } | null {
  const first = bytes[at]
  if (first === undefined || first === 0) return null
  const length = Math.clz32(first) - 23 // leading zeros within the byte, plus one
  if (length > 8 || at + length > bytes.byteLength) return null
  let value = keepMarker ? first : first & (0xff >> length)
  for (let i = 1; i < length; i++) value = value * 256 + bytes[at + i]!
  return { length, value }
}

/** A WebM file: an EBML header whose DocType element says "webm". */
function isWebm(bytes: Uint8Array): boolean {
  if (!startsWith(bytes, EBML)) return false
  const headerSize = vint(bytes, EBML.length, false)
  if (!headerSize) return false
  let at = EBML.length + headerSize.length
  const end = Math.min(at + headerSize.value, bytes.byteLength)
  while (at < end) {
    const id = vint(bytes, at, true)
    if (!id) return false
    const size = vint(bytes, at + id.length, false)
    if (!size) return false
    const data = at + id.length + size.length
    if (id.value === DOC_TYPE_ID) {
      if (data + size.value > end) return false
      return new TextDecoder().decode(bytes.subarray(data, data + size.value)).replace(/\0+$/, '') === 'webm'
    }
    at = data + size.value
  }
  return false
}

function utf8(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes)
  } catch {
    return null
  }
}

/** Whether the bytes are a file of `type`. */
export function bytesAre(type: EvidenceType, bytes: Uint8Array): boolean {
  switch (type) {
    case 'image/png':
      return startsWith(bytes, PNG)
    case 'image/jpeg':
      return startsWith(bytes, JPEG)
    case 'video/webm':
      return isWebm(bytes)
    case 'text/plain': {
      const text = utf8(bytes)
      return text !== null && !text.includes('\0')
    }
    case 'application/json': {
      const text = utf8(bytes)
      if (text === null) return false
      try {
        parseJsonBody(text)
        return true
      } catch {
        return false
      }
    }
  }
}

/**
 * The evidence type a content-type names: its media type, one of the five,
 * with no charset but UTF-8's. Anything else is 415 unsupported_media_type.
 */
export function evidenceTypeOf(contentType: string | null): EvidenceType {
  const [media = '', ...parameters] = (contentType ?? '').split(';')
  const type = media.trim().toLowerCase()
  const charset = parameters.map((p) => p.trim().toLowerCase()).find((p) => p.startsWith('charset='))
  const utf8Charset = charset === undefined || ['charset=utf-8', 'charset="utf-8"'].includes(charset)
  if (utf8Charset && (type === 'image/png' || type === 'image/jpeg' || type === 'video/webm' || type === 'text/plain' || type === 'application/json')) return type
  throw new AppError('unsupported_media_type', 'Evidence must be image/png, image/jpeg, video/webm, text/plain (UTF-8) or application/json (UTF-8)')
}
