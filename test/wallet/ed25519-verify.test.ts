// Invariant: verifyEd25519 (the runtime's native verifier behind arena's own
// encoding checks) accepts no signature that ed25519.verify(…, { zip215:
// false }) refuses: not a non-canonical S, not a non-canonical or small-order
// public key, not a tampered signature, message or key. It accepts every
// honest signature, and refuses the edge cases the cofactored equation lets
// through (a small-order R, a small-order residue).
import { describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { ed25519 } from '@noble/curves/ed25519.js'
import { bytesToNumberLE, concatBytes, hexToBytes, numberToBytesLE } from '@noble/curves/utils.js'
import { verifyEd25519 } from '../../src/modules/wallet/frost'

const Point = ed25519.Point
const L = Point.Fn.ORDER
const P = Point.Fp.ORDER
const strict = (sig: Uint8Array, msg: Uint8Array, key: Uint8Array) => ed25519.verify(sig, msg, key, { zip215: false })

/** Every decision of ours must be one noble's strict verify would take too, or stricter. */
function expectNoLooser(sig: Uint8Array, msg: Uint8Array, key: Uint8Array): boolean {
  const ours = verifyEd25519(sig, msg, key)
  if (ours) expect(strict(sig, msg, key)).toBe(true)
  return ours
}

/** A point of order 8 (RFC 8032 test folklore: the canonical encoding of one of the two with y ≠ ±1, 0). */
const T8 = Point.fromBytes(hexToBytes('c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a'))
/** The eight points of small order: [i]T8. */
const SMALL_ORDER = Array.from({ length: 8 }, (_, i) => (i === 0 ? Point.ZERO : Array.from({ length: i - 1 }).reduce<typeof T8>((p) => p.add(T8), T8)))

/** k = H(R || A || M) mod L, as RFC 8032 defines it over the encodings given. */
function challenge(R: Uint8Array, A: Uint8Array, msg: Uint8Array): bigint {
  return bytesToNumberLE(createHash('sha512').update(concatBytes(R, A, msg)).digest()) % L
}

/** A signature (R, S) over `msg` under the key a·B, with R chosen by the caller: S = r + k·a where R's discrete log is r (0 for small order). */
function forge(a: bigint, A: Uint8Array, R: Uint8Array, r: bigint, msg: Uint8Array): Uint8Array {
  const S = (r + challenge(R, A, msg) * a) % L
  return concatBytes(R, numberToBytesLE(S, 32))
}

const msg = new TextEncoder().encode('arena-withdrawal-v1\nwithdrawal_1\nUSDC\n10000\naddr')

describe('verifyEd25519', () => {
  test('accepts honest signatures and refuses every single-bit change of signature, message or key', () => {
    for (let i = 0; i < 20; i++) {
      const secret = ed25519.utils.randomSecretKey()
      const key = ed25519.getPublicKey(secret)
      const message = concatBytes(msg, Uint8Array.of(i))
      const sig = ed25519.sign(message, secret)
      expect(verifyEd25519(sig, message, key)).toBe(true)
      for (let bit = 0; bit < 512; bit += 7) {
        const bad = Uint8Array.from(sig)
        bad[bit >> 3]! ^= 1 << (bit & 7)
        expect(expectNoLooser(bad, message, key)).toBe(false)
      }
      for (let bit = 0; bit < 256; bit += 5) {
        const badKey = Uint8Array.from(key)
        badKey[bit >> 3]! ^= 1 << (bit & 7)
        expect(expectNoLooser(sig, message, badKey)).toBe(false)
      }
      const badMessage = Uint8Array.from(message)
      badMessage[3]! ^= 1
      expect(expectNoLooser(sig, badMessage, key)).toBe(false)
    }
  })

  test('refuses a non-canonical S (S + L), which the equation alone would accept', () => {
    const secret = ed25519.utils.randomSecretKey()
    const key = ed25519.getPublicKey(secret)
    const sig = ed25519.sign(msg, secret)
    const S = bytesToNumberLE(sig.subarray(32))
    const malleated = concatBytes(sig.subarray(0, 32), numberToBytesLE(S + L, 32))
    expect(strict(malleated, msg, key)).toBe(false)
    expect(verifyEd25519(malleated, msg, key)).toBe(false)
    expect(verifyEd25519(sig, msg, key)).toBe(true)
  })

  test('refuses a small-order public key, for which anyone can make signatures that satisfy the equation', () => {
    for (const A of SMALL_ORDER) {
      const key = A.toBytes()
      // R = [r]B, S = r: [S]B = R + [k]A holds up to A's small order, exactly when [k]A is the identity.
      const r = 12345678901234567890n
      const sig = concatBytes(Point.BASE.multiply(r).toBytes(), numberToBytesLE(r, 32))
      expect(strict(sig, msg, key)).toBe(false)
      expect(verifyEd25519(sig, msg, key)).toBe(false)
    }
    // The identity key: every (R = [s]B, S = s) satisfies the equation for every message, cofactored or not.
    const identity = Point.ZERO.toBytes()
    const s = 987654321n
    const sig = concatBytes(Point.BASE.multiply(s).toBytes(), numberToBytesLE(s, 32))
    expect(ed25519.verify(sig, msg, identity, { zip215: true })).toBe(true)
    expect(verifyEd25519(sig, msg, identity)).toBe(false)
  })

  test('refuses non-canonical encodings (y ≥ p) of the key and of R', () => {
    // y = p + 1 is the identity written non-canonically; y = p + 0 the order-4 point (0, y = 0)... written as p.
    for (const y of [P + 1n, P]) {
      const key = numberToBytesLE(y, 32)
      const s = 55555n
      const sig = concatBytes(Point.BASE.multiply(s).toBytes(), numberToBytesLE(s, 32))
      expect(strict(sig, msg, key)).toBe(false)
      expect(verifyEd25519(sig, msg, key)).toBe(false)
    }
    const a = 424242424242n
    const A = Point.BASE.multiply(a).toBytes()
    const nonCanonicalIdentityR = numberToBytesLE(P + 1n, 32)
    const sig = forge(a, A, nonCanonicalIdentityR, 0n, msg)
    expect(strict(sig, msg, A)).toBe(false)
    expect(verifyEd25519(sig, msg, A)).toBe(false)
  })

  test('refuses a small-order R and a small-order residue, which only the cofactored equation accepts', () => {
    const a = 31337313373133731337n
    const A = Point.BASE.multiply(a).toBytes()
    for (const T of SMALL_ORDER) {
      // R of small order with S = k·a: [S]B - [k]A = 0 = R up to the cofactor.
      const sig = forge(a, A, T.toBytes(), 0n, msg)
      expect(verifyEd25519(sig, msg, A)).toBe(false)
      if (!T.equals(Point.ZERO)) expect(strict(sig, msg, A)).toBe(true)
    }
    // R = [r]B + T with S = r + k·a: the equation is off by T, which the cofactor clears.
    const r = 777777777777n
    const residue = Point.BASE.multiply(r).add(T8).toBytes()
    const sig = forge(a, A, residue, r, msg)
    expect(strict(sig, msg, A)).toBe(true)
    expect(verifyEd25519(sig, msg, A)).toBe(false)
    // The same construction without the small-order part is an ordinary signature, which both accept.
    const honest = forge(a, A, Point.BASE.multiply(r).toBytes(), r, msg)
    expect(strict(honest, msg, A)).toBe(true)
    expect(verifyEd25519(honest, msg, A)).toBe(true)
  })

  test('refuses malformed input without throwing', () => {
    const secret = ed25519.utils.randomSecretKey()
    const key = ed25519.getPublicKey(secret)
    const sig = ed25519.sign(msg, secret)
    expect(verifyEd25519(sig.subarray(0, 63), msg, key)).toBe(false)
    expect(verifyEd25519(concatBytes(sig, Uint8Array.of(0)), msg, key)).toBe(false)
    expect(verifyEd25519(sig, msg, key.subarray(0, 31))).toBe(false)
    expect(verifyEd25519(new Uint8Array(64), msg, key)).toBe(false)
    expect(verifyEd25519(sig, msg, new Uint8Array(32).fill(0xff))).toBe(false)
  })
})
