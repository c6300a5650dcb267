// The wire shapes both sides of a drift check are reduced to: the server's
// TypeBox models read as the JSON Schema they are, and TypeScript declarations
// (the SDK's, the event catalogue's) read with the TypeScript parser, not
// type-checked. Used by test/sdk/wire-types.test.ts, test/sdk/event-types.test.ts
// and test/events/catalogue.test.ts.
import { readFileSync } from 'node:fs'
import ts from 'typescript'

/** What both sides are reduced to: the wire shape, not the validation rules (lengths, patterns). */
export type Shape =
  | { kind: 'string' | 'number' | 'boolean' | 'unknown' | 'record' }
  | { kind: 'literals'; values: (string | number | boolean)[] }
  | { kind: 'nullable'; of: Shape }
  | { kind: 'array'; of: Shape }
  | { kind: 'object'; fields: Record<string, { optional: boolean; shape: Shape }> }

// ---- the server side: TypeBox schemas as JSON Schema -------------------------

export type Json = Record<string, unknown>

/**
 * A schema's shape. `components` resolves `$ref`s: a schema read from the
 * OpenAPI document, where models are components and a union of literals is an
 * `enum`, has the same shape as the model it was made of.
 */
export function fromSchema(schema: Json, components: Record<string, Json> = {}): Shape {
  const at = (inner: Json) => fromSchema(inner, components)
  if (typeof schema.$ref === 'string') {
    const target = components[schema.$ref.replace('#/components/schemas/', '')]
    if (!target) throw new Error(`no component for ${schema.$ref}`)
    return at(target)
  }
  if ('const' in schema) return { kind: 'literals', values: [schema.const as string] }
  if (Array.isArray(schema.enum)) return literals((schema.enum as (string | number | boolean)[]).map((value) => ({ kind: 'literals', values: [value] })))
  const anyOf = schema.anyOf as Json[] | undefined
  if (anyOf) {
    const rest = anyOf.filter((s) => s.type !== 'null')
    if (rest.length < anyOf.length) return { kind: 'nullable', of: rest.length === 1 ? at(rest[0]!) : at({ anyOf: rest }) }
    // Elysia's t.Integer / t.Numeric: a number, or a string it converts to one.
    if (anyOf.length === 2 && anyOf.some((s) => s.type === 'string' && (s.format === 'integer' || s.format === 'numeric')) && anyOf.some((s) => s.type === 'integer' || s.type === 'number')) {
      return { kind: 'number' }
    }
    return literals(anyOf.map(at))
  }
  // The OpenAPI document writes a nullable scalar as `type: [scalar, 'null']`.
  if (Array.isArray(schema.type)) {
    const rest = (schema.type as string[]).filter((type) => type !== 'null')
    if (rest.length === 1 && rest.length < schema.type.length) return { kind: 'nullable', of: at({ ...schema, type: rest[0] }) }
  }
  switch (schema.type) {
    case 'string':
      return { kind: 'string' }
    case 'integer':
    case 'number':
      return { kind: 'number' }
    case 'boolean':
      return { kind: 'boolean' }
    case 'array':
      return { kind: 'array', of: at(schema.items as Json) }
    case 'object': {
      if (schema.patternProperties) return { kind: 'record' }
      const required = new Set((schema.required as string[] | undefined) ?? [])
      const fields: Record<string, { optional: boolean; shape: Shape }> = {}
      for (const [name, field] of Object.entries((schema.properties as Record<string, Json>) ?? {})) {
        fields[name] = { optional: !required.has(name), shape: at(field) }
      }
      return { kind: 'object', fields }
    }
    case undefined:
      return { kind: 'unknown' }
  }
  throw new Error(`no shape for the schema ${JSON.stringify(schema)}`)
}

export function literals(members: Shape[]): Shape {
  const values = members.flatMap((m) => {
    if (m.kind !== 'literals') throw new Error(`a union of ${m.kind}: not a shape this check knows`)
    return m.values
  })
  return { kind: 'literals', values: values.map(String).sort() }
}

// ---- the SDK side: its declarations, parsed (not type-checked) --------------

export function declarations(...files: string[]): Map<string, ts.Node> {
  const found = new Map<string, ts.Node>()
  for (const file of files) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true)
    for (const statement of source.statements) {
      if (ts.isInterfaceDeclaration(statement)) found.set(statement.name.text, statement)
      if (ts.isTypeAliasDeclaration(statement)) found.set(statement.name.text, statement.type)
    }
  }
  return found
}

/** The shape of one declaration of a file, by name. */
export function declaredShape(file: string, name: string): Shape {
  const declared = declarations(file)
  const node = declared.get(name)
  if (!node) throw new Error(`${file} declares no ${name}`)
  return fromType(node, declared)
}

export function fromType(node: ts.Node, declared: Map<string, ts.Node>): Shape {
  if (ts.isInterfaceDeclaration(node) || ts.isTypeLiteralNode(node)) {
    const fields: Record<string, { optional: boolean; shape: Shape }> = {}
    for (const member of node.members) {
      if (!ts.isPropertySignature(member) || !member.type) throw new Error(`${member.getText()}: only plain properties are compared`)
      // A quoted name (an event type, 'wallet.credited') is the string it quotes.
      const name = ts.isStringLiteral(member.name) ? member.name.text : member.name.getText()
      fields[name] = { optional: member.questionToken !== undefined, shape: fromType(member.type, declared) }
    }
    return { kind: 'object', fields }
  }
  if (ts.isParenthesizedTypeNode(node)) return fromType(node.type, declared)
  if (ts.isArrayTypeNode(node)) return { kind: 'array', of: fromType(node.elementType, declared) }
  if (ts.isTypeReferenceNode(node)) {
    const name = node.typeName.getText()
    if (name === 'Record') return { kind: 'record' }
    const target = declared.get(name)
    if (!target) throw new Error(`${name}: not declared in the SDK's type files`)
    return fromType(target, declared)
  }
  if (ts.isLiteralTypeNode(node)) {
    if (node.literal.kind === ts.SyntaxKind.NullKeyword) throw new Error('null outside a union')
    if (node.literal.kind === ts.SyntaxKind.TrueKeyword) return { kind: 'literals', values: [true] }
    if (node.literal.kind === ts.SyntaxKind.FalseKeyword) return { kind: 'literals', values: [false] }
    if (ts.isStringLiteral(node.literal)) return { kind: 'literals', values: [node.literal.text] }
    if (ts.isNumericLiteral(node.literal)) return { kind: 'literals', values: [Number(node.literal.text)] }
  }
  if (ts.isUnionTypeNode(node)) {
    const isNull = (t: ts.TypeNode) => ts.isLiteralTypeNode(t) && t.literal.kind === ts.SyntaxKind.NullKeyword
    const rest = node.types.filter((t) => !isNull(t))
    const of = rest.length === 1 ? fromType(rest[0]!, declared) : union(rest.map((t) => fromType(t, declared)))
    return rest.length < node.types.length ? { kind: 'nullable', of } : of
  }
  switch (node.kind) {
    case ts.SyntaxKind.StringKeyword:
      return { kind: 'string' }
    case ts.SyntaxKind.NumberKeyword:
      return { kind: 'number' }
    case ts.SyntaxKind.BooleanKeyword:
      return { kind: 'boolean' }
    case ts.SyntaxKind.UnknownKeyword:
      return { kind: 'unknown' }
  }
  throw new Error(`${node.getText()}: not a shape this check knows`)
}

/**
 * A union of objects (the SDK's Claim) as the one object the server declares:
 * every field of any member, optional unless every member requires it, its
 * literals merged.
 */
export function union(members: Shape[]): Shape {
  if (members.every((m) => m.kind === 'literals')) return literals(members)
  if (!members.every((m) => m.kind === 'object')) throw new Error('a union of objects and other types: not a shape this check knows')
  const objects = members as Extract<Shape, { kind: 'object' }>[]
  const fields: Record<string, { optional: boolean; shape: Shape }> = {}
  for (const name of new Set(objects.flatMap((o) => Object.keys(o.fields)))) {
    const present = objects.map((o) => o.fields[name]).filter((f) => f !== undefined)
    const shapes = present.map((f) => f.shape)
    const shape = shapes.every((s) => s.kind === 'literals') ? literals(shapes) : shapes[0]!
    const disagree = shape.kind === 'literals' ? [] : shapes.flatMap((other) => differences(shape, other, name))
    if (disagree.length > 0) throw new Error(`the members of a union disagree: ${disagree.join('; ')}`)
    fields[name] = { optional: present.length < objects.length || present.some((f) => f.optional), shape }
  }
  return { kind: 'object', fields }
}

/** What differs, one line per field, named by its path. */
export function differences(server: Shape, sdk: Shape, path: string): string[] {
  if (server.kind !== sdk.kind) return [`${path}: ${server.kind} on the server, ${sdk.kind} in the SDK`]
  if (server.kind === 'literals' && sdk.kind === 'literals') {
    const a = server.values.map(String).sort()
    const b = sdk.values.map(String).sort()
    return a.join('|') === b.join('|') ? [] : [`${path}: ${a.join(' | ')} on the server, ${b.join(' | ')} in the SDK`]
  }
  if ((server.kind === 'nullable' || server.kind === 'array') && (sdk.kind === 'nullable' || sdk.kind === 'array')) {
    return differences(server.of, sdk.of, server.kind === 'array' ? `${path}[]` : path)
  }
  if (server.kind === 'object' && sdk.kind === 'object') {
    const found: string[] = []
    for (const name of new Set([...Object.keys(server.fields), ...Object.keys(sdk.fields)])) {
      const a = server.fields[name]
      const b = sdk.fields[name]
      if (!b) found.push(`${path}.${name}: on the server, not in the SDK`)
      else if (!a) found.push(`${path}.${name}: in the SDK, not on the server`)
      else {
        if (a.optional !== b.optional) found.push(`${path}.${name}: ${a.optional ? 'optional' : 'required'} on the server, ${b.optional ? 'optional' : 'required'} in the SDK`)
        found.push(...differences(a.shape, b.shape, `${path}.${name}`))
      }
    }
    return found
  }
  return []
}

