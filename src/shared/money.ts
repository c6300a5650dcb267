// Money on the wire is a decimal string, never a JSON number (contract: money
// grammar): ^(0|[1-9][0-9]{0,17})(\.[0-9]{1,N})?$ with N the asset's decimals.
// Inside the server an amount is a bigint count of minor units (10^-N of a
// unit). What must stay true:
// - nothing on this path touches a float: no Number(), parseFloat, parseInt or
//   arithmetic on JS numbers for amounts, only string checks and BigInt;
// - parseAmount accepts exactly the grammar and nothing else (no signs,
//   exponents, leading zeros, whitespace, non-ASCII digits or non-strings);
// - formatAmount(parseAmount(s)) is s in canonical form, and
//   parseAmount(formatAmount(m)) === m for every m in [0, maxAmount(asset)].

export interface Asset {
  code: string
  decimals: number
}

// Frozen so no caller can change the scale of every stored amount at runtime.
export const USDC: Asset = Object.freeze({ code: 'USDC', decimals: 6 })

export const ASSETS: Readonly<Record<string, Asset>> = Object.freeze({ USDC })

/** The grammar allows at most this many digits before the '.'. */
const MAX_WHOLE_DIGITS = 18
/** An asset's decimals must fit the grammar's fraction and keep minor units exact. */
const MAX_DECIMALS = 18
/** Error messages quote at most this much of the input, so a hostile body cannot flood logs. */
const PREVIEW_CHARS = 40

export class MoneyFormatError extends Error {
  /** The rejected value as given, for callers that need it; never put whole into a message. */
  readonly input: unknown

  constructor(input: unknown, reason: string) {
    super(reason)
    this.name = 'MoneyFormatError'
    this.input = input
  }
}

/**
 * Checks the asset's scale. A bad asset is a programming error, not bad input,
 * so it is a RangeError and is checked before the amount.
 */
function checkAsset(asset: Asset): number {
  const d = asset.decimals
  if (!Number.isInteger(d) || d < 0 || d > MAX_DECIMALS) {
    throw new RangeError(`asset ${String(asset.code)} has decimals ${String(d)}; must be an integer in 0..${MAX_DECIMALS}`)
  }
  return d
}

// One anchored pattern per scale. No flags: without 'm', '$' matches only at the
// very end, so '1\n' is refused. [0-9] is ASCII only, unlike \d with 'u' or
// Number(), so '١' and '１' are refused too.
const grammarByDecimals = new Map<number, RegExp>()

function grammar(decimals: number): RegExp {
  let re = grammarByDecimals.get(decimals)
  if (re === undefined) {
    const whole = `(0|[1-9][0-9]{0,${MAX_WHOLE_DIGITS - 1}})`
    const fraction = decimals === 0 ? '' : `(?:\\.([0-9]{1,${decimals}}))?`
    re = new RegExp(`^${whole}${fraction}$`)
    grammarByDecimals.set(decimals, re)
  }
  return re
}

function scale(decimals: number): bigint {
  return 10n ** BigInt(decimals)
}

/** A short, quoted, escaped excerpt of a rejected string, safe to log. */
function preview(s: string): string {
  return JSON.stringify(s.length > PREVIEW_CHARS ? s.slice(0, PREVIEW_CHARS) : s) + (s.length > PREVIEW_CHARS ? '…' : '')
}

function describeType(input: unknown): string {
  if (input === null) return 'null'
  if (Array.isArray(input)) return 'an array'
  if (typeof input === 'number') return 'a JSON number'
  return `a ${typeof input}`
}

/** Why a string failed the grammar; only called on failure, so the checks can be loose. */
function reason(s: string, asset: Asset, decimals: number): string {
  if (s === '') return 'is empty'
  if (/\s/.test(s)) return 'contains whitespace'
  if (/^[+-]/.test(s)) return 'has a sign; amounts are unsigned'
  if (/[eE]/.test(s)) return 'uses exponent notation'
  if (!/^[0-9.]+$/.test(s)) return 'contains characters other than ASCII digits and "."'
  const parts = s.split('.')
  if (parts.length > 2) return 'has more than one "."'
  const [whole = '', fraction] = parts
  if (fraction !== undefined && decimals === 0) return `has a fraction, but ${asset.code} has no decimals`
  if (whole === '') return 'has no digits before "."'
  if (fraction === '') return 'has no digits after "."'
  if (fraction !== undefined && fraction.length > decimals) return `has more than ${decimals} decimals`
  if (whole.length > 1 && whole.startsWith('0')) return 'has a leading zero'
  if (whole.length > MAX_WHOLE_DIGITS) return `has more than ${MAX_WHOLE_DIGITS} digits before "."`
  return 'is not a plain decimal string'
}

/**
 * Parses a decimal string into minor units. Throws MoneyFormatError for anything
 * not matching the grammar for this asset, including every non-string.
 * '0' and '0.000000' parse to 0n.
 */
export function parseAmount(input: unknown, asset: Asset = USDC): bigint {
  const decimals = checkAsset(asset)
  if (typeof input !== 'string') {
    throw new MoneyFormatError(
      input,
      `${asset.code} amount must be a decimal string such as "12.5", got ${describeType(input)}`,
    )
  }
  const m = grammar(decimals).exec(input)
  if (m === null) {
    throw new MoneyFormatError(
      input,
      `${asset.code} amount ${preview(input)} ${reason(input, asset, decimals)}; ` +
        `expected a decimal string such as "12.5" with at most ${decimals} decimals`,
    )
  }
  // The grammar guarantees group 1 is 1..18 ASCII digits and group 2, when
  // present, 1..decimals ASCII digits, so BigInt() of them is exact.
  const whole = m[1] ?? '0'
  const fraction = (m[2] ?? '').padEnd(decimals, '0')
  return BigInt(whole) * scale(decimals) + (fraction === '' ? 0n : BigInt(fraction))
}

/** Like parseAmount but also refuses zero: an amount to move must be positive. */
export function parsePositiveAmount(input: unknown, asset: Asset = USDC): bigint {
  const minor = parseAmount(input, asset)
  if (minor === 0n) {
    throw new MoneyFormatError(input, `${asset.code} amount must be greater than zero`)
  }
  return minor
}

/** Largest amount the grammar allows for the asset, in minor units: (10^18 - 1) whole units plus the full fraction. */
export function maxAmount(asset: Asset = USDC): bigint {
  const decimals = checkAsset(asset)
  // (10^18 - 1) * 10^d + (10^d - 1) = 10^(18 + d) - 1
  return scale(MAX_WHOLE_DIGITS + decimals) - 1n
}

/**
 * Formats minor units as the canonical decimal string: no trailing zeros in the
 * fraction and no '.' when the fraction is zero ('1.5', '100', '0.000001').
 * Throws RangeError for negative values or values above maxAmount(asset).
 */
export function formatAmount(minor: bigint, asset: Asset = USDC): string {
  const decimals = checkAsset(asset)
  // A number here would mean a float reached a money path; refuse it loudly.
  if (typeof minor !== 'bigint') {
    throw new TypeError(`${asset.code} amount to format must be a bigint of minor units, got ${typeof minor}`)
  }
  if (minor < 0n) throw new RangeError(`${asset.code} amount must not be negative`)
  if (minor > maxAmount(asset)) throw new RangeError(`${asset.code} amount exceeds the largest amount the grammar allows`)
  const unit = scale(decimals)
  const whole = (minor / unit).toString()
  const fraction = (minor % unit).toString().padStart(decimals, '0').replace(/0+$/, '')
  return fraction === '' ? whole : `${whole}.${fraction}`
}

/**
 * Parses a signed amount (an operator adjustment, contract §10): the grammar
 * with an optional leading '-', nothing else ('+5', '--5', '- 5' are refused),
 * into signed minor units. Zero, signed or not, is refused: an adjustment
 * moves money.
 */
export function parseSignedAmount(input: unknown, asset: Asset = USDC): bigint {
  if (typeof input === 'string' && input.startsWith('-')) {
    const magnitude = input.slice(1)
    // The sign is one character: what follows must be an unsigned amount, so '--5' fails in parseAmount.
    try {
      return -parsePositiveAmount(magnitude, asset)
    } catch (error) {
      if (error instanceof MoneyFormatError) throw new MoneyFormatError(input, error.message)
      throw error
    }
  }
  return parsePositiveAmount(input, asset)
}

