// Invariant: money crosses the wire only as a decimal string matching
// ^(0|[1-9][0-9]{0,17})(\.[0-9]{1,N})?$ (N = the asset's decimals) and lives in
// the server as exact bigint minor units. parseAmount accepts exactly that
// grammar and refuses everything else (JSON numbers above all) with
// MoneyFormatError; formatAmount is its canonical inverse on [0, maxAmount];
// sums in minor units are exact; an amount to move is never zero.
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import {
  type Asset,
  ASSETS,
  formatAmount,
  maxAmount,
  MoneyFormatError,
  parseAmount,
  parsePositiveAmount,
  parseSignedAmount,
  USDC,
} from '../../src/shared/money'
import { chooseSeed } from '../helpers/seed'

// The properties' seed: printed here, replayed with ARENA_TEST_SEED.
const SEED = chooseSeed('ARENA_TEST_SEED', 'money properties')

const GEM: Asset = { code: 'GEM', decimals: 0 }

// Digit strings built char by char, so the generators never go through a float.
const digit = fc.constantFrom(...'0123456789'.split(''))
const nonZeroDigit = fc.constantFrom(...'123456789'.split(''))
const digits = (minLength: number, maxLength: number) => fc.string({ unit: digit, minLength, maxLength })

/** A whole part without leading zeros: '0' or 1..18 digits starting 1-9. */
const wholePart = fc.oneof(
  fc.constant('0'),
  fc.tuple(nonZeroDigit, digits(0, 17)).map(([first, rest]) => first + rest),
)

/** Any string in the USDC grammar, canonical or not (trailing zeros allowed). */
const validUsdcString = fc
  .tuple(wholePart, fc.option(digits(1, 6), { nil: undefined }))
  .map(([whole, fraction]) => (fraction === undefined ? whole : `${whole}.${fraction}`))

/** The canonical form, by string rules only: drop trailing fraction zeros, then a bare '.'. */
function canonical(s: string): string {
  return s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s
}

/** Schoolbook decimal addition on strings, independent of the bigint code under test. */
function decimalAdd(a: string, b: string): string {
  const [aw = '', af = ''] = a.split('.')
  const [bw = '', bf = ''] = b.split('.')
  const fracLen = Math.max(af.length, bf.length)
  const wholeLen = Math.max(aw.length, bw.length)
  const x = aw.padStart(wholeLen, '0') + af.padEnd(fracLen, '0')
  const y = bw.padStart(wholeLen, '0') + bf.padEnd(fracLen, '0')
  let out = ''
  let carry = 0
  for (let i = x.length - 1; i >= 0; i--) {
    // Single digits (0..19 with carry) are exact as JS numbers; this is the oracle, not a money path.
    const sum = '0123456789'.indexOf(x[i] ?? '0') + '0123456789'.indexOf(y[i] ?? '0') + carry
    out = String(sum % 10) + out
    carry = sum >= 10 ? 1 : 0
  }
  if (carry) out = '1' + out
  const splitAt = out.length - fracLen
  const whole = out.slice(0, splitAt).replace(/^0+(?=[0-9])/, '')
  return canonical(fracLen === 0 ? whole : `${whole}.${out.slice(splitAt)}`)
}

function expectFormatError(input: unknown, asset?: Asset): MoneyFormatError {
  let caught: unknown
  try {
    parseAmount(input, asset)
  } catch (e) {
    caught = e
  }
  expect(caught).toBeInstanceOf(MoneyFormatError)
  return caught as MoneyFormatError
}

describe('assets', () => {
  test('USDC has 6 decimals and is the only registered asset', () => {
    expect(USDC).toEqual({ code: 'USDC', decimals: 6 })
    expect(Object.keys(ASSETS)).toEqual(['USDC'])
    expect(ASSETS.USDC).toBe(USDC)
  })

  test('USDC cannot be mutated at runtime', () => {
    expect(Object.isFrozen(USDC)).toBe(true)
    expect(Object.isFrozen(ASSETS)).toBe(true)
  })

  test.each([-1, 19, 1.5, Number.NaN, Number.POSITIVE_INFINITY])('decimals %p is refused with RangeError', (decimals) => {
    const bad: Asset = { code: 'BAD', decimals }
    expect(() => parseAmount('1', bad)).toThrow(RangeError)
    expect(() => formatAmount(1n, bad)).toThrow(RangeError)
    expect(() => maxAmount(bad)).toThrow(RangeError)
  })

  test('decimals 0 and 18 are allowed', () => {
    expect(parseAmount('7', { code: 'A', decimals: 0 })).toBe(7n)
    expect(parseAmount('0.000000000000000001', { code: 'B', decimals: 18 })).toBe(1n)
  })
})

describe('parseAmount', () => {
  test.each([
    ['0', 0n],
    ['0.0', 0n],
    ['0.000000', 0n],
    ['1', 1_000_000n],
    ['1.5', 1_500_000n],
    ['100.00', 100_000_000n],
    ['0.000001', 1n],
    ['123456789012345678.123456', 123_456_789_012_345_678_123_456n],
    ['10.000000', 10_000_000n],
    ['999999999999999999.999999', 999_999_999_999_999_999_999_999n],
  ])('%p parses to %p minor units', (input, minor) => {
    expect(parseAmount(input)).toBe(minor)
  })

  test.each([
    '-1',
    '1e2',
    '1E2',
    '0.1234567',
    '00.10',
    '01',
    '.5',
    '5.',
    '',
    ' 1',
    '1 ',
    '1\n',
    '+1',
    '-0',
    '0x10',
    '١',
    '１',
    '1,5',
    '1.2.3',
    '1_000',
    '1234567890123456789',
    'NaN',
    'Infinity',
  ])('string %p is refused', (input) => {
    expectFormatError(input)
  })

  test.each([
    ['number 1', 1],
    ['number 0.1', 0.1],
    ['bigint 10n', 10n],
    ['null', null],
    ['undefined', undefined],
    ['object', {}],
    ['array', []],
    ['array holding a valid string', ['1']],
    ['String object', new String('1')],
    ['boolean', true],
  ])('non-string %s is refused', (_label, input) => {
    expectFormatError(input)
  })

  test('the error keeps the input but quotes at most 40 characters of it', () => {
    const input = '9'.repeat(1_000)
    const error = expectFormatError(input)
    expect(error.input).toBe(input)
    expect(error.name).toBe('MoneyFormatError')
    expect(error).toBeInstanceOf(Error)
    expect(error.message).toContain('9'.repeat(40))
    expect(error.message).not.toContain('9'.repeat(41))
  })

  test('the error says what is wrong', () => {
    expect(expectFormatError('0.1234567').message).toContain('more than 6 decimals')
    expect(expectFormatError('1e2').message).toContain('exponent')
    expect(expectFormatError('-1').message).toContain('sign')
    expect(expectFormatError('01').message).toContain('leading zero')
    expect(expectFormatError(0.1).message).toContain('JSON number')
    expect(expectFormatError(0.1).message).not.toContain('0.1')
  })
})

describe('parsePositiveAmount', () => {
  test.each(['0', '0.0', '0.000000'])('zero %p is refused', (input) => {
    expect(() => parsePositiveAmount(input)).toThrow(MoneyFormatError)
  })

  test('the smallest positive amount is accepted', () => {
    expect(parsePositiveAmount('0.000001')).toBe(1n)
    expect(parsePositiveAmount('12.5')).toBe(12_500_000n)
  })

  test('malformed input is still refused', () => {
    expect(() => parsePositiveAmount('-1')).toThrow(MoneyFormatError)
    expect(() => parsePositiveAmount(1)).toThrow(MoneyFormatError)
  })
})

describe('parseSignedAmount', () => {
  test.each([
    ['5', 5_000_000n],
    ['-5', -5_000_000n],
    ['-0.000001', -1n],
    ['0.000001', 1n],
    ['-999999999999999999.999999', -maxAmount()],
  ])('%p is %p minor units', (input, minor) => {
    expect(parseSignedAmount(input)).toBe(minor)
  })

  test.each(['0', '-0', '-0.000000', '+5', '--5', '- 5', '-', '-01', '-1.', '-1e2', '-0.0000001', ' -1', '-1 ', '−1', -5, 5, null])('%p is refused', (input) => {
    expect(() => parseSignedAmount(input)).toThrow(MoneyFormatError)
  })

  test('the error keeps the whole input, sign included', () => {
    try {
      parseSignedAmount('-1.2345678')
      throw new Error('accepted')
    } catch (error) {
      expect((error as MoneyFormatError).input).toBe('-1.2345678')
    }
  })

  test('it inverts formatAmount with a sign in front, for every non-zero amount', () => {
    const signed = (m: bigint) => (m < 0n ? `-${formatAmount(-m)}` : formatAmount(m))
    fc.assert(
      fc.property(fc.bigInt({ min: -maxAmount(), max: maxAmount() }).filter((m) => m !== 0n), (m) => parseSignedAmount(signed(m)) === m),
      { seed: SEED },
    )
  })
})

describe('formatAmount', () => {
  test.each([
    [0n, '0'],
    [1n, '0.000001'],
    [1_500_000n, '1.5'],
    [100_000_000n, '100'],
    [10_000_000n, '10'],
    [1_000_010n, '1.00001'],
    [123_456_789_012_345_678_123_456n, '123456789012345678.123456'],
    [999_999_999_999_999_999_999_999n, '999999999999999999.999999'],
  ])('%p formats as %p', (minor, text) => {
    expect(formatAmount(minor)).toBe(text)
  })

  test('negative and above-maximum values throw RangeError', () => {
    expect(() => formatAmount(-1n)).toThrow(RangeError)
    expect(() => formatAmount(maxAmount() + 1n)).toThrow(RangeError)
    expect(formatAmount(maxAmount())).toBe('999999999999999999.999999')
  })

  test('a JS number smuggled past the types is refused', () => {
    expect(() => formatAmount(1 as unknown as bigint)).toThrow(TypeError)
  })

  test('maxAmount is (10^18 - 1) whole units plus the full fraction', () => {
    expect(maxAmount()).toBe(999_999_999_999_999_999_999_999n)
    expect(maxAmount(USDC)).toBe(maxAmount())
    expect(maxAmount(GEM)).toBe(999_999_999_999_999_999n)
  })
})

describe('an asset with no decimals', () => {
  test('whole amounts are accepted and any fraction is refused', () => {
    expect(parseAmount('5', GEM)).toBe(5n)
    expect(parseAmount('0', GEM)).toBe(0n)
    expectFormatError('5.0', GEM)
    expectFormatError('5.', GEM)
    expect(formatAmount(5n, GEM)).toBe('5')
    expect(() => parsePositiveAmount('0', GEM)).toThrow(MoneyFormatError)
  })
})

describe('properties', () => {
  test('parseAmount(formatAmount(m)) === m for every m in [0, maxAmount]', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: maxAmount() }), (m) => {
        const text = formatAmount(m)
        expect(text).toBe(canonical(text))
        expect(parseAmount(text)).toBe(m)
      }),
      { numRuns: 1_000, seed: SEED },
    )
  })

  test('the round trip holds for every allowed scale 0..18', () => {
    const scaled = fc
      .integer({ min: 0, max: 18 })
      .chain((decimals) =>
        fc.tuple(fc.constant({ code: 'X', decimals }), fc.bigInt({ min: 0n, max: maxAmount({ code: 'X', decimals }) })),
      )
    fc.assert(
      fc.property(scaled, ([asset, m]) => {
        expect(parseAmount(formatAmount(m, asset), asset)).toBe(m)
      }),
      { numRuns: 500, seed: SEED },
    )
  })

  test('formatAmount(parseAmount(s)) is s in canonical form', () => {
    fc.assert(
      fc.property(validUsdcString, (s) => {
        expect(formatAmount(parseAmount(s))).toBe(canonical(s))
      }),
      { numRuns: 1_000, seed: SEED },
    )
  })

  test('no JS number is ever accepted, whatever its value', () => {
    fc.assert(
      fc.property(fc.double(), (d) => {
        expect(() => parseAmount(d)).toThrow(MoneyFormatError)
      }),
      { numRuns: 500, seed: SEED },
    )
  })

  test('no string with an exponent or a sign is ever accepted', () => {
    const marker = fc.constantFrom('e', 'E', '-', '+')
    // Both noise around a marker and an otherwise valid amount with a marker spliced in.
    const withMarker = fc.oneof(
      fc.tuple(fc.string(), marker, fc.string()).map(([a, m, b]) => a + m + b),
      fc
        .tuple(validUsdcString, marker, fc.nat())
        .map(([s, m, at]) => s.slice(0, at % (s.length + 1)) + m + s.slice(at % (s.length + 1))),
    )
    fc.assert(
      fc.property(withMarker, (s) => {
        expect(() => parseAmount(s)).toThrow(MoneyFormatError)
      }),
      { numRuns: 1_000, seed: SEED },
    )
  })

  test('addition in minor units is the exact decimal sum, or refused past the largest amount', () => {
    fc.assert(
      fc.property(validUsdcString, validUsdcString, (fa, fb) => {
        const sum = parseAmount(fa) + parseAmount(fb)
        const exact = decimalAdd(fa, fb)
        // Every pair is judged (no pair is skipped, so no seed can run out of
        // pairs to judge): up to 18 whole digits the sum is written exactly;
        // past them it is no amount, and formatting it refuses.
        if (exact.split('.')[0]!.length <= 18) expect(formatAmount(sum)).toBe(exact)
        else expect(() => formatAmount(sum)).toThrow(RangeError)
      }),
      { numRuns: 1_000, seed: SEED },
    )
  })

  test('ten times 0.1 is exactly 1', () => {
    let total = 0n
    for (let i = 0; i < 10; i++) total += parseAmount('0.1')
    expect(formatAmount(total)).toBe('1')
    expect(total).toBe(parseAmount('1'))
  })

  test('the oracle itself adds correctly', () => {
    expect(decimalAdd('999.999999', '0.000001')).toBe('1000')
    expect(decimalAdd('0.5', '0.25')).toBe('0.75')
    expect(decimalAdd('0', '0')).toBe('0')
  })
})
