// The C# SDK's event constants (sdk/csharp/Runtime/Wire/Events.cs: EventTopics,
// and EventTypes with each type's data fields in its doc comment) held to the
// server's event catalogue (src/modules/events/catalogue.ts): a type added,
// renamed or dropped on the server, a topic changed, or a data field renamed
// fails here. Event data is not in the OpenAPI document, so the [Wire] drift
// check cannot see it; this reads the C# source, which is what a game reads.
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { EVENT_TOPICS, EVENT_TYPES } from '../../src/modules/events/catalogue'
import { CSHARP_ROOT } from '../helpers/csharp'
import { ROOT } from '../helpers/process'
import { declaredShape, type Shape } from '../helpers/wire-shapes'

const SOURCE = readFileSync(join(CSHARP_ROOT, 'Runtime', 'Wire', 'Events.cs'), 'utf8')

/** The body of `public static class <name> { ... }` (no nested braces in these classes). */
function classBody(source: string, name: string): string {
  const start = source.indexOf(`public static class ${name}`)
  if (start < 0) throw new Error(`Events.cs has no class ${name}`)
  const open = source.indexOf('{', start)
  return source.slice(open + 1, source.indexOf('\n    }', open))
}

interface Constant {
  value: string
  /** The field names a `data: a, b (x, y), c (optional).` doc comment lists, or undefined without one. */
  data?: string[]
}

function constants(body: string): Constant[] {
  const out: Constant[] = []
  let summary = ''
  for (const line of body.split('\n')) {
    const doc = /^\s*\/\/\/\s?(.*)$/.exec(line)
    if (doc) {
      summary += ' ' + doc[1]
      continue
    }
    const constant = /public const string \w+ = "([^"]+)";/.exec(line)
    if (constant) {
      const text = summary.replace(/<\/?summary>/g, '')
      const data = /data: ([^]*?)\.\s*$/.exec(text.trim())?.[1]
      out.push({ value: constant[1]!, ...(data !== undefined ? { data: fieldNames(data) } : {}) })
    }
    summary = ''
  }
  return out
}

/** `tournamentId, matchId, reason (mutual_draw, server_draw)` → the names, parentheses dropped. */
function fieldNames(list: string): string[] {
  let flat = list
  while (/\([^()]*\)/.test(flat)) flat = flat.replace(/\([^()]*\)/g, '')
  return flat
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '')
    .sort()
}

type Field = Extract<Shape, { kind: 'object' }>['fields'][string]
const catalogue = declaredShape(join(ROOT, 'src', 'modules', 'events', 'catalogue.ts'), 'EventCatalogue') as Extract<Shape, { kind: 'object' }>

function dataFields(type: string): string[] {
  const entry = (catalogue.fields[type]!.shape as Extract<Shape, { kind: 'object' }>).fields
  const data = entry.data as Field
  return data.shape.kind === 'object' ? Object.keys(data.shape.fields).sort() : []
}

/** Every way the C# source disagrees with the catalogue. */
function drift(source: string): string[] {
  const problems: string[] = []
  const topics = constants(classBody(source, 'EventTopics')).map((t) => t.value)
  for (const topic of EVENT_TOPICS) if (!topics.includes(topic)) problems.push(`EventTopics: ${topic} is on the server, not in C#`)
  for (const topic of topics) if (!(EVENT_TOPICS as readonly string[]).includes(topic)) problems.push(`EventTopics: ${topic} is in C#, not on the server`)
  const types = constants(classBody(source, 'EventTypes'))
  const values = types.map((t) => t.value)
  for (const type of Object.keys(EVENT_TYPES)) if (!values.includes(type)) problems.push(`EventTypes: ${type} is on the server, not in C#`)
  for (const type of types) {
    if (!(type.value in EVENT_TYPES)) {
      problems.push(`EventTypes: ${type.value} is in C#, not on the server`)
      continue
    }
    const server = dataFields(type.value)
    if (JSON.stringify(type.data ?? []) !== JSON.stringify(server)) problems.push(`EventTypes: ${type.value}: C# documents data ${JSON.stringify(type.data ?? [])}, the server sends ${JSON.stringify(server)}`)
  }
  return problems
}

describe('the C# event constants against the server catalogue', () => {
  test('exactly the server topics and types, each type documenting its data fields', () => {
    expect(constants(classBody(SOURCE, 'EventTypes')).filter((t) => (t.data ?? []).length > 0).length).toBeGreaterThan(30)
    expect(drift(SOURCE)).toEqual([])
  })

  test('the check sees a type renamed, a data field renamed and a topic dropped', () => {
    const changed = SOURCE.replace('"match.decided"', '"match.settled"')
      .replace('data: challengeId, gameId, matchId.', 'data: challengeId, gameId, match.')
      .replace('public const string Wallet = "wallet";', '')
    expect(drift(changed).sort()).toEqual(
      [
        'EventTopics: wallet is on the server, not in C#',
        'EventTypes: match.decided is on the server, not in C#',
        'EventTypes: match.settled is in C#, not on the server',
        'EventTypes: challenge.accepted: C# documents data ["challengeId","gameId","match"], the server sends ["challengeId","gameId","matchId"]',
      ].sort(),
    )
  })
})
