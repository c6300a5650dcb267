// One JSON object per line on stdout. Callers pass structured fields, never
// request bodies or headers wholesale; as a second line of defence any field
// whose name looks like a credential is replaced before it is written.

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 }

const SECRET_FIELD = /pass(word)?|pin|token|secret|authorization|cookie|api[-_]?key|game[-_]?key/i

export type LogFields = Record<string, unknown>

export interface Logger {
  debug(msg: string, fields?: LogFields): void
  info(msg: string, fields?: LogFields): void
  warn(msg: string, fields?: LogFields): void
  error(msg: string, fields?: LogFields): void
}

export type LogSink = (line: string) => void

const stdoutSink: LogSink = (line) => {
  process.stdout.write(line + '\n')
}

function redact(fields: LogFields): LogFields {
  const out: LogFields = {}
  for (const [key, value] of Object.entries(fields)) {
    out[key] = SECRET_FIELD.test(key) ? '[redacted]' : value
  }
  return out
}

export function createLogger(level: LogLevel, sink: LogSink = stdoutSink): Logger {
  const threshold = RANK[level]
  const write = (lvl: Exclude<LogLevel, 'silent'>, msg: string, fields?: LogFields) => {
    if (RANK[lvl] < threshold) return
    const record = { time: new Date().toISOString(), level: lvl, msg, ...(fields ? redact(fields) : {}) }
    sink(JSON.stringify(record))
  }
  return {
    debug: (msg, fields) => write('debug', msg, fields),
    info: (msg, fields) => write('info', msg, fields),
    warn: (msg, fields) => write('warn', msg, fields),
    error: (msg, fields) => write('error', msg, fields),
  }
}
