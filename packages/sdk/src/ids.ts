// Random values the client makes. Idempotency keys: UUID v4 from
// crypto.getRandomValues, which every runtime the SDK supports has (crypto.randomUUID needs a secure context in browsers).
export function newIdempotencyKey(): string {
  const bytes = new Uint8Array(16)
  globalThis.crypto.getRandomValues(bytes)
  bytes[6] = (bytes[6]! & 0x0f) | 0x40
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** 32 random bytes (256 bits), base64url without padding (43 characters). */
function random32(): string {
  const bytes = new Uint8Array(32)
  globalThis.crypto.getRandomValues(bytes)
  // btoa is in every runtime the SDK supports (Node 16+, Bun, browsers); Buffer is not.
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

/** A guest's device secret (a credential): 32 random bytes, base64url (43 characters). */
export function newDeviceSecret(): string {
  return random32()
}

/** A device token (the `x-arena-device` header; a signal, not a credential): 32 random bytes, base64url (43 characters). */
export function newDeviceToken(): string {
  return random32()
}
