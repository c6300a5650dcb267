// Which PINs are too easy to guess. Pure: no I/O.

const KNOWN_COMMON = new Set([
  '1212', '1004', '2000', '2580', '0852', '6969', '1122', '1313', '4321', '1010', '2001', '1984', '2020', '5683',
  '121212', '123123', '112233', '696969', '159753', '147258', '789456', '520520', '131313', '654321',
])

/** Refuses repeated digits (0000, 777777), runs up or down (1234, 987654, 8901) and a list of common PINs. */
export function isCommonPin(pin: string): boolean {
  if (/^(\d)\1+$/.test(pin)) return true
  const digits = [...pin].map(Number)
  const steps = digits.slice(1).map((d, i) => (d - digits[i]! + 10) % 10)
  if (steps.every((s) => s === 1) || steps.every((s) => s === 9)) return true
  return KNOWN_COMMON.has(pin)
}

/** The first lock: 15 minutes. */
export const PIN_LOCK_BASE_MS = 15 * 60_000
/**
 * No lock lasts longer than a day, however many came before it. Uncapped,
 * the doubling reached weeks after a few rounds of guesses (a stolen session
 * guessing, or a player who forgot the PIN), and nothing but a correct PIN
 * lifted it. A day still allows at most 5 guesses a day once the cap is
 * reached.
 */
export const PIN_LOCK_MAX_MS = 24 * 60 * 60_000

/** How long the lock after `locksBefore` earlier ones lasts: 15 min doubling each time, capped at PIN_LOCK_MAX_MS. */
export function pinLockMs(locksBefore: number): number {
  // 2 ** 1100 is Infinity, which Math.min caps as well: no overflow for any count.
  return Math.min(PIN_LOCK_MAX_MS, PIN_LOCK_BASE_MS * 2 ** Math.max(0, locksBefore))
}
