// docs/api.md's "Realtime" section is what a client in another language is
// written from, so it must say what the server does: its close-code table is
// the server's close codes (and Bun's 1009), its error-frame table the codes a
// socket sends, its JSON examples frames the server sends or takes (the
// subscribe example passes the server's own check), and its limits the
// server's constants and default settings. No server: the sources of truth
// are imported.
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { ROOT } from '../helpers/process'
import { loadConfig } from '../../src/config'
import { PAGE_SIZE } from '../../src/modules/events/service'
import { EVENT_TOPICS } from '../../src/modules/events/catalogue'
import { CLIENT_MESSAGES_PER_INTERVAL, CLOSE_CODES, MAX_CLIENT_MESSAGE_BYTES, PING_INTERVAL_MS, SubscribeMessage, TICKET_TTL_S } from '../../src/modules/realtime/protocol'

const API_MD = readFileSync(join(ROOT, 'docs', 'api.md'), 'utf8')

/** The text under a heading, up to the next heading of the same level or higher (a `#` line inside a code block is no heading). */
function sectionOf(markdown: string, heading: string): string {
  const lines = markdown.split('\n')
  const level = heading.indexOf(' ')
  const start = lines.indexOf(heading)
  if (start === -1) throw new Error(`no "${heading}" in docs/api.md`)
  let fenced = false
  let end = lines.length
  for (let i = start + 1; i < lines.length; i++) {
    if (lines[i]!.startsWith('```')) fenced = !fenced
    else if (!fenced && new RegExp(`^#{1,${level}} `).test(lines[i]!)) {
      end = i
      break
    }
  }
  return lines.slice(start + 1, end).join('\n')
}

/** The body rows of the markdown tables in a text, as cells (a header row, the one above a `|---|` line, left out). */
function rowsOf(text: string): string[][] {
  const lines = text.split('\n')
  const separator = (line: string | undefined) => line !== undefined && /^\|[-| ]+\|$/.test(line)
  return lines.filter((line, i) => line.startsWith('| ') && !separator(line) && !separator(lines[i + 1])).map((line) => line.slice(2, -2).split(' | '))
}

/** The first cells of the body rows. */
function firstCells(text: string): string[] {
  return rowsOf(text).map((cells) => cells[0]!.replace(/`/g, ''))
}

const REALTIME = sectionOf(API_MD, '## Realtime: the event plane over a WebSocket')

/** The error codes socket.ts sends in error frames, read from its source: `this.error('code', …)`. */
function errorFrameCodes(): string[] {
  const source = readFileSync(join(ROOT, 'src', 'modules', 'realtime', 'socket.ts'), 'utf8')
  return [...new Set([...source.matchAll(/this\.error\('([a-z_]+)'/g)].map((m) => m[1]!))]
}

describe('docs/api.md, Realtime', () => {
  test('the close-code table lists exactly the codes the server closes with, and Bun’s 1009', () => {
    const documented = firstCells(sectionOf(REALTIME, '### Close codes')).map(Number)
    expect(documented.sort()).toEqual([...Object.values(CLOSE_CODES), 1009].sort())
  })

  test('the error-frame table lists exactly the codes a socket sends', () => {
    const frames = sectionOf(REALTIME, '### Frames')
    const table = frames.slice(frames.indexOf('**Server → client: `error`**'))
    const codes = errorFrameCodes()
    expect(codes.length).toBeGreaterThanOrEqual(3)
    expect(firstCells(table).sort()).toEqual(codes.sort())
  })

  test('every JSON example is a frame: the subscribe passes the server’s check, the others have the server’s shapes', () => {
    const examples = [...REALTIME.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!) as { type: string } & Record<string, unknown>)
    expect(examples.map((e) => e.type)).toEqual(['subscribe', 'events', 'ping', 'error'])
    const check = TypeCompiler.Compile(SubscribeMessage)
    expect(check.Check(examples[0])).toBe(true)
    const [, events, ping, error] = examples
    expect(Object.keys(events!).sort()).toEqual(['cursor', 'events', 'type'])
    for (const event of events!.events as Record<string, unknown>[]) {
      expect(Object.keys(event).sort()).toEqual(['createdAt', 'data', 'id', 'topic', 'type'])
      expect(EVENT_TOPICS).toContain(event.topic as (typeof EVENT_TOPICS)[number])
    }
    expect(ping).toEqual({ type: 'ping' })
    const { code, message } = error!.error as { code: string; message: string }
    expect(Object.keys(error!.error as object).sort()).toEqual(['code', 'message'])
    expect(typeof message).toBe('string')
    expect(errorFrameCodes()).toContain(code)
  })

  test('the limits are the server’s constants and default settings', () => {
    const config = loadConfig({})
    const limits = sectionOf(REALTIME, '### Limits')
    const row = (what: string) => rowsOf(limits).find((cells) => cells[0] === what)?.[1] ?? `no row "${what}"`
    expect(row('a ticket')).toContain(`within ${TICKET_TTL_S} s`)
    expect(row('sockets per account')).toContain(`\`ARENA_SOCKETS_PER_USER\` (${config.socketsPerUser})`)
    expect(row('sockets per instance')).toContain(`\`ARENA_SOCKETS_MAX\` (${config.socketsMax.toLocaleString('en')})`)
    expect(row('a client message')).toContain(`${MAX_CLIENT_MESSAGE_BYTES} bytes`)
    expect(row('a client message')).toContain(`${CLIENT_MESSAGES_PER_INTERVAL} per ${PING_INTERVAL_MS / 1000} s`)
    expect(row('events per frame')).toBe(String(PAGE_SIZE))
    expect(row('a reader behind')).toContain(`\`ARENA_SOCKET_SLOW_S\` (${config.socketSlowS} s)`)
    expect(row('silence')).toContain(`every ${PING_INTERVAL_MS / 1000} s`)
    // The rows that repeat a rate-limit group name it as the rate-limit table does.
    expect(row('tickets minted')).toContain('`socket-ticket`')
    expect(row('socket openings')).toContain('`socket`')
  })
})
