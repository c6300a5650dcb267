// One-time codes mailed to a user (contract §8): ten characters of Crockford
// base32 (50 bits), shown as five and five characters (e.g. `7KQ2M-R9W4T`), typed back in any case, with or
// without the dash or spaces, O for 0 and I or L for 1 forgiven. Only a hash
// is stored, bound to the user and the purpose, so a code for one account or
// one purpose is worth nothing for another.
import { constantTimeEqual, sha256Hex } from '../../shared/crypto'
import type { AccountCodePurpose } from './store'

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
export const CODE_LENGTH = 10

/** A new code, as mailed: five characters, a dash, five more (e.g. `7KQ2M-R9W4T`). */
export function newAccountCode(): string {
  // 32 symbols divide 256, so `byte & 31` is uniform.
  const chars = [...crypto.getRandomValues(new Uint8Array(CODE_LENGTH))].map((byte) => ALPHABET[byte & 31]!)
  return `${chars.slice(0, 5).join('')}-${chars.slice(5).join('')}`
}

/** The code as the user typed it, in canonical form; null when it cannot be one of ours. */
export function normalizeCode(input: string): string | null {
  const code = input
    .toUpperCase()
    .replace(/[\s-]/g, '')
    .replace(/O/g, '0')
    .replace(/[IL]/g, '1')
  return code.length === CODE_LENGTH && [...code].every((c) => ALPHABET.includes(c)) ? code : null
}

export function hashAccountCode(userId: string, purpose: AccountCodePurpose, code: string): string {
  return sha256Hex(`${purpose}:${userId}:${normalizeCode(code) ?? ''}`)
}

/** Whether `input` is the code whose hash is `codeHash` (constant time). */
export function codeMatches(codeHash: string, userId: string, purpose: AccountCodePurpose, input: string): boolean {
  return constantTimeEqual(hashAccountCode(userId, purpose, input), codeHash)
}
