// Secrets are stored only as hashes and compared in constant time.
import { timingSafeEqual } from 'node:crypto'

/** SHA-256 of a high-entropy secret (tokens, keys), hex. Not for passwords or PINs: those use Bun.password. */
export function sha256Hex(value: string): string {
  return new Bun.CryptoHasher('sha256').update(value).digest('hex')
}

/** Constant-time equality of two strings. Lengths leak, contents do not. */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8')
  const right = Buffer.from(b, 'utf8')
  if (left.length !== right.length) {
    // Still do the work of one comparison so a length mismatch is not a fast path.
    timingSafeEqual(left, left)
    return false
  }
  return timingSafeEqual(left, right)
}

/** `bytes` random bytes as base64url: 32 bytes = 256 bits, the floor for tokens here. */
export function randomToken(bytes = 32): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString('base64url')
}
