// Passwords (and later PINs) are hashed with argon2id at no less than the
// OWASP minimum (19 MiB of memory, 2 passes). Bun.password runs the work off
// the event loop.

export const PASSWORD_HASH_PARAMS = { algorithm: 'argon2id', memoryCost: 19_456, timeCost: 2 } as const

export function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, PASSWORD_HASH_PARAMS)
}

export function verifyPassword(password: string, hash: string): Promise<boolean> {
  return Bun.password.verify(password, hash)
}

let dummyHash: Promise<string> | undefined

/**
 * Burns the same work as checking a real password, for identifiers that
 * match no account: an unknown user and a wrong password must take similar
 * time, or timing tells an attacker which accounts exist.
 */
export async function verifyAgainstDummy(password: string): Promise<false> {
  dummyHash ??= hashPassword(`dummy:${crypto.randomUUID()}`)
  await verifyPassword(password, await dummyHash)
  return false
}
