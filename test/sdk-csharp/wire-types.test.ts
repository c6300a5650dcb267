// The C# SDK's drift check: every wire type of Arena.Sdk (a class with
// [JsonProperty] properties) is held to the server's OpenAPI document at the
// places its [Wire] attributes name. sdk/csharp/Tests~/Tools/WireShapes.cs,
// compiled with the SDK's sources and run under mono, prints each type's
// places and fields (JSON name, kind, nullable); this file resolves each
// place in the document (the path, method and status, or the request body,
// $refs followed, then the pointer) and compares: every C# field is in the
// schema with a compatible kind (a nested wire type by its own fields against
// the sub-schema), every field the server requires is in C#, a field the
// server may send as null (or, in an answer, leave out) is nullable in C#.
// A wire type without [Wire], a place the document does not have, or any
// mismatch fails, naming the type, the field and the place.
//
// It covers whatever wire types exist: a new one needs only its [Wire].
import { beforeAll, describe, expect, test } from 'bun:test'
import { req } from '../helpers/app'
import { createArenaApp } from '../helpers/arena'
import { compileCsharp, csharpMissing, csharpSources, csharpTest, CSHARP_ROOT, runMono } from '../helpers/csharp'
import { join } from 'node:path'

/** A C# type's kind, as WireShapes.cs prints it. */
interface CsKind {
  kind: 'string' | 'integer' | 'number' | 'boolean' | 'any' | 'array' | 'dictionary' | 'object' | 'unsupported'
  of?: CsKind
  /** An array's or dictionary's: whether an item can be null. */
  ofNullable?: boolean
  type?: string
}
interface CsField {
  kind: CsKind
  nullable: boolean
  property: string
}
interface CsType {
  wire: { at: string; pointer: string }[]
  fields: Record<string, CsField>
  generic: boolean
}
type Schema = Record<string, unknown>
interface OpenApi {
  paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: Schema }> }; responses?: Record<string, { content?: Record<string, { schema?: Schema }> }> }>>
  components: { schemas: Record<string, Schema> }
}

/**
 * Types with [JsonProperty] properties that are not on the wire by design, each
 * with why. (None today: the error envelope's ErrorDetail is on the wire, at
 * every route's 422.)
 */
const NOT_ON_THE_WIRE: Record<string, string> = {}

/** The schema a $ref names, followed until it is not one. */
function deref(schema: Schema, doc: OpenApi): Schema {
  let at = schema
  for (let hops = 0; typeof at.$ref === 'string'; hops++) {
    const name = (at.$ref as string).replace('#/components/schemas/', '')
    const target = doc.components.schemas[name]
    if (!target || hops > 20) throw new Error(`the document has no component ${at.$ref as string}`)
    at = target
  }
  return at
}

/** The schema without its null: `anyOf [X, null]`, `type: [x, "null"]`, `nullable: true`. */
function unwrap(schema: Schema, doc: OpenApi): { schema: Schema; nullable: boolean } {
  const at = deref(schema, doc)
  let nullable = at.nullable === true
  if (Array.isArray(at.anyOf)) {
    const members = (at.anyOf as Schema[]).map((member) => deref(member, doc))
    const rest = members.filter((member) => member.type !== 'null')
    nullable ||= rest.length < members.length
    if (rest.length === 1) {
      const inner = unwrap(rest[0]!, doc)
      return { schema: inner.schema, nullable: nullable || inner.nullable }
    }
    return { schema: { ...at, anyOf: rest }, nullable }
  }
  if (Array.isArray(at.type)) {
    const rest = (at.type as string[]).filter((type) => type !== 'null')
    nullable ||= rest.length < at.type.length
    if (rest.length === 1) return { schema: { ...at, type: rest[0] }, nullable }
  }
  return { schema: at, nullable }
}

type SchemaKind = 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object' | 'record' | 'any' | 'mixed'

function literalKind(value: unknown): SchemaKind {
  if (typeof value === 'string') return 'string'
  if (typeof value === 'boolean') return 'boolean'
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number'
  return 'mixed'
}

/** What a (null-free) schema holds. A union of literals is its literals' kind (a string for a status); integer-or-numeric-string is its number. */
function kindOf(schema: Schema, doc: OpenApi): SchemaKind {
  if ('const' in schema) return literalKind(schema.const)
  if (Array.isArray(schema.enum)) {
    const kinds = new Set((schema.enum as unknown[]).map(literalKind))
    return kinds.size === 1 ? [...kinds][0]! : kinds.size === 2 && kinds.has('integer') && kinds.has('number') ? 'number' : 'mixed'
  }
  if (Array.isArray(schema.anyOf)) {
    const members = (schema.anyOf as Schema[]).map((member) => unwrap(member, doc).schema)
    const numeric = members.find((m) => m.type === 'integer' || m.type === 'number')
    if (members.length === 2 && numeric && members.some((m) => m.type === 'string' && (m.format === 'integer' || m.format === 'numeric'))) return numeric.type as SchemaKind
    const kinds = new Set(members.map((member) => kindOf(member, doc)))
    if (kinds.size === 2 && kinds.has('integer') && kinds.has('number')) return 'number'
    return kinds.size === 1 ? [...kinds][0]! : 'mixed'
  }
  switch (schema.type) {
    case 'string':
    case 'integer':
    case 'number':
    case 'boolean':
    case 'array':
      return schema.type
    case 'object':
      if (schema.properties) return 'object'
      return 'record'
    case undefined:
      return 'any'
  }
  return 'mixed'
}

/** An object schema's fields; a union of objects as one object (a field is required when every member requires it). */
function objectFields(schema: Schema, doc: OpenApi): { properties: Record<string, Schema>; required: Set<string> } {
  if (Array.isArray(schema.anyOf)) {
    const members = (schema.anyOf as Schema[]).map((member) => objectFields(unwrap(member, doc).schema, doc))
    const properties: Record<string, Schema> = {}
    for (const member of members) for (const [name, field] of Object.entries(member.properties)) properties[name] ??= field
    const required = new Set(Object.keys(properties).filter((name) => members.every((member) => member.required.has(name))))
    return { properties, required }
  }
  return { properties: (schema.properties as Record<string, Schema> | undefined) ?? {}, required: new Set((schema.required as string[] | undefined) ?? []) }
}

/** The schema of a record's values, or undefined for any. */
function recordValues(schema: Schema): Schema | undefined {
  const pattern = schema.patternProperties as Record<string, Schema> | undefined
  if (pattern) return Object.values(pattern)[0]
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object') return schema.additionalProperties as Schema
  return undefined
}

/** Where `at` ("METHOD /path STATUS" or "METHOD /path body") and `pointer` lead in the document, or why nowhere. */
function resolvePlace(doc: OpenApi, at: string, pointer: string): { schema: Schema; answer: boolean } | string {
  const match = /^(GET|POST|PUT|PATCH|DELETE) (\/\S*) (body|\d{3})$/.exec(at)
  if (!match) return `"${at}" is not "METHOD /path STATUS" or "METHOD /path body"`
  const [, method, path, status] = match as unknown as [string, string, string, string]
  const route = doc.paths[path]?.[method.toLowerCase()]
  if (!route) return `the document has no ${method} ${path}`
  const content = status === 'body' ? route.requestBody?.content : route.responses?.[status]?.content
  if (status !== 'body' && !route.responses?.[status]) return `${method} ${path} has no ${status} answer in the document`
  let schema = content?.['application/json']?.schema
  if (!schema) return `${method} ${path} has no JSON ${status === 'body' ? 'request body' : `${status} answer body`} in the document`
  const steps = pointer === '' ? [] : (pointer.match(/[^.[\]]+|\[\]/g) ?? [])
  let walked = ''
  for (const step of steps) {
    const { schema: here } = unwrap(schema, doc)
    if (step === '[]') {
      if (here.type !== 'array') return `the schema at "${walked}" is not an array`
      schema = here.items as Schema
    } else {
      const field = objectFields(here, doc).properties[step]
      if (!field) return `the schema at "${walked}" has no field "${step}"`
      schema = field
    }
    walked += step === '[]' ? '[]' : walked === '' ? step : `.${step}`
  }
  return { schema, answer: status !== 'body' }
}

/** Every difference between the C# wire types and the document, each naming the type, the field and the place. */
function drift(types: Record<string, CsType>, doc: OpenApi): string[] {
  const problems: string[] = []
  for (const [name, type] of Object.entries(types)) {
    if (name in NOT_ON_THE_WIRE) continue
    if (type.generic) problems.push(`${name}: a generic wire type; make it a plain class per shape, each with its [Wire]`)
    if (type.wire.length === 0) problems.push(`${name}: has [JsonProperty] fields but no [Wire("METHOD /api/v1/... STATUS", "pointer")] saying where it is in the OpenAPI document (Runtime/Core/Wire.cs)`)
    for (const { at, pointer } of type.wire) {
      const place = `[Wire("${at}"${pointer ? `, "${pointer}"` : ''})]`
      const found = resolvePlace(doc, at, pointer)
      if (typeof found === 'string') problems.push(`${name} ${place}: ${found}`)
      else compareType(types, name, found.schema, doc, found.answer, `at ${place}`, problems, new Set())
    }
  }
  for (const name of Object.keys(NOT_ON_THE_WIRE)) if (!(name in types)) problems.push(`${name}: exempt in NOT_ON_THE_WIRE but not a wire type of the SDK (drop the entry)`)
  return problems
}

function compareType(types: Record<string, CsType>, name: string, schema: Schema, doc: OpenApi, answer: boolean, where: string, problems: string[], seen: Set<string>): void {
  const type = types[name]
  if (!type) return void problems.push(`${name} ${where}: used as a wire object but has no [JsonProperty] fields`)
  const { schema: object } = unwrap(schema, doc)
  const kind = kindOf(object, doc)
  if (kind !== 'object') return void problems.push(`${name} ${where}: the document has ${kind} there, not an object`)
  const key = `${name} ${JSON.stringify(object)}`
  if (seen.has(key)) return
  seen.add(key)
  const { properties, required } = objectFields(object, doc)
  for (const [field, cs] of Object.entries(type.fields)) {
    const label = `${name}.${field} ${where}`
    const server = properties[field]
    if (!server) {
      problems.push(`${label}: in C# (${cs.property}), not on the server`)
      continue
    }
    const { schema: inner, nullable } = unwrap(server, doc)
    if (nullable && !cs.nullable) problems.push(`${label}: the server may send null, C# ${cs.property} cannot hold it (use a class or T?)`)
    if (answer && !required.has(field) && !cs.nullable) problems.push(`${label}: optional on the server, C# ${cs.property} cannot tell it missing (use a class or T?)`)
    compareKind(types, cs.kind, inner, doc, answer, `${name}.${field}`, where, problems, seen)
  }
  for (const field of required) if (!(field in type.fields)) problems.push(`${name}.${field} ${where}: required on the server, not in C#`)
}

function describeKind(cs: CsKind): string {
  if (cs.kind === 'array' || cs.kind === 'dictionary') return `${cs.kind} of ${describeKind(cs.of!)}`
  if (cs.kind === 'object' || cs.kind === 'unsupported') return cs.type!
  return cs.kind
}

/** `path` names the field (Type.field, then [] for items, {} for values); `where` the place. */
function compareKind(types: Record<string, CsType>, cs: CsKind, schema: Schema, doc: OpenApi, answer: boolean, path: string, where: string, problems: string[], seen: Set<string>): void {
  if (cs.kind === 'any') return
  const label = `${path} ${where}`
  if (cs.kind === 'unsupported') return void problems.push(`${label}: C# type ${cs.type} is no wire kind (dates and literal unions are strings, amounts are strings, no enums)`)
  const kind = kindOf(schema, doc)
  const wrong = () => problems.push(`${label}: the server has ${kind}, C# has ${describeKind(cs)}`)
  switch (cs.kind) {
    case 'string':
    case 'boolean':
    case 'integer':
      if (kind !== cs.kind) wrong()
      return
    case 'number':
      if (kind !== 'number' && kind !== 'integer') wrong()
      return
    case 'array': {
      if (kind !== 'array') return void wrong()
      const items = unwrap(schema.items as Schema, doc)
      if (items.nullable && !cs.ofNullable) problems.push(`${path}[] ${where}: the server may send null items, C# items cannot hold null`)
      return compareKind(types, cs.of!, items.schema, doc, answer, `${path}[]`, where, problems, seen)
    }
    case 'dictionary': {
      if (kind !== 'record') return void wrong()
      const values = recordValues(schema)
      if (!values) return
      const inner = unwrap(values, doc)
      if (inner.nullable && !cs.ofNullable) problems.push(`${path}{} ${where}: the server may send null values, C# values cannot hold null`)
      return compareKind(types, cs.of!, inner.schema, doc, answer, `${path}{}`, where, problems, seen)
    }
    case 'object':
      if (kind !== 'object') return void wrong()
      return compareType(types, cs.type!, schema, doc, answer, `${where}, in ${path}`, problems, seen)
  }
}

describe('the C# wire types against the OpenAPI document', () => {
  let types: Record<string, CsType>
  let doc: OpenApi
  beforeAll(async () => {
    // The OpenID Connect routes are described only with a provider configured; nothing is fetched from it here.
    const ctx = await createArenaApp({ ARENA_OIDC_PROVIDERS: JSON.stringify([{ name: 'example', issuer: 'https://idp.example.invalid', clientId: 'arena' }]) })
    try {
      doc = (await (await ctx.handle(req('/openapi/json'))).json()) as OpenApi
    } finally {
      await ctx.close()
    }
    if (csharpMissing() !== undefined) return
    const exe = await compileCsharp({ name: 'WireShapes', target: 'exe', sources: [...csharpSources('Runtime'), join(CSHARP_ROOT, 'Tests~', 'Tools', 'WireShapes.cs')] })
    const result = await runMono(exe)
    if (result.code !== 0) throw new Error(`WireShapes failed (${result.code}):\n${result.stdout}${result.stderr}`)
    types = JSON.parse(result.stdout) as Record<string, CsType>
  }, 240_000)

  csharpTest('every wire type says where it is, and matches the document there', () => {
    // The ones on main at the time of writing are among them (the dump is not empty by accident).
    expect(Object.keys(types)).toEqual(expect.arrayContaining(['User', 'TokenResponse', 'SignInResponse', 'LoginBody', 'RefreshBody', 'ErrorDetail']))
    expect(drift(types, doc)).toEqual([])
  })

  csharpTest('the comparison sees a field renamed, a null the C# cannot hold, a type without [Wire], a place the document lacks', () => {
    const token = types.TokenResponse!
    const { expiresIn, ...rest } = token.fields
    const renamed = { ...types, TokenResponse: { ...token, fields: { ...rest, expiresAt: expiresIn! } } }
    // Both findings at every place TokenResponse says it is, and nothing else.
    expect(token.wire.length).toBeGreaterThan(0)
    expect(drift(renamed, doc).sort()).toEqual(
      token.wire
        .flatMap(({ at }) => [
          `TokenResponse.expiresAt at [Wire("${at}")]: in C# (ExpiresIn), not on the server`,
          `TokenResponse.expiresIn at [Wire("${at}")]: required on the server, not in C#`,
        ])
        .sort(),
    )
    // A nested type is compared where it is reached: User.email may be null on the server.
    const user = types.User!
    const email = { kind: { kind: 'integer' }, nullable: false, property: 'Email' } as CsField
    const strictUser = { ...types, User: { ...user, wire: [], fields: { ...user.fields, email } } }
    const problems = drift(strictUser, doc)
    expect(problems).toContain('User: has [JsonProperty] fields but no [Wire("METHOD /api/v1/... STATUS", "pointer")] saying where it is in the OpenAPI document (Runtime/Core/Wire.cs)')
    expect(problems).toContain('User.email at [Wire("POST /api/v1/user/login 200")], in TokenResponse.user: the server may send null, C# Email cannot hold it (use a class or T?)')
    expect(problems).toContain('User.email at [Wire("POST /api/v1/user/login 200")], in TokenResponse.user: the server has string, C# has integer')
    const misplaced = { ...types, RefreshBody: { ...types.RefreshBody!, wire: [{ at: 'POST /api/v1/auth/nowhere body', pointer: '' }, { at: 'GET /api/v1/me 200', pointer: 'user.nothing' }] } }
    expect(drift(misplaced, doc)).toEqual([
      'RefreshBody [Wire("POST /api/v1/auth/nowhere body")]: the document has no POST /api/v1/auth/nowhere',
      'RefreshBody [Wire("GET /api/v1/me 200", "user.nothing")]: the schema at "user" has no field "nothing"',
    ])
    // On a document of its own: a union of string literals is a string; an int the server may leave out of an answer
    // cannot tell 0 from missing; a dictionary's values are compared.
    const small = {
      components: { schemas: {} },
      paths: { '/x': { get: { responses: { '200': { content: { 'application/json': { schema: {
        type: 'object',
        required: ['status'],
        properties: { status: { anyOf: [{ const: 'A', type: 'string' }, { const: 'B', type: 'string' }] }, count: { type: 'integer' }, tags: { type: 'object', patternProperties: { '^.*$': { type: 'number' } } } },
      } } } } } } } },
    } as unknown as OpenApi
    const field = (kind: CsKind, nullable: boolean, property: string): CsField => ({ kind, nullable, property })
    const x: CsType = { generic: false, wire: [{ at: 'GET /x 200', pointer: '' }], fields: { status: field({ kind: 'string' }, true, 'Status'), count: field({ kind: 'integer' }, false, 'Count'), tags: field({ kind: 'dictionary', of: { kind: 'string' }, ofNullable: true }, true, 'Tags') } }
    expect(drift({ X: x }, small)).toEqual([
      'X.count at [Wire("GET /x 200")]: optional on the server, C# Count cannot tell it missing (use a class or T?)',
      'X.tags{} at [Wire("GET /x 200")]: the server has number, C# has string',
    ])
    expect(drift({ X: { ...x, fields: { ...x.fields, count: field({ kind: 'integer' }, true, 'Count'), tags: field({ kind: 'dictionary', of: { kind: 'number' }, ofNullable: false }, true, 'Tags') } } }, small)).toEqual([])
  })
})
