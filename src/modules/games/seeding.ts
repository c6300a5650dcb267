// Seeding a tournament that players registered for (contract §9, §15). Pure:
// the same players and the same stored seed give the same order, on any
// machine, so anyone holding the seed (shown on the tournament once it
// started) can check the bracket; a `rating` seeding orders by the display
// ratings the start read (src/modules/ratings/seeding.ts).
import { createHash, randomBytes } from 'node:crypto'

export type SeedingMethod = 'registration' | 'random' | 'rating'

/** A fresh random seed for a `random` seeding: 128 bits as 32 hex digits. */
export function newSeedingSeed(): string {
  return randomBytes(16).toString('hex')
}

/**
 * Which of 0..bound-1 step `step` of the shuffle picks: the first 48 bits of
 * SHA-256(`${seed}:${step}`), scaled. (The scaling's bias is below 2^-38 for
 * up to 1024 players.)
 */
function pick(seed: string, step: number, bound: number): number {
  const digest = createHash('sha256').update(`${seed}:${step}`).digest()
  return Math.floor((digest.readUIntBE(0, 6) / 2 ** 48) * bound)
}

/**
 * The players in seed order (top seed first). `registration`: the order they
 * registered in, as given. `random`: a Fisher–Yates shuffle of that order,
 * step i (from the last index down) swapping index i with pick(seed, i, i + 1).
 * `rating`: by `displayOf` (each player's display rating in the game at the
 * start), highest first, ties in registration order.
 */
export function seedOrder<T>(inRegistrationOrder: readonly T[], method: SeedingMethod, seed: string | null, displayOf?: (player: T) => number): T[] {
  const order = [...inRegistrationOrder]
  if (method === 'registration') return order
  if (method === 'rating') {
    if (!displayOf) throw new Error('a rating seeding needs the players\' display ratings')
    // Array.prototype.sort is stable: equal displays keep the registration order.
    return order.sort((a, b) => displayOf(b) - displayOf(a))
  }
  if (seed === null) throw new Error('a random seeding needs its stored seed')
  for (let i = order.length - 1; i > 0; i--) {
    const j = pick(seed, i, i + 1)
    ;[order[i], order[j]] = [order[j]!, order[i]!]
  }
  return order
}
