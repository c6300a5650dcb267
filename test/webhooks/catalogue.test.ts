// The webhook catalogue (src/modules/webhooks/catalogue.ts) is the one list of
// webhook types: its run-time list (WEBHOOK_TYPES, what an endpoint may
// subscribe to) is its declaration, and docs/webhooks.md "Event types"
// documents every type, once, with a sentence and an example body
// `{ type, timestamp, data }` whose data has exactly the catalogue's fields,
// each of its kind. The SDK's mirror is checked by test/sdk/webhook-types.*.
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { WEBHOOK_TYPES } from '../../src/modules/webhooks/catalogue'
import { ROOT } from '../helpers/process'
import { declaredShape, type Shape } from '../helpers/wire-shapes'

type ObjectShape = Extract<Shape, { kind: 'object' }>

function objectShape(shape: Shape | undefined, what: string): ObjectShape {
  if (shape?.kind !== 'object') throw new Error(`${what}: not an object type`)
  return shape
}

const CATALOGUE = objectShape(declaredShape(join(ROOT, 'src', 'modules', 'webhooks', 'catalogue.ts'), 'WebhookCatalogue'), 'WebhookCatalogue')
const DOCS = readFileSync(join(ROOT, 'docs', 'webhooks.md'), 'utf8')

/** Where `value` does not have `shape`, one line each, named by its path. */
function misfits(value: unknown, shape: Shape, path: string): string[] {
  switch (shape.kind) {
    case 'string':
    case 'number':
    case 'boolean':
      return typeof value === shape.kind ? [] : [`${path}: ${JSON.stringify(value)} is not a ${shape.kind}`]
    case 'literals':
      return shape.values.includes(value as string) ? [] : [`${path}: ${JSON.stringify(value)} is not one of ${shape.values.join(', ')}`]
    case 'nullable':
      return value === null ? [] : misfits(value, shape.of, path)
    case 'array':
      return Array.isArray(value) ? value.flatMap((item, i) => misfits(item, shape.of, `${path}[${i}]`)) : [`${path}: not an array`]
    case 'object': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return [`${path}: not an object`]
      const given = value as Record<string, unknown>
      const extra = Object.keys(given).filter((name) => !(name in shape.fields)).map((name) => `${path}.${name}: not in the catalogue`)
      const fields = Object.entries(shape.fields).flatMap(([name, field]) =>
        name in given ? misfits(given[name], field.shape, `${path}.${name}`) : field.optional ? [] : [`${path}.${name}: missing`],
      )
      return [...extra, ...fields]
    }
    default:
      return []
  }
}

interface Documented {
  type: string
  sentence: string
  body: unknown
}

/** docs/webhooks.md "Event types": each `### \`type\`` with its prose and the JSON block after it. */
function documented(markdown: string): Documented[] {
  const start = markdown.search(/^## Event types$/m)
  if (start < 0) throw new Error('docs/webhooks.md has no "## Event types" section')
  const rest = markdown.slice(start)
  const next = rest.slice(1).search(/^## /m)
  const section = next < 0 ? rest : rest.slice(0, next + 1)
  return [...section.matchAll(/^### `([^`]+)`\n([\s\S]*?)```json\n([\s\S]*?)```/gm)].map((m) => ({ type: m[1]!, sentence: m[2]!.trim(), body: JSON.parse(m[3]!) as unknown }))
}

/** What is wrong with the documented types against the catalogue, one line each. */
function problems(docs: Documented[]): string[] {
  const out: string[] = []
  const types = docs.map((d) => d.type)
  for (const type of Object.keys(CATALOGUE.fields)) if (!types.includes(type)) out.push(`${type}: not documented`)
  for (const doc of docs) {
    const entry = CATALOGUE.fields[doc.type]
    if (!entry) {
      out.push(`${doc.type}: documented, not in the catalogue`)
      continue
    }
    if (types.indexOf(doc.type) !== types.lastIndexOf(doc.type)) out.push(`${doc.type}: documented twice`)
    if (doc.sentence.length === 0) out.push(`${doc.type}: no sentence`)
    const body = doc.body as Record<string, unknown>
    if (JSON.stringify(Object.keys(body)) !== JSON.stringify(['type', 'timestamp', 'data'])) out.push(`${doc.type}: the body is not { type, timestamp, data }`)
    if (body.type !== doc.type) out.push(`${doc.type}: the body's type is ${String(body.type)}`)
    if (typeof body.timestamp !== 'string' || new Date(body.timestamp).toISOString() !== body.timestamp) out.push(`${doc.type}: the timestamp is not ISO 8601`)
    out.push(...misfits(body.data, entry.shape, `${doc.type}.data`))
  }
  return out
}

describe('the webhook catalogue', () => {
  test('its run-time list is its declaration, in order', () => {
    expect([...WEBHOOK_TYPES]).toEqual(Object.keys(CATALOGUE.fields) as (typeof WEBHOOK_TYPES)[number][])
  })

  test('docs/webhooks.md documents every type once, with a sentence and an example body of exactly its data', () => {
    const docs = documented(DOCS)
    expect(docs.map((d) => d.type)).toEqual([...WEBHOOK_TYPES])
    expect(problems(docs)).toEqual([])
  })

  test('the check sees a difference: a type missing, a field extra or missing, a value of another kind', () => {
    const docs = documented(DOCS)
    const decided = docs.find((d) => d.type === 'match.decided')!
    const body = decided.body as { data: Record<string, unknown> }
    const withData = (data: Record<string, unknown>) => docs.map((d) => (d === decided ? { ...d, body: { ...body, data } } : d))
    const { reason: _, ...withoutReason } = body.data
    expect(problems(docs.filter((d) => d !== decided))).toEqual(['match.decided: not documented'])
    expect(problems(withData({ ...body.data, extra: 1 }))).toEqual(['match.decided.data.extra: not in the catalogue'])
    expect(problems(withData(withoutReason))).toEqual(['match.decided.data.reason: missing'])
    expect(problems(withData({ ...body.data, reason: 'luck', players: [{ participantId: 1, userId: 'u' }] }))).toEqual([
      'match.decided.data.players[0].participantId: 1 is not a string',
      'match.decided.data.reason: "luck" is not one of bye, claims_agree, disqualified, no_show, operator_resolved, server_result',
    ])
  })
})
