// The seeding of a registration tournament (src/modules/games/seeding.ts): pure and reproducible.
// Seeding by rating through the routes: test/ratings/seeding.test.ts.
import { describe, expect, test } from 'bun:test'
import { newSeedingSeed, seedOrder } from '../../src/modules/games/seeding'

const players = Array.from({ length: 16 }, (_, i) => `p${i + 1}`)

describe('seedOrder', () => {
  test('registration: the join order as given', () => {
    expect(seedOrder(players, 'registration', null)).toEqual(players)
  })

  test('random: a permutation, the same for the same seed, every time', () => {
    const seed = newSeedingSeed()
    expect(seed).toMatch(/^[0-9a-f]{32}$/)
    const once = seedOrder(players, 'random', seed)
    expect([...once].sort()).toEqual([...players].sort())
    for (let i = 0; i < 5; i++) expect(seedOrder(players, 'random', seed)).toEqual(once)
    expect(players[0]).toBe('p1') // the input is not shuffled in place
  })

  test('random: a fixed seed gives a fixed order (the documented algorithm, pinned)', () => {
    const pinned = seedOrder(['a', 'b', 'c', 'd', 'e'], 'random', '00112233445566778899aabbccddeeff')
    // Changing the algorithm would change every past bracket's proof: this must stay.
    expect(pinned).toEqual(['a', 'e', 'b', 'd', 'c'])
  })

  test('random: different seeds spread the top seed (no fixed point in the shuffle)', () => {
    const firsts = new Set(Array.from({ length: 200 }, () => seedOrder(players, 'random', newSeedingSeed())[0]))
    expect(firsts.size).toBeGreaterThan(10)
  })

  test('random without a seed is a programming error', () => {
    expect(() => seedOrder(players, 'random', null)).toThrow()
  })

  test('rating: highest display first, equal displays in join order', () => {
    const display: Record<string, number> = { a: 800, b: 1210.5, c: 800, d: 640, e: 1210.5, f: 800 }
    expect(seedOrder(['a', 'b', 'c', 'd', 'e', 'f'], 'rating', null, (p) => display[p]!)).toEqual(['b', 'e', 'a', 'c', 'f', 'd'])
    expect(seedOrder(['f', 'e', 'd', 'c', 'b', 'a'], 'rating', null, (p) => display[p]!)).toEqual(['e', 'b', 'f', 'c', 'a', 'd'])
  })

  test('rating without the displays is a programming error', () => {
    expect(() => seedOrder(players, 'rating', null)).toThrow()
  })
})
