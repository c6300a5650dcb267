// The one place a randomized test gets its seed. Every randomized test calls
// chooseSeed once: the seed comes from its environment variable when set (a
// replay), else it is drawn now; either way it is printed before anything
// random happens, with the line that replays it. fast-check gets it as its
// `seed`; randomness outside fast-check (kill timing, which player a worker
// picks, libfiu's failure draws) comes from streams derived from it, so a seed
// replays a run as far as timing allows.
//
// What must stay true: no randomized test draws from Math.random (or any
// unseeded source) for anything that decides what it exercises, when, or what
// it expects. (Unseeded randomness that only keeps values apart, like a
// username's suffix or a fresh destination address, decides nothing.)

/**
 * The seed of one randomized test file: `variable` when set, else a fresh one.
 * A signed 32-bit integer, the form fast-check prints in its failure reports.
 */
export function chooseSeed(variable: string, label: string): number {
  const raw = process.env[variable]
  let seed: number
  if (raw !== undefined && raw !== '') {
    const n = Number(raw)
    if (!Number.isSafeInteger(n)) throw new Error(`${variable} must be an integer, got "${raw}"`)
    seed = n | 0
  } else {
    seed = crypto.getRandomValues(new Int32Array(1))[0]!
  }
  console.log(`${label}: seed ${seed} (replay: ${variable}=${seed})`)
  return seed
}

/**
 * A small seeded PRNG (mulberry32): uniform floats in [0, 1). `streams` names
 * an independent stream (say, a worker and a round), so workers that run
 * concurrently draw the same values whatever order they run in.
 */
export function seededRandom(seed: number, ...streams: number[]): () => number {
  let a = seed | 0
  // Mix each stream index in (a murmur3-style finalizer), so nearby indices give unrelated streams.
  for (const s of streams) {
    a = Math.imul(a ^ (s + 0x9e3779b9), 0x85ebca6b)
    a ^= a >>> 13
    a = Math.imul(a, 0xc2b2ae35)
    a ^= a >>> 16
  }
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** One item of `items`, drawn from `random`. */
export function pickWith<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!
}

/** A shuffled copy of `items` (Fisher-Yates), drawn from `random`. */
export function shuffleWith<T>(random: () => number, items: readonly T[]): T[] {
  const out = [...items]
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[out[i], out[j]] = [out[j]!, out[i]!]
  }
  return out
}
