// One JSON object per line on stdout. Callers pass structured fields, never
// request bodies or headers wholesale; as a second line of defence any field,
// at any depth, whose name looks like a credential is replaced before it is
// written. Logging never throws: a value JSON cannot hold is written as text.
import { writeSync } from 'node:fs'

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 }

const SECRET_FIELD = /pass(word|phrase)?|pin|token|secret|authorization|cookie|api[-_]?key|game[-_]?key|jwt|bearer|credential|otp|signature|private/i

export type LogFields = Record<string, unknown>

export interface Logger {
  debug(msg: string, fields?: LogFields): void
  info(msg: string, fields?: LogFields): void
  warn(msg: string, fields?: LogFields): void
  error(msg: string, fields?: LogFields): void
}

export type LogSink = (line: string) => void

// Lines are gathered and written once per event-loop turn: one write per
// request line was a system call per request, the largest single cost of a
// small authenticated read under load. A turn's lines are written before the
// next turn's; at exit whatever is left is written synchronously. A SIGKILL
// loses at most the current turn's lines.
let pending: string[] = []
let flushScheduled = false

function flushLines(): void {
  flushScheduled = false
  if (pending.length === 0) return
  const chunk = pending.join('')
  pending = []
  process.stdout.write(chunk)
}

process.on('exit', () => {
  if (pending.length === 0) return
  try {
    writeSync(1, pending.join(''))
  } catch {
    // stdout is gone; nothing else to write to
  }
  pending = []
})

const stdoutSink: LogSink = (line) => {
  pending.push(line + '\n')
  if (!flushScheduled) {
    flushScheduled = true
    setImmediate(flushLines)
  }
}

function replacer(this: unknown, key: string, value: unknown): unknown {
  if (key !== '' && SECRET_FIELD.test(key) && !Array.isArray(this)) return '[redacted]'
  if (typeof value === 'bigint') return value.toString()
  if (value instanceof Error) return { name: value.name, message: value.message }
  return value
}

/**
 * Whether `record` can be written without the replacer: flat, every value a
 * string, number, boolean or null, no key that looks like a credential. The
 * access-log line of every request is; JSON.stringify without a replacer
 * function is several times faster.
 */
function isPlain(record: Record<string, unknown>): boolean {
  for (const key in record) {
    const value = record[key]
    if (value !== null && typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return false
    if (looksSecret(key)) return false
  }
  return true
}

// Field names come from the code, not from requests: a few dozen in all, so
// each is tested against SECRET_FIELD once, not on every line.
const secretKeys = new Map<string, boolean>()
function looksSecret(key: string): boolean {
  let secret = secretKeys.get(key)
  if (secret === undefined) {
    secret = SECRET_FIELD.test(key)
    if (secretKeys.size < 1000) secretKeys.set(key, secret)
  }
  return secret
}

/** Serializes a log record; never throws (cycles and the like degrade to a note). */
export function formatRecord(record: Record<string, unknown>): string {
  try {
    return isPlain(record) ? JSON.stringify(record) : JSON.stringify(record, replacer)
  } catch (error) {
    return JSON.stringify({
      time: record.time,
      level: record.level,
      msg: record.msg,
      logError: `fields could not be serialized: ${error instanceof Error ? error.message : String(error)}`,
    })
  }
}

export function createLogger(level: LogLevel, sink: LogSink = stdoutSink): Logger {
  const threshold = RANK[level]
  const write = (lvl: Exclude<LogLevel, 'silent'>, msg: string, fields?: LogFields) => {
    if (RANK[lvl] < threshold) return
    try {
      sink(formatRecord({ time: new Date().toISOString(), level: lvl, msg, ...fields }))
    } catch {
      // A full or closed stdout must not take a request (or the process) down.
    }
  }
  return {
    debug: (msg, fields) => write('debug', msg, fields),
    info: (msg, fields) => write('info', msg, fields),
    warn: (msg, fields) => write('warn', msg, fields),
    error: (msg, fields) => write('error', msg, fields),
  }
}
