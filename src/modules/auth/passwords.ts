// Passwords and PINs are hashed with argon2id at no less than the OWASP
// minimum (19 MiB of memory, 2 passes). Bun.password runs the work off the
// event loop. Every hash and verify goes through a HashGate (hash-gate.ts),
// which bounds how many run at once and how many wait, and refuses the rest
// with 503 + Retry-After: pass the services' gate, or an admitted ticket;
// without one, the process's default gate applies, so no path is ungated.
import { AppError } from '../../shared/errors'
import { defaultHashGate, type HashCost, type HashRunner } from './hash-gate'

export const PASSWORD_HASH_PARAMS = { algorithm: 'argon2id', memoryCost: 19_456, timeCost: 2 } as const

/**
 * A new password (register, change, reset) is 8 to 128 characters, counted
 * in code points: the schema's length counts UTF-16 units, so four emoji
 * would pass it as eight. `path` names the field in the 422.
 */
export function assertPasswordLength(password: string, path: string): void {
  const length = [...password].length
  if (length < PASSWORD_LENGTH.min || length > PASSWORD_LENGTH.max) {
    throw new AppError('validation_failed', 'Request failed validation', { details: [{ path, message: `Expected ${PASSWORD_LENGTH.min} to ${PASSWORD_LENGTH.max} characters` }] })
  }
}

/** The rule of every new password, in code points (what assertPasswordLength holds; pages that explain it quote these). */
export const PASSWORD_LENGTH = { min: 8, max: 128 } as const

/** The parameters of a new hash made through `via`: PASSWORD_HASH_PARAMS unless its gate says otherwise (tests only). */
function paramsOf(via: HashRunner): { algorithm: 'argon2id' } & HashCost {
  return via.hashCost === undefined ? PASSWORD_HASH_PARAMS : { algorithm: 'argon2id', ...via.hashCost }
}

export function hashPassword(password: string, via: HashRunner = defaultHashGate()): Promise<string> {
  return via.run(() => Bun.password.hash(password, paramsOf(via)))
}

export function verifyPassword(password: string, hash: string, via: HashRunner = defaultHashGate()): Promise<boolean> {
  return via.run(() => Bun.password.verify(password, hash))
}

/** One per cost (the process's is PASSWORD_HASH_PARAMS'; a test gate's own is as cheap as its hashes). */
const dummyHashes = new Map<string, Promise<string>>()

/** Made once per cost, inside the first caller's slot; a failure is not cached. */
function theDummyHash(via: HashRunner): Promise<string> {
  const params = paramsOf(via)
  const key = `${params.memoryCost}/${params.timeCost}`
  let dummy = dummyHashes.get(key)
  if (dummy === undefined) {
    dummy = Bun.password.hash(`dummy:${crypto.randomUUID()}`, params).catch((error: unknown) => {
      dummyHashes.delete(key)
      throw error
    })
    dummyHashes.set(key, dummy)
  }
  return dummy
}

/**
 * Burns the same work as checking a real password, for identifiers that
 * match no account: an unknown user and a wrong password must take similar
 * time, or timing tells an attacker which accounts exist. It goes through the
 * same gate, so being queued or refused says nothing about the account either.
 */
export function verifyAgainstDummy(password: string, via: HashRunner = defaultHashGate()): Promise<false> {
  return via.run(async () => {
    await Bun.password.verify(password, await theDummyHash(via))
    return false as const
  })
}
