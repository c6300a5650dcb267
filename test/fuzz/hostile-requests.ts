// Generators of hostile requests for test/fuzz. A generated request is pure
// data (a RequestSpec): values the fuzzer cannot know in advance — a live
// bearer, a fresh game-session token, a PIN session of the caller — appear as
// symbolic Refs that the world (fuzz-world.ts) resolves when the request is sent.
// So a failing case prints readably, replays from its seed and shrinks.
//
// What the generators aim at (issue 9): wrong JSON types, missing and extra
// fields, huge strings up to and past the 64 KiB body limit, deep nesting,
// prototype-pollution keys, non-JSON and odd content types, no body,
// malformed JSON, odd headers, odd path params and query strings, money-ish
// amounts (1e3, -0, .5, 0x10, unicode digits, ...) and numbers where strings
// belong, mixed with valid values often enough to get past authentication
// into validation and the services behind it.
import fc from 'fast-check'

export const MAX_BODY = 64 * 1024

// ---------------------------------------------------------------------------
// Symbolic values

/** A value only the running world knows (a live token, an id), resolved at send time. */
export class Ref {
  constructor(
    readonly name: string,
    readonly arg: number = 0,
  ) {}
  [fc.toStringMethod](): string {
    return this.arg === 0 ? `Ref(${this.name})` : `Ref(${this.name}, ${this.arg})`
  }
}

/** A literal JSON token written as is: '-0', '1e3', '0x10' (not JSON at all), a deep nest. */
export class Raw {
  constructor(readonly text: string) {}
  [fc.toStringMethod](): string {
    return this.text.length > 80 ? `Raw(${JSON.stringify(this.text.slice(0, 60))}… ${this.text.length} chars)` : `Raw(${JSON.stringify(this.text)})`
  }
}

/** A JSON object as a list of entries: duplicate keys and `__proto__` stay what they are. */
export class JObj {
  constructor(readonly entries: [string, JVal][]) {}
  [fc.toStringMethod](): string {
    return `{${this.entries.map(([k, v]) => `${JSON.stringify(k)}: ${fc.stringify(v)}`).join(', ')}}`
  }
}

export type JVal = string | number | boolean | null | Ref | Raw | JObj | JVal[]

/** Serializes a JVal whose Refs have been resolved (resolve maps each Ref to a JVal). */
export function toJson(value: JVal, resolve: (ref: Ref) => JVal): string {
  if (value instanceof Ref) return toJson(resolve(value), resolve)
  if (value instanceof Raw) return value.text
  if (value instanceof JObj) return `{${value.entries.map(([k, v]) => `${JSON.stringify(k)}:${toJson(v, resolve)}`).join(',')}}`
  if (Array.isArray(value)) return `[${value.map((v) => toJson(v, resolve)).join(',')}]`
  // JSON.stringify(NaN) is 'null'; Raw carries the literal when that is the point.
  return JSON.stringify(value)
}

// ---------------------------------------------------------------------------
// Strings and amounts

/** Amount-like strings the money grammar must refuse, and a few it must accept. */
export const MONEYISH = [
  '1e3', '1E3', '1.5e2', '1e-7', '-0', '-1', '-0.5', '.5', '5.', '0x10', '0X1F', '0b101', '0o17', '1_000', '1,000', '1,5',
  '١٢٣', '١', '٠', '１', '１０', '𝟏', '१२', '๑', '²', '½', 'Infinity', '-Infinity', 'NaN', 'infinity', '+1', ' 1', '1 ', '\t1',
  '1\n', '01', '00.1', '0.0000001', '0.1234567', '1.', '1..2', '999999999999999999.999999', '1000000000000000000', '9999999999999999999',
  '0', '0.0', '0.000000', '0.000001', '1', '1.5', '100', '12.345678', '18446744073709551616', '1e400', '-1e-400', '', ' ', 'null', 'true',
  '1/2', '1%', '$1', '1 USDC', '٫5', '1٫5', '１.５',
]

/** Strings that have broken parsers, loggers and SQL layers elsewhere. */
export const NASTY_STRINGS = [
  '', ' ', '\t', '\n', '\r\n', '\u0000', 'a\u0000b', '\u0007', '\u001b[31m', '\u007f', '\u0085', '\u00a0', '\u2028', '\u2029', '\ufeff',
  '\u200b', '\u202e', '\ud800', '\udfff', '\ud83d', '\ud83d\ude00', '\uffff', '\ufffd', 'null', 'undefined', 'true', 'false', 'NaN',
  '[]', '{}', '[object Object]', '__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString', 'valueOf', "' OR '1'='1",
  '"; DROP TABLE users; --', '${7*7}', '{{7*7}}', '<script>alert(1)</script>', '%00', '%', '%zz', '../../../../etc/passwd', '..\\..\\',
  'usr_', 'usr_00000000000000000000000000', 'gam_x', 'mat_', 'par_0', 'pns_0', 'trn_0', 'ses_0', 'c1.', 'c1.MA', 'c1.LTE', 'c1.OTk5OTk5OTk5OTk5OTk5',
  'Bearer', 'ENV_COMPROMISED', 'WIN', 'DRAW', 'SAFE', 'single_elimination', 'Z̸̡̢͎̈́͠a̵l̷g̶o̴', '𝕒𝕓𝕔', 'ß', 'İ', 'ﬃ', 'Å', 'Å',
  '\u0130stanbul', 'ǅ', '🏳️‍🌈', '👨‍👩‍👧‍👦', 'ⅷ', 'a'.repeat(255), 'a'.repeat(256), 'é'.repeat(100),
]

/** A character a fetch Headers value may hold (no NUL, CR, LF; Latin-1 only). */
const headerChar = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) },
  { weight: 1, arbitrary: fc.constantFrom(0x01, 0x08, 0x09, 0x0b, 0x0c, 0x1b, 0x1f) },
  { weight: 2, arbitrary: fc.integer({ min: 0x80, max: 0xff }) },
).map((code) => String.fromCharCode(code))

export const headerValue = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: headerChar, maxLength: 40 }) },
  { weight: 2, arbitrary: fc.constantFrom('', ' ', 'null', 'undefined', '0', '-1', 'true', '[]', '{}', '__proto__', 'Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', '\t') },
  { weight: 1, arbitrary: fc.integer({ min: 200, max: 20_000 }).map((n) => 'A'.repeat(n)) },
  { weight: 1, arbitrary: fc.constantFrom('ÿÿÿ', 'Ã©', '\u0001\u0002', 'a\tb', '%00', '%0d%0aSet-Cookie: x=1') },
)

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c))

/** A string of any kind, bounded near the schema's length limits when it has them. */
export function hostileString(schema?: Schema): fc.Arbitrary<string> {
  const lengths: number[] = []
  if (schema?.maxLength !== undefined) lengths.push(schema.maxLength, schema.maxLength + 1, schema.maxLength * 2 + 1)
  if (schema?.minLength !== undefined && schema.minLength > 0) lengths.push(schema.minLength - 1)
  const bounded = lengths.length > 0 ? [{ weight: 2, arbitrary: fc.constantFrom(...lengths).chain((n) => fc.constantFrom('a', '0', 'é', '😀', ' ').map((c) => c.repeat(n))) }] : []
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
    { weight: 4, arbitrary: fc.constantFrom(...MONEYISH) },
    { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }) },
    { weight: 1, arbitrary: fc.string({ unit: fc.oneof(fc.constantFrom('a', '1', '_', '.'), loneSurrogate), maxLength: 8 }) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 16 }) },
    { weight: 1, arbitrary: fc.integer({ min: 1000, max: 70_000 }).map((n) => 'x'.repeat(n)) },
    ...bounded,
  )
}

/** Number tokens, several of them not JSON at all (which makes the whole body malformed). */
const numberToken = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('0', '-0', '1', '-1', '1e3', '1E3', '1e-7', '0.5', '-0.5', '1.0', '1e400', '-1e400', '1e-400', '123456789012345678901234567890', '9007199254740993', '4.9e-324', '1.7976931348623157e308', '100', '1000000') },
  { weight: 3, arbitrary: fc.double().filter((d) => Number.isFinite(d)).map((d) => JSON.stringify(d)) },
  { weight: 2, arbitrary: fc.integer().map(String) },
  { weight: 1, arbitrary: fc.constantFrom('0x10', '.5', '5.', '+1', '01', 'NaN', 'Infinity', '-Infinity', '1_000', '١٢٣', '１') },
).map((text) => new Raw(text))

/** Nesting thousands of levels deep, as text (a nest of objects this deep would blow the generator's own stack). */
export const deepNest = fc
  .record({ depth: fc.oneof(fc.integer({ min: 2, max: 200 }), fc.integer({ min: 1000, max: 30_000 })), kind: fc.constantFrom('array', 'object', 'proto', 'mixed') })
  .map(({ depth, kind }) => {
    switch (kind) {
      case 'array':
        return new Raw('['.repeat(depth) + ']'.repeat(depth))
      case 'object':
        return new Raw('{"a":'.repeat(depth) + '1' + '}'.repeat(depth))
      case 'proto':
        return new Raw('{"__proto__":'.repeat(depth) + '{"polluted":true}' + '}'.repeat(depth))
      default:
        return new Raw('[{"x":'.repeat(depth) + 'null' + '}]'.repeat(depth))
    }
  })

/** Objects whose keys try to reach a prototype, spelled out or behind \u escapes. */
export const pollutingObject: fc.Arbitrary<JVal> = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'prototype').map((key) => new JObj([[key, new JObj([['polluted', true], ['isAdmin', true]])]])),
  fc.constant(new JObj([['constructor', new JObj([['prototype', new JObj([['polluted', true]])]])]])),
  fc.constant(new Raw('{"\\u005f\\u005fproto\\u005f\\u005f":{"polluted":true}}')),
  fc.constant(new Raw('{"__pro\\u0074o__":{"polluted":true},"a":1}')),
  fc.constant(new Raw('{"con\\u0073tructor":{"prototype":{"polluted":true}}}')),
  // Objects that cannot be printed: an own toString/valueOf that is no function
  // makes `${value}` throw (a 500 once, when a validation message printed it).
  fc.constantFrom('toString', 'valueOf').chain((key) => fc.oneof(fc.constant<JVal>([]), fc.constant<JVal>(1), fc.constant<JVal>(null)).map((v) => new JObj([[key, v], ...(key === 'valueOf' ? [['toString', new JObj([])] as [string, JVal]] : [])]))),
)

/** Any JSON value, small, including the hostile kinds. */
export const anyJson: fc.Arbitrary<JVal> = fc.letrec<{ value: JVal }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 3, arbitrary: hostileString() },
    { weight: 2, arbitrary: numberToken },
    { weight: 1, arbitrary: fc.constantFrom<JVal>(true, false, null) },
    { weight: 1, arbitrary: fc.array(tie('value'), { maxLength: 4 }) },
    { weight: 1, arbitrary: fc.array(fc.tuple(fc.oneof(hostileString(), fc.constantFrom('__proto__', 'constructor', 'toString', 'valueOf')), tie('value')), { maxLength: 4 }).map((e) => new JObj(e)) },
    { weight: 1, arbitrary: pollutingObject },
  ),
})).value

// ---------------------------------------------------------------------------
// Schemas (the TypeBox schemas Elysia keeps on each route)

export interface Schema {
  type?: string
  const?: unknown
  anyOf?: Schema[]
  properties?: Record<string, Schema>
  required?: string[]
  patternProperties?: Record<string, Schema>
  additionalProperties?: boolean | Schema
  items?: Schema
  minItems?: number
  maxItems?: number
  minLength?: number
  maxLength?: number
  pattern?: string
  format?: string
  minimum?: number
  maximum?: number
  [key: string]: unknown
}

/** Valid-looking values by field name: real ids and tokens (Refs) or values that pass the service's own checks. */
export type Hints = Record<string, fc.Arbitrary<JVal>>

/** A value the schema accepts (not necessarily one the service accepts). */
export function validFor(schema: Schema | undefined, name: string, hints: Hints, depth = 0): fc.Arbitrary<JVal> {
  const hint = hints[name]
  if (hint) return hint
  if (!schema || depth > 3) return fc.constant(null)
  if (schema.const !== undefined) return fc.constant(schema.const as JVal)
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map((s) => validFor(s, name, hints, depth + 1)))
  switch (schema.type) {
    case 'string': {
      if (schema.pattern) return fc.stringMatching(new RegExp(schema.pattern))
      if (schema.format === 'email') return fc.emailAddress()
      const min = schema.minLength ?? 0
      return fc.string({ minLength: min, maxLength: Math.max(min, Math.min(schema.maxLength ?? 24, 24)) })
    }
    case 'boolean':
      return fc.boolean()
    case 'integer':
    case 'number':
      return fc.integer({ min: schema.minimum ?? 0, max: schema.maximum ?? 1000 })
    case 'array':
      return fc.array(validFor(schema.items, name, hints, depth + 1), { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 4, Math.max(schema.minItems ?? 0, 4)) })
    case 'object': {
      if (schema.properties && Object.keys(schema.properties).length > 0) {
        const props = Object.entries(schema.properties)
        return fc.tuple(...props.map(([k, s]) => validFor(s, k, hints, depth + 1))).map((values) => new JObj(props.map(([k], i) => [k, values[i]!])))
      }
      // A record (t.Record) or an empty object.
      return fc.array(fc.tuple(fc.string({ maxLength: 8 }), anyJson), { maxLength: 3 }).map((e) => new JObj(e))
    }
    default:
      return anyJson
  }
}

/** A value of the wrong kind, or of the right kind but out of bounds, for this field. */
export function hostileFor(schema: Schema | undefined): fc.Arbitrary<JVal> {
  return fc.oneof(
    { weight: 5, arbitrary: hostileString(schema) },
    { weight: 3, arbitrary: numberToken },
    { weight: 1, arbitrary: fc.constantFrom<JVal>(true, false, null) },
    { weight: 1, arbitrary: fc.array(hostileString(), { maxLength: 3 }) },
    { weight: 1, arbitrary: anyJson },
    { weight: 1, arbitrary: pollutingObject },
    { weight: 1, arbitrary: deepNest },
  )
}

type FieldPlan = { kind: 'valid' } | { kind: 'hostile' } | { kind: 'omit' }

const extraEntry: fc.Arbitrary<[string, JVal]> = fc.oneof(
  fc.tuple(fc.constantFrom('__proto__', 'constructor', 'prototype'), pollutingObject),
  fc.tuple(fc.constantFrom('__proto__', 'constructor'), anyJson),
  fc.tuple(fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('isAdmin', 'role', 'userId', 'balance', 'id', '')), anyJson),
)

/**
 * A JSON object shaped after the schema: each declared field valid, hostile
 * or missing, plus extra keys. `mode` keeps fully valid bodies rare, so
 * routes whose valid path hashes a password (argon2) stay fast.
 */
export function objectFor(schema: Schema, hints: Hints): fc.Arbitrary<JVal> {
  const props = Object.entries(schema.properties ?? {})
  if (props.length === 0) {
    return fc.oneof(
      fc.constant(new JObj([])),
      fc.array(extraEntry, { minLength: 1, maxLength: 4 }).map((e) => new JObj(e)),
    )
  }
  const fieldPlan = (weights: [number, number, number]) =>
    fc.oneof(
      { weight: weights[0], arbitrary: fc.constant<FieldPlan>({ kind: 'valid' }) },
      { weight: weights[1], arbitrary: fc.constant<FieldPlan>({ kind: 'hostile' }) },
      { weight: weights[2], arbitrary: fc.constant<FieldPlan>({ kind: 'omit' }) },
    )
  // valid: every field valid; oneOff: exactly one field hostile or missing; mixed: each field on its own.
  const plans = fc.oneof(
    { weight: 1, arbitrary: fc.constant(props.map((): FieldPlan => ({ kind: 'valid' }))) },
    {
      weight: 5,
      arbitrary: fc.record({ at: fc.nat({ max: props.length - 1 }), how: fc.constantFrom<FieldPlan>({ kind: 'hostile' }, { kind: 'hostile' }, { kind: 'omit' }) }).map(({ at, how }) =>
        props.map((_, i): FieldPlan => (i === at ? how : { kind: 'valid' })),
      ),
    },
    { weight: 4, arbitrary: fc.tuple(...props.map(() => fieldPlan([2, 3, 1]))) },
  )
  // Each field's arbitraries built once, not once per generated body (a pattern's
  // stringMatching parses its regular expression when built): building draws
  // nothing, so the bodies a seed gives are the same.
  const valid = props.map(([name, s]) => validFor(s, name, hints))
  const hostile = props.map(([, s]) => hostileFor(s))
  const omitted = fc.constant(null)
  const extras = fc.oneof({ weight: 5, arbitrary: fc.constant([] as [string, JVal][]) }, { weight: 2, arbitrary: fc.array(extraEntry, { minLength: 1, maxLength: 3 }) })
  // A declared key given twice: the last one wins in JSON.parse.
  const duplicate = fc.oneof({ weight: 8, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.tuple(fc.nat({ max: props.length - 1 }), hostileFor(undefined)) })
  return plans.chain((plan) =>
    fc
      .tuple(fc.tuple(...props.map((_, i) => (plan[i]!.kind === 'valid' ? valid[i]! : plan[i]!.kind === 'hostile' ? hostile[i]! : omitted))), extras, duplicate)
      .map(([values, extras, dup]) => {
        const entries: [string, JVal][] = []
        props.forEach(([name], i) => {
          if (plan[i]!.kind !== 'omit') entries.push([name, values[i]!])
        })
        if (dup) entries.push([props[dup[0]]![0], dup[1]])
        return new JObj([...entries, ...extras])
      }),
  )
}

// ---------------------------------------------------------------------------
// Whole requests

export type BodySpec =
  | { kind: 'none'; contentType: string | null }
  | { kind: 'json'; value: JVal; contentType: string | null }
  | { kind: 'text'; text: string; contentType: string | null }
  | { kind: 'bytes'; bytes: number[]; contentType: string | null }
  /** Bigger than the limit; `stream` sends it without a Content-Length. */
  | { kind: 'huge'; bytes: number; stream: boolean; contentType: string | null; contentLength: string | null }
  /**
   * An HTML form (the console's): the object's entries urlencoded (an array
   * repeats its key, an object or Raw is its JSON text), with raw text before
   * and after it (broken escapes, stray separators) when given.
   */
  | { kind: 'form'; fields: JObj; contentType: string | null; prefix?: string; suffix?: string }

export interface RequestSpec {
  method: string
  /** Path parameter values by name: a Ref to a real id, or text placed in the path as is. */
  params: Record<string, Ref | string>
  /** Query string: structured pairs (values may be Refs) or raw text after '?'. */
  query: { pairs: [string, Ref | string][] } | { raw: string } | null
  headers: [string, Ref | string][]
  body: BodySpec
  /** Which pool user's identity the Refs mean (0..USERS-1). */
  subject: number
}

export const JSON_TYPES = ['application/json', 'application/json; charset=utf-8', 'application/json;charset=UTF-8', 'APPLICATION/JSON', 'application/vnd.arena+json', 'application/problem+json', ' application/json ']
export const ODD_TYPES = [
  'text/plain', 'text/plain;charset=UTF-8', 'text/json', 'application/x-www-form-urlencoded', 'multipart/form-data', 'multipart/form-data; boundary=xyz',
  'multipart/form-data; boundary=', 'application/octet-stream', 'application/xml', 'text/html', 'application/json-patch', 'application/jsonx', 'json',
  'application/', '/', ';', '*/*', '', 'application/json; charset=utf-16', 'application/json; charset=latin1', 'application/json; boundary=x', 'image/png',
  'application/json, text/plain', 'application/x-ndjson', 'application/graphql',
]

const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...JSON_TYPES) },
  { weight: 3, arbitrary: fc.constantFrom(...ODD_TYPES) },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: headerValue },
)

const malformedJson = fc.oneof(
  fc.constantFrom('{', '}', '[', '{"a":', '{"a":1,}', '[1,]', "{'a':1}", '{a:1}', '{"a":1}}', '{"a":1} x', 'nul', 'tru', '"unterminated', '{"a":"\u0001"}',
    '{"a":1 /* c */}', '// c\n{}', '\ufeff{}', '{"a":NaN}', '{"a":Infinity}', '{"a":0x10}', '{"a":.5}', '{"a":01}', '{"a":-}', '{"\\x41":1}', '{"a":"\\u12"}',
    '{"a":"\\ud800"}', '{"a"\u00a0:1}', '{,}', ':', 'undefined', '\u0000', '{"a":1}\u0000', '[]]', '{"__proto__":', ' ', '\n\n', 'a=1&b=2', '<xml/>'),
  fc.string({ unit: 'binary', maxLength: 60 }),
)

/** A body: none, JSON (schema-shaped or any), malformed, binary, huge, or JSON under a wrong content type. */
export function bodyFor(schema: Schema | undefined, hints: Hints): fc.Arbitrary<BodySpec> {
  const shaped = schema && schema.type === 'object' ? objectFor(schema, hints) : anyJson
  return fc.oneof(
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('none' as const), contentType: fc.option(fc.constantFrom(...JSON_TYPES, ...ODD_TYPES), { nil: null }) }) },
    { weight: 28, arbitrary: fc.record({ kind: fc.constant('json' as const), value: shaped, contentType: fc.constantFrom(...JSON_TYPES) }) },
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('json' as const), value: fc.oneof(anyJson, deepNest, pollutingObject), contentType: fc.constantFrom(...JSON_TYPES) }) },
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('json' as const), value: shaped, contentType }) },
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('text' as const), text: malformedJson, contentType }) },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('bytes' as const),
        // Invalid UTF-8 (lone continuation bytes, overlongs, surrogates) mixed with plain JSON bytes.
        bytes: fc.array(fc.oneof(fc.constantFrom(0x80, 0xbf, 0xc0, 0xc1, 0xed, 0xf5, 0xff, 0xfe, 0x00), fc.integer({ min: 0x20, max: 0x7e })), { minLength: 1, maxLength: 64 }),
        contentType,
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('huge' as const),
        bytes: fc.oneof(fc.integer({ min: MAX_BODY - 64, max: MAX_BODY + 64 }), fc.integer({ min: MAX_BODY + 1, max: 4 * MAX_BODY })),
        stream: fc.boolean(),
        contentType: fc.option(fc.constantFrom(...JSON_TYPES, 'text/plain'), { nil: null }),
        // A lying Content-Length: smaller than the body, not a number, negative.
        contentLength: fc.option(fc.constantFrom('0', '1', '10', '-1', 'abc', '1e9', '65536', '99999999999999999999', ''), { freq: 3, nil: null }),
      }),
    },
  )
}

/** Authorization header values: live (Refs), revoked, forged and junk. */
export const authorization: fc.Arbitrary<Ref | string | null> = fc.oneof(
  { weight: 14, arbitrary: fc.constant(new Ref('bearer')) },
  { weight: 3, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.constant(new Ref('bearer:other')) },
  { weight: 1, arbitrary: fc.constant(new Ref('bearer:revoked')) },
  { weight: 2, arbitrary: fc.nat({ max: 1_000_000 }).map((n) => new Ref('bearer:forged', n)) },
  { weight: 1, arbitrary: fc.nat({ max: 7 }).map((n) => new Ref('bearer:mangled', n)) },
  {
    weight: 2,
    arbitrary: fc.oneof(
      headerValue,
      fc.constantFrom('Bearer', 'Bearer ', 'bearer x', 'Bearer a.b.c', 'Bearer ..', 'Bearer a.b', 'Bearer a.b.c.d', 'Basic dXNlcjpwYXNz', 'Token abc', 'Bearer\tabc', 'Bearer  abc', 'BEARER abc'),
      headerValue.map((v) => `Bearer ${v}`),
      fc.integer({ min: 4000, max: 20_000 }).map((n) => `Bearer ${'a'.repeat(n)}`),
    ),
  },
)

/** Values for a credential header other than Authorization: the real one, a stale or foreign one, junk, or nothing. */
function credential(name: string): fc.Arbitrary<Ref | string | null> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constant(new Ref(name)) },
    { weight: 1, arbitrary: fc.constant(new Ref(`${name}:stale`)) },
    { weight: 2, arbitrary: fc.constant(null) },
    { weight: 2, arbitrary: headerValue },
  )
}

const CREDENTIAL_HEADERS = ['x-admin-token', 'x-game-key', 'x-session-token', 'x-secure-session']

const oddHeader: fc.Arbitrary<[string, string]> = fc.oneof(
  fc.tuple(fc.constant('x-request-id'), fc.oneof(headerValue, fc.stringMatching(/^[A-Za-z0-9._:-]{1,128}$/), fc.constant('a'.repeat(129)))),
  fc.tuple(fc.constant('user-agent'), headerValue),
  fc.tuple(fc.constant('x-forwarded-for'), fc.oneof(headerValue, fc.constantFrom('1.2.3.4', '1.2.3.4, 5.6.7.8', '::1', ',,,', 'unknown', '999.999.999.999'))),
  fc.tuple(fc.constantFrom('accept', 'accept-encoding', 'accept-language', 'cookie', 'origin', 'referer', 'x-http-method-override', 'expect', 'range', 'if-none-match', 'cache-control', 'x-forwarded-proto', 'forwarded', 'connection', 'te', 'transfer-encoding', 'content-encoding'), headerValue),
  fc.tuple(fc.constantFrom('content-encoding', 'transfer-encoding'), fc.constantFrom('gzip', 'chunked', 'br', 'identity', 'deflate, gzip')),
  fc.tuple(fc.constantFrom(...CREDENTIAL_HEADERS), headerValue),
  fc.tuple(fc.stringMatching(/^x-[a-z0-9-]{1,20}$/), headerValue),
)

/** A path segment that is not a real id: junk, traversal, malformed percent-encoding, huge. */
export const pathJunk: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('', '%', '%zz', '%E0%A4%A', '%C0%AF', '%FF', '%00', '%2F', '%2e%2e', '..', '.', '%20', '+', '*', '~', ';', 'a;b=c', '%25', '%u0041',
    'null', 'undefined', '__proto__', 'constructor', 'usr_', 'mat_0', 'trn_0', 'gam_0', 'pns_0', 'ü', '😀', 'a'.repeat(64), 'a'.repeat(65), ':id', '{id}'),
  fc.string({ unit: 'grapheme-ascii', maxLength: 20 }).map((s) => s.replace(/[/?#]/g, '')),
  fc.string({ unit: 'binary', maxLength: 12 }).map((s) => encodeURIComponent(s)),
  fc.integer({ min: 100, max: 9000 }).map((n) => 'x'.repeat(n)),
)

const queryJunk: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('', '&', '&&', '=', '==', 'a', 'a=', '=a', '%', '%zz', 'a=%zz', 'a=%E0%A4%A', '__proto__=1', '__proto__[polluted]=1', 'constructor[prototype][polluted]=1',
    'a[]=1&a[]=2', 'a[b]=1', 'wait=1&wait=2', 'after=x&after=y', 'limit=1e3', 'wait=0x10', 'wait=-0', 'wait=.5', 'wait=Infinity', 'wait=NaN', 'wait=1_0', 'wait=١', 'wait=１',
    'limit=-1', 'limit=1.5', 'limit=501', 'topics=,,,', 'topics=session,session', 'topics=%00', 'a=1;b=2', '?', '#', '+=+', 'a=' + 'b'.repeat(10_000)),
  fc.string({ unit: 'grapheme-ascii', maxLength: 40 }).map((s) => s.replace(/#/g, '')),
)

const OTHER_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'PROPFIND', 'get', 'post']

function queryValueFor(name: string, schema: Schema, hints: Hints): fc.Arbitrary<Ref | string> {
  const valid = validFor(schema, name, hints).map((v) => (v instanceof Ref || typeof v === 'string' ? v : toJson(v, () => null)))
  return fc.oneof({ weight: 3, arbitrary: valid }, { weight: 3, arbitrary: hostileString(schema) }, { weight: 1, arbitrary: fc.constantFrom(...MONEYISH) })
}

export interface RouteShape {
  method: string
  path: string
  /** A console route's role (consoleRoute's `x-arena-role`); absent on the public ones and the API's. */
  role?: string
  body?: Schema
  query?: Schema
  headers?: Schema
}

export const USERS = 4

/** A hostile request for one route. */
export function requestFor(route: RouteShape, hints: Hints, paramHints: (param: string, path: string) => fc.Arbitrary<Ref>): fc.Arbitrary<RequestSpec> {
  const paramNames = [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!)
  const params = fc.tuple(...paramNames.map((name) => fc.oneof({ weight: 6, arbitrary: paramHints(name, route.path) as fc.Arbitrary<Ref | string> }, { weight: 1, arbitrary: fc.constant(new Ref('anyId')) }, { weight: 3, arbitrary: pathJunk }))).map(
    (values) => Object.fromEntries(paramNames.map((name, i) => [name, values[i]!])),
  )
  const queryProps = Object.entries(route.query?.properties ?? {})
  const query: fc.Arbitrary<RequestSpec['query']> =
    queryProps.length > 0
      ? fc.oneof(
          { weight: 1, arbitrary: fc.constant(null) },
          {
            weight: 6,
            arbitrary: fc
              .tuple(
                fc.tuple(...queryProps.map(([name, s]) => fc.option(queryValueFor(name, s, hints), { freq: 3, nil: undefined }))),
                fc.array(fc.tuple(fc.oneof(fc.constantFrom(...queryProps.map(([n]) => n), '__proto__', 'constructor'), fc.string({ maxLength: 8 })), fc.oneof(hostileString(), fc.constant(''))), { maxLength: 2 }),
              )
              .map(([values, extra]) => ({ pairs: [...queryProps.flatMap(([name], i) => (values[i] === undefined ? [] : [[name, values[i]!] as [string, Ref | string]])), ...extra] })),
          },
          { weight: 2, arbitrary: queryJunk.map((raw) => ({ raw })) },
        )
      : fc.oneof({ weight: 6, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: queryJunk.map((raw) => ({ raw })) })
  const declared = Object.keys(route.headers?.properties ?? {}).filter((h) => h !== 'authorization')
  const headers = fc
    .tuple(
      authorization,
      // The operator token on every route: admin routes need it, the others must ignore it.
      credential('x-admin-token'),
      fc.tuple(...declared.map((h) => credential(h))),
      fc.array(oddHeader, { maxLength: 3 }),
    )
    .map(([auth, admin, creds, odd]) => {
      const out: [string, Ref | string][] = []
      if (auth !== null) out.push(['authorization', auth])
      if (admin !== null) out.push(['x-admin-token', admin])
      declared.forEach((h, i) => {
        if (creds[i] !== null) out.push([h, creds[i]!])
      })
      return [...out, ...odd]
    })
  const method = fc.oneof({ weight: 30, arbitrary: fc.constant(route.method) }, { weight: 1, arbitrary: fc.constantFrom(...OTHER_METHODS) })
  return fc.record({ method, params, query, headers, body: bodyFor(route.body, hints), subject: fc.nat({ max: USERS - 1 }) })
}

// ---------------------------------------------------------------------------
// Console requests (/console: HTML forms, a session cookie, a CSRF token)

export const CONSOLE_PREFIX = '/console'
export const isConsoleRoute = (route: RouteShape) => route.path === CONSOLE_PREFIX || route.path.startsWith(`${CONSOLE_PREFIX}/`)
/** The device-code page (/device, contract §13): pages and forms like the console's, with a player's page cookie instead of an operator's session. */
export const DEVICE_PAGE_PREFIX = '/device'
export const isDevicePageRoute = (route: RouteShape) => route.path === DEVICE_PAGE_PREFIX || route.path.startsWith(`${DEVICE_PAGE_PREFIX}/`)
/** Routes whose answers are HTML pages and 303s, not the API's envelope. */
export const isPageRoute = (route: RouteShape) => isConsoleRoute(route) || isDevicePageRoute(route)

/** The console sessions the world holds, by index: Ref('console:cookie', i) is the session of CONSOLE_ROLES[i]. */
export const CONSOLE_ROLES = ['admin', 'moderator', 'finance', 'viewer'] as const
export const consoleRoleIndex = (role: string | undefined) => Math.max(0, CONSOLE_ROLES.indexOf((role ?? 'viewer') as (typeof CONSOLE_ROLES)[number]))

export const FORM_TYPES = ['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded; charset=UTF-8', 'APPLICATION/X-WWW-FORM-URLENCODED', 'application/x-www-form-urlencoded;charset=utf-8']

/** The session cookie: mostly the route's own role (past the role check), sometimes another role (a 403), none, ended, of the API, or junk. */
const consoleCookie = (role: string | undefined): fc.Arbitrary<Ref | string | null> =>
  fc.oneof(
    { weight: 24, arbitrary: fc.constant(new Ref('console:cookie', consoleRoleIndex(role))) },
    { weight: 4, arbitrary: fc.nat({ max: CONSOLE_ROLES.length - 1 }).map((i) => new Ref('console:cookie', i)) },
    { weight: 2, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.constantFrom(new Ref('console:cookie:ended'), new Ref('console:cookie:api'), new Ref('console:cookie:double')) },
    {
      weight: 2,
      arbitrary: fc.oneof(
        headerValue,
        fc.stringMatching(/^[A-Za-z0-9_-]{16,128}$/).map((v) => `arena_console=${v}`),
        fc.constantFrom('arena_console=', 'arena_console', 'ARENA_CONSOLE=x', 'arena_console="quoted"', '=; ;=;', 'arena_console=%00', `arena_console=${'A'.repeat(4000)}`),
      ),
    },
  )

/** The `_csrf` field: mostly the cookie's own token (the Ref `<kind>:csrf`), sometimes another session's, junk or missing. */
const csrfFieldOf = (kind: 'console' | 'device'): fc.Arbitrary<[string, JVal][]> =>
  fc.oneof(
    { weight: 20, arbitrary: fc.constant<[string, JVal][]>([['_csrf', new Ref(`${kind}:csrf`)]]) },
    { weight: 1, arbitrary: fc.constant<[string, JVal][]>([['_csrf', new Ref(`${kind}:csrf:other`)]]) },
    { weight: 1, arbitrary: fc.constant<[string, JVal][]>([]) },
    { weight: 1, arbitrary: fc.oneof(hostileString(), fc.constantFrom('', 'f'.repeat(64), '0'.repeat(64))).map((v): [string, JVal][] => [['_csrf', v]]) },
    // Given twice (the valid one first or last) or as a list: never a valid token.
    { weight: 1, arbitrary: fc.constantFrom<[string, JVal][]>([['_csrf', new Ref(`${kind}:csrf`)], ['_csrf', 'junk']], [['_csrf', 'junk'], ['_csrf', new Ref(`${kind}:csrf`)]], [['_csrf[]', new Ref(`${kind}:csrf`)]]) },
  )
const csrfField = csrfFieldOf('console')

/** Keys that try to reach a prototype through a form parser's bracket syntax, or repeat a field. */
const formExtraEntry: fc.Arbitrary<[string, JVal]> = fc.oneof(
  fc.tuple(fc.constantFrom('__proto__', 'constructor', 'prototype', '__proto__[polluted]', 'constructor[prototype][polluted]', '__proto__.polluted', 'a[b][c]', 'a[]', '[]', '', '='), fc.oneof(fc.constant<JVal>('1'), hostileString())),
  extraEntry,
)

/** Raw text around a form: broken percent escapes, stray separators, bracket keys, invalid UTF-8 written as escapes. */
const formJunk = fc.oneof(
  fc.constantFrom('%', '%%%', '%ZZ', 'a=%E0%A4%A', '&&', '&=&', '=', 'a', '+=+', '%00=%00', 'x=%C0%AF', '%FF%FE=1', '_csrf', '__proto__[polluted]=1&', 'a=1;b=2', '\r\n', `a=${'b'.repeat(10_000)}`),
  fc.string({ unit: 'binary', maxLength: 20 }),
)

/** A form body for a console route: mostly urlencoded and shaped after the schema, plus the hostile kinds. */
export function formBodyFor(schema: Schema | undefined, hints: Hints, csrf: fc.Arbitrary<[string, JVal][]> = csrfField): fc.Arbitrary<BodySpec> {
  // `_csrf` has its own generator: the schema's plan would spoil it as often as any field, and the session check would refuse most forms.
  const { _csrf: _, ...fields } = schema?.properties ?? {}
  const shaped = objectFor({ ...schema, type: 'object', properties: fields, required: (schema?.required ?? []).filter((f) => f !== '_csrf') }, hints)
  const form = fc
    .tuple(csrf, shaped, fc.oneof({ weight: 6, arbitrary: fc.constant([] as [string, JVal][]) }, { weight: 1, arbitrary: fc.array(formExtraEntry, { minLength: 1, maxLength: 3 }) }))
    .map(([csrf, value, extra]) => new JObj([...csrf, ...(value instanceof JObj ? value.entries : []), ...extra]))
  return fc.oneof(
    { weight: 24, arbitrary: fc.record({ kind: fc.constant('form' as const), fields: form, contentType: fc.constantFrom(...FORM_TYPES) }) },
    // The same form under a content type that is not a form's (JSON included: the schema still applies), or none.
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('form' as const), fields: form, contentType: fc.option(fc.oneof(fc.constantFrom(...JSON_TYPES, ...ODD_TYPES), headerValue), { nil: null }) }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('json' as const), value: form, contentType: fc.constantFrom(...JSON_TYPES) }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('form' as const), fields: form, contentType: fc.constantFrom(...FORM_TYPES), prefix: formJunk, suffix: formJunk }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('none' as const), contentType: fc.option(fc.constantFrom(...FORM_TYPES), { nil: null }) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('text' as const), text: malformedJson, contentType: fc.constantFrom(...FORM_TYPES, 'text/plain') }) },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('bytes' as const),
        bytes: fc.array(fc.oneof(fc.constantFrom(0x80, 0xbf, 0xc0, 0xc1, 0xed, 0xf5, 0xff, 0xfe, 0x00, 0x25, 0x26, 0x3d), fc.integer({ min: 0x20, max: 0x7e })), { minLength: 1, maxLength: 64 }),
        contentType: fc.constantFrom(...FORM_TYPES),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('huge' as const),
        bytes: fc.oneof(fc.integer({ min: MAX_BODY - 64, max: MAX_BODY + 64 }), fc.integer({ min: MAX_BODY + 1, max: 4 * MAX_BODY })),
        stream: fc.boolean(),
        contentType: fc.option(fc.constantFrom(...FORM_TYPES), { nil: null }),
        contentLength: fc.option(fc.constantFrom('0', '1', '-1', 'abc', '65536', ''), { freq: 3, nil: null }),
      }),
    },
  )
}

/** The Origin of a console form: mostly none (as a same-origin form from an older browser) or the console's own; sometimes another site's. */
const origin: fc.Arbitrary<string | null> = fc.oneof(
  { weight: 10, arbitrary: fc.constant(null) },
  { weight: 4, arbitrary: fc.constant('http://localhost') },
  { weight: 1, arbitrary: fc.constantFrom('https://evil.example', 'null', 'http://localhost.evil.example', 'http://localhost:1', 'file://', 'http://[::1', '') },
  { weight: 1, arbitrary: headerValue },
)

/** A hostile request for a console route: a form body, a session cookie and CSRF token, an Origin. */
export function consoleRequestFor(route: RouteShape, hints: Hints, paramHints: (param: string, path: string) => fc.Arbitrary<Ref>): fc.Arbitrary<RequestSpec> {
  const base = requestFor({ ...route, body: undefined }, hints, paramHints)
  const writes = route.method !== 'GET' && route.method !== 'HEAD'
  const odd = fc.array(fc.oneof(oddHeader, fc.tuple(fc.constantFrom('authorization', 'x-admin-token'), fc.oneof(headerValue, fc.constant(new Ref('x-admin-token'))))), { maxLength: 2 })
  const headers = fc.tuple(consoleCookie(route.role), writes ? origin : fc.option(origin, { freq: 4, nil: null }), odd).map(([cookie, from, rest]) => {
    const out: [string, Ref | string][] = []
    if (cookie !== null) out.push(['cookie', cookie instanceof Ref ? cookie : cookie])
    if (from !== null) out.push(['origin', from])
    return [...out, ...rest]
  })
  const body: fc.Arbitrary<BodySpec> = writes ? formBodyFor(route.body, hints) : fc.constant({ kind: 'none', contentType: null })
  return fc.record({ spec: base, headers, body }).map(({ spec, headers, body }) => ({ ...spec, headers, body }))
}

/** The device page's cookie: mostly a signed-in player's (Ref `device:cookie`), sometimes none or junk. */
const devicePageCookie: fc.Arbitrary<Ref | string | null> = fc.oneof(
  { weight: 20, arbitrary: fc.constant(new Ref('device:cookie')) },
  { weight: 3, arbitrary: fc.constant(null) },
  {
    weight: 2,
    arbitrary: fc.oneof(
      headerValue,
      fc.constantFrom('arena_device_page=', 'arena_device_page', 'arena_device_page=usr_0.1.2', `arena_device_page=usr_${'0'.repeat(32)}.9999999999999.${'f'.repeat(64)}`, `arena_device_page=${'A'.repeat(4000)}`),
    ),
  },
)

/** A hostile request for a device-page route: a form body, the page cookie and its CSRF token, an Origin. */
export function deviceRequestFor(route: RouteShape, hints: Hints, paramHints: (param: string, path: string) => fc.Arbitrary<Ref>): fc.Arbitrary<RequestSpec> {
  const base = requestFor({ ...route, body: undefined }, hints, paramHints)
  const writes = route.method !== 'GET' && route.method !== 'HEAD'
  const headers = fc.tuple(devicePageCookie, writes ? origin : fc.option(origin, { freq: 4, nil: null }), fc.array(oddHeader, { maxLength: 2 })).map(([cookie, from, rest]) => {
    const out: [string, Ref | string][] = []
    if (cookie !== null) out.push(['cookie', cookie])
    if (from !== null) out.push(['origin', from])
    return [...out, ...rest]
  })
  const body: fc.Arbitrary<BodySpec> = writes ? formBodyFor(route.body, hints, csrfFieldOf('device')) : fc.constant({ kind: 'none', contentType: null })
  return fc.record({ spec: base, headers, body }).map(({ spec, headers, body }) => ({ ...spec, headers, body }))
}
