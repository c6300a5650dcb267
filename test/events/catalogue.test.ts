// The event catalogue (src/modules/events/catalogue.ts) is the one list of
// event types: its run-time list is its declaration, docs/api.md "Event types"
// documents it row for row, docs/api.md and the README name every topic where
// they list them, and the server appends no event type it does not
// list nor lists one it never appends. The compile-time half (the outbox takes
// only catalogued events) is catalogue.check.ts; the SDK's mirror of the
// catalogue is checked by test/sdk/event-types.*.
import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { EVENT_TOPICS, EVENT_TYPES } from '../../src/modules/events/catalogue'
import { ROOT } from '../helpers/process'
import { declaredShape, type Shape } from '../helpers/wire-shapes'

const CATALOGUE_FILE = join(ROOT, 'src', 'modules', 'events', 'catalogue.ts')

interface Entry {
  type: string
  topic: string
  /** The data as docs/api.md writes it: `{ a, b?, c: "value" }`. */
  data: string
}

type ObjectShape = Extract<Shape, { kind: 'object' }>

function objectShape(shape: Shape | undefined, what: string): ObjectShape {
  if (shape?.kind !== 'object') throw new Error(`${what}: not an object type`)
  return shape
}

/** A data shape as the docs write it: field names in order, `?` when optional, `: "value"` when it is always one value. */
function render(data: ObjectShape): string {
  const fields = Object.entries(data.fields).map(([name, field]) => {
    const only = field.shape.kind === 'literals' && field.shape.values.length === 1 ? `: ${JSON.stringify(field.shape.values[0])}` : ''
    return `${name}${field.optional ? '?' : ''}${only}`
  })
  return `{ ${fields.join(', ')} }`
}

function entries(catalogue: ObjectShape): Entry[] {
  return Object.entries(catalogue.fields).map(([type, { shape }]) => {
    const entry = objectShape(shape, type)
    const topic = entry.fields.topic?.shape
    if (topic?.kind !== 'literals' || topic.values.length !== 1) throw new Error(`${type}: its topic is not one literal`)
    return { type, topic: String(topic.values[0]), data: render(objectShape(entry.fields.data?.shape, `${type}.data`)) }
  })
}

/** The rows of docs/api.md "Event types", each with the topic of the table it is in. */
function documented(markdown: string): Entry[] {
  const start = markdown.indexOf('\n## Event types\n')
  if (start < 0) throw new Error('docs/api.md has no "Event types" section')
  const rest = markdown.slice(start + 1)
  const end = rest.slice(1).search(/\n#{1,3} /)
  const section = end < 0 ? rest : rest.slice(0, end + 1)
  const rows: Entry[] = []
  let topic: string | undefined
  for (const line of section.split('\n')) {
    const heading = /^\*\*Topic `([a-z]+)`\*\*/.exec(line)
    if (heading) topic = heading[1]
    const row = /^\| `([^`]+)` \| `([^`]+)` \|/.exec(line)
    if (row) {
      if (!topic) throw new Error(`${row[1]}: a row before any topic`)
      rows.push({ type: row[1]!, topic, data: row[2]! })
    }
  }
  return rows
}

const byType = (a: Entry, b: Entry) => a.type.localeCompare(b.type)

/** Every .ts file under src. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name)
    if (d.isDirectory()) return sources(path)
    return d.name.endsWith('.ts') ? [path] : []
  })
}

const catalogue = entries(objectShape(declaredShape(CATALOGUE_FILE, 'EventCatalogue'), 'EventCatalogue'))

describe('the event catalogue', () => {
  test('its run-time list is its declaration, and every topic is one of the plane’s', () => {
    expect(Object.entries(EVENT_TYPES).map(([type, topic]): { type: string; topic: string } => ({ type, topic }))).toEqual(catalogue.map(({ type, topic }) => ({ type, topic })))
    expect(catalogue.filter((e) => !(EVENT_TOPICS as readonly string[]).includes(e.topic))).toEqual([])
    expect(new Set(catalogue.map((e) => e.type)).size).toBe(catalogue.length)
  })

  test('docs/api.md "Event types" lists every type, under its topic, with its data', () => {
    const docs = documented(readFileSync(join(ROOT, 'docs', 'api.md'), 'utf8'))
    expect(docs.length).toBeGreaterThan(0)
    expect([...docs].sort(byType)).toEqual([...catalogue].sort(byType))
  })

  test('docs/api.md and the README name every topic where they list them, and no other', () => {
    const topics = [...EVENT_TOPICS].sort()
    const api = readFileSync(join(ROOT, 'docs', 'api.md'), 'utf8')
    // GET /api/v1/events's `topics` row: the backticked names after "comma list of".
    const row = /^\| `topics` \| optional: a comma list of ([^|]+)\|/m.exec(api)
    expect(row).not.toBeNull()
    expect([...row![1]!.matchAll(/`([a-z]+)`/g)].map((m) => m[1]).sort()).toEqual(topics)
    // "Event types" has a table per topic.
    expect([...api.matchAll(/^\*\*Topic `([a-z]+)`\*\*/gm)].map((m) => m[1]).sort()).toEqual(topics)
    // The README's event-plane line (`topics=a,b,...`) and its SDK example subscribing to every topic.
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    const query = [...readme.matchAll(/[?&]topics=([a-z,]+)/g)].map((m) => m[1]!.split(',').sort())
    expect(query.length).toBeGreaterThan(0)
    for (const listed of query) expect(listed).toEqual(topics)
    const subscribed = [...readme.matchAll(/events\.subscribe\(\[([^\]]*)\]/g)].map((m) => [...m[1]!.matchAll(/'([a-z]+)'/g)].map((t) => t[1]!).sort())
    expect(subscribed.length).toBeGreaterThan(0)
    for (const listed of subscribed) expect(listed).toEqual(topics)
  })

  test('every event type named in src is catalogued, and every catalogued type is appended somewhere', () => {
    // Quoted names in the event types' namespaces (`'match.replay'`), wherever
    // they are: in an append, or passed to a helper that appends. An audit
    // record's action (`action: 'match.resolve'`) shares the namespaces but
    // names what an operator did, not an event: it is not counted.
    const namespaces = [...new Set(catalogue.map((e) => e.type.split('.')[0]!))]
    const name = new RegExp(`(?<!action: )(['"])((?:${namespaces.join('|')})\\.[a-z_]+)\\1`, 'g')
    const known = new Set(catalogue.map((e) => e.type))
    const named = new Set<string>()
    const unknown: string[] = []
    for (const file of sources(join(ROOT, 'src'))) {
      if (file === CATALOGUE_FILE) continue
      for (const match of readFileSync(file, 'utf8').matchAll(name)) {
        named.add(match[2]!)
        if (!known.has(match[2]!)) unknown.push(`${relative(ROOT, file)}: ${match[2]}`)
      }
    }
    expect(unknown).toEqual([])
    expect([...known].filter((type) => !named.has(type))).toEqual([])
  })

  test('the docs rendering shows optional fields and fixed values', () => {
    const decided = catalogue.find((e) => e.type === 'match.decided')
    expect(decided?.data).toBe('{ tournamentId, matchId, winnerParticipantId, outcome, reason? }')
    const reuse = catalogue.find((e) => e.type === 'session.reuse_revoked')
    expect(reuse?.data).toBe('{ sessionId, reason: "refresh_token_reused" }')
  })
})
