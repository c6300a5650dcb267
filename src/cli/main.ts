// The subcommands of the one binary. Each command parses its own flags with
// node:util parseArgs, reads configuration through loadConfig (so the CLI and
// the server agree on every variable), and returns an exit code.
import { parseArgs } from 'node:util'
import { nextStopSignal, UsageError, type Command, type Io } from './command'
import { ConfigError, helpLine, loadConfig, VARIABLES, type Config } from '../config'
import { resolveSecrets, type Secrets } from '../secrets'
import { OPERATOR_COMMANDS } from './operator-commands'
import { seedCommand } from './seed-command'
import { dbCommand } from './db-command'
import { mailCommand } from './mail-command'
import { auditCommand } from './audit-command'
import { backupCommand, restoreCommand } from './backup-command'
import { AppError } from '../shared/errors'
import { startServer } from '../server'
import { openStorage } from '../db/open'
import { inProcessWakeups } from '../modules/events/wakeups'
import { createLogger } from '../shared/logger'
import { VERSION } from '../shared/version'
import { DataDirError, ensureDataDir } from '../shared/data-dir'
import { DataDirBusyError, lockDataDir } from '../shared/data-dir-lock'
import { ListenError } from '../shared/port'
import { commandName } from '../shared/invocation'

export const EXIT = { ok: 0, failure: 1, usage: 2 } as const

const processIo: Io = {
  out: (text) => process.stdout.write(text.endsWith('\n') ? text : text + '\n'),
  err: (text) => process.stderr.write(text.endsWith('\n') ? text : text + '\n'),
}

const COMMANDS: Record<string, Command> = {
  serve: {
    summary: 'Run the HTTP server (applies pending migrations first)',
    usage: 'arena serve',
    options: {},
    async run(_args, io) {
      const config = loadConfig()
      const logger = createLogger(config.logLevel)
      // A stray rejection or exception (a background job's bug, say) is logged
      // as a JSON line, and the server keeps serving: its state lives in SQLite
      // transactions, not in whatever the failed code was doing.
      process.on('unhandledRejection', (reason) => {
        logger.error('unhandled rejection', { error: String(reason), stack: reason instanceof Error ? reason.stack : undefined })
      })
      process.on('uncaughtException', (error) => {
        logger.error('uncaught exception', { error: String(error), stack: error.stack })
      })
      const server = await startServer(config, logger)
      announceOperatorToken(config, io, undefined, server.secrets)
      const signal = await nextStopSignal()
      try {
        await server.stop(signal)
      } catch (error) {
        io.err(`arena: error while stopping: ${error instanceof Error ? error.message : String(error)}`)
      }
      return EXIT.ok
    },
  },

  migrate: {
    summary: 'Apply pending database migrations and exit',
    usage: 'arena migrate [--json]',
    options: { json: { type: 'boolean' } },
    async run({ values }, io) {
      const config = loadConfig()
      // On SQLite, never beside a server: a server applies its own build's
      // migrations when it starts, and another build's would change the schema
      // under it. Held to the end, so no server starts mid-migration; shared,
      // so two migrations at once take turns (runMigrations) instead.
      let lock
      if (config.databaseUrl === undefined) {
        ensureDataDir(config.dataDir)
        lock = lockDataDir(config.dataDir, 'migrate', 'stop the server before arena migrate (a server applies its migrations when it starts)', { shared: true })
      }
      let storage
      try {
        storage = await openStorage(config, { logger: createLogger('silent'), wakeups: inProcessWakeups() })
        await storage.close()
      } finally {
        lock?.release()
      }
      const summary = { applied: storage.migrations.applied.length, known: storage.migrations.known, database: storage.location }
      io.out(values.json ? JSON.stringify(summary) : `applied ${summary.applied} migration(s) of ${summary.known}; database ${summary.database}`)
      return EXIT.ok
    },
  },

  db: dbCommand,
  backup: backupCommand,
  restore: restoreCommand,

  version: {
    summary: 'Print the version of this build',
    usage: 'arena version [--json]',
    options: { json: { type: 'boolean' } },
    async run({ values }, io) {
      io.out(values.json ? JSON.stringify({ version: VERSION, bun: Bun.version }) : `arena ${VERSION}`)
      return EXIT.ok
    },
  },

  healthcheck: {
    summary: 'Exit 0 when the local server answers /healthz (for container health checks)',
    usage: 'arena healthcheck [--url http://127.0.0.1:8080]',
    options: { url: { type: 'string' } },
    async run({ values }, io) {
      const url = (values.url as string | undefined) ?? `http://127.0.0.1:${loadConfig().port}`
      try {
        const res = await fetch(new URL('/healthz', url), { signal: AbortSignal.timeout(3000) })
        if (res.ok) return EXIT.ok
        io.err(`arena: ${url}/healthz answered ${res.status}`)
      } catch (error) {
        io.err(`arena: ${url}/healthz unreachable: ${error instanceof Error ? error.message : String(error)}`)
      }
      return EXIT.failure
    },
  },
  ...OPERATOR_COMMANDS,
  mail: mailCommand,
  audit: auditCommand,
  seed: seedCommand,
}

/**
 * In `local` without ARENA_ADMIN_TOKEN, the generated operator token is printed
 * at start for the person at the terminal, on stderr, outside the JSON log.
 * When stderr is not a terminal (a container, a service manager: its output
 * goes to log collectors) only the way to get it is printed. Elsewhere nothing.
 * "Generated" only on the start that generated it; later starts say where it is.
 */
export function announceOperatorToken(
  config: Readonly<Config>,
  io: Io,
  toTerminal = process.stderr.isTTY === true,
  /** The server's; by default the data dir's (SQLite). */
  secrets: Pick<Secrets, 'adminToken' | 'adminTokenGenerated' | 'adminTokenCreated'> = resolveSecrets(config),
): void {
  if (!secrets.adminTokenGenerated || secrets.adminToken === undefined) return
  const how = 'send it as x-admin-token; set ARENA_ADMIN_TOKEN to choose your own'
  const where = config.databaseUrl === undefined ? 'data dir' : 'database'
  const print = `\`${commandName()} admin-token\``
  const what = secrets.adminTokenCreated ? `local operator token generated into the ${where}` : `local operator token, kept in the ${where}`
  io.err(toTerminal ? `arena: ${what} (${how}; ${print} prints it again): ${secrets.adminToken}` : `arena: ${what}: ${print} prints it (${how})`)
}

/** A usage or help text, written with `arena` as the program, as this terminal runs it (`npx arena` in a checkout). */
function asRun(text: string): string {
  const name = commandName()
  return name === 'arena' ? text : text.replace(/(^|\n\s*|\|\s*)arena(?= )/g, `$1${name}`)
}

export function helpText(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length))
  const variableWidth = Math.max(...Object.keys(VARIABLES).map((name) => name.length))
  const lines = [
    `arena ${VERSION}: game platform backend in one binary`,
    '',
    `Usage: ${commandName()} <command> [options]`,
    '',
    'Commands:',
    ...Object.entries(COMMANDS).map(([name, command]) => `  ${name.padEnd(width)}  ${command.summary}`),
    '',
    'Options: --help after a command shows its usage; --version prints the version.',
    'Configuration comes from the environment, read once at start (an empty value is refused: unset a',
    'variable to get its default):',
    ...(Object.keys(VARIABLES) as (keyof typeof VARIABLES)[]).map((name) => `  ${name.padEnd(variableWidth)}  ${helpLine(name)}`),
    '',
    'A running server documents its HTTP API at /openapi (JSON at /openapi/json).',
  ]
  return lines.join('\n')
}

/** Runs one command line (without the program name) and returns the exit code. */
export async function main(argv: string[], io: Io = processIo): Promise<number> {
  const [name, ...rest] = argv
  if (name === undefined) {
    io.err(helpText())
    return EXIT.usage
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    io.out(helpText())
    return EXIT.ok
  }
  if (name === '--version' || name === '-v') return COMMANDS.version!.run({ values: {}, positionals: [] }, io)

  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined
  if (!command) {
    io.err(`arena: unknown command "${name}"\n\n${helpText()}`)
    return EXIT.usage
  }
  try {
    const parsed = parseArgs({
      args: rest,
      options: { ...command.options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: command.positionals ?? false,
      strict: true,
    })
    if (parsed.values.help) {
      io.out(`${command.summary}\n\nUsage: ${asRun(command.usage)}`)
      return EXIT.ok
    }
    return await command.run(parsed, io)
  } catch (error) {
    if (error instanceof ConfigError) {
      io.err(`arena: ${error.message}`)
      return EXIT.failure
    }
    if (error instanceof DataDirError) {
      // Said as a bad setting is: the variable and the path, never an errno.
      io.err(`arena: ${new ConfigError([error.message]).message}`)
      return EXIT.failure
    }
    if (error instanceof DataDirBusyError || error instanceof ListenError) {
      io.err(`arena: ${error.message}`)
      return EXIT.failure
    }
    if (error instanceof AppError) {
      io.err(`arena: ${error.message}${error.details ? '\n' + error.details.map((d) => `  ${d.path}: ${d.message}`).join('\n') : ''}`)
      return EXIT.failure
    }
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.err(`arena: ${(error as Error).message}\nUsage: ${asRun(command.usage)}`)
      return EXIT.usage
    }
    io.err(`arena: ${name} failed: ${error instanceof Error ? error.message : String(error)}`)
    return EXIT.failure
  }
}
