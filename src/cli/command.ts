import type { ParseArgsConfig } from 'node:util'

export interface Io {
  out(text: string): void
  err(text: string): void
}

export interface Command {
  summary: string
  usage: string
  options: NonNullable<ParseArgsConfig['options']>
  /** Whether the command takes positional arguments (sub-actions, ids). */
  positionals?: boolean
  run(args: { values: Record<string, unknown>; positionals: string[] }, io: Io): Promise<number>
}

/** Wrong words on the command line: exit 2 with the command's usage. */
export class UsageError extends Error {}

/** Resolves with the first SIGTERM or SIGINT; long-running commands stop on it. */
export function nextStopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.off('SIGTERM', onSignal)
      process.off('SIGINT', onSignal)
      resolve(signal)
    }
    process.on('SIGTERM', onSignal)
    process.on('SIGINT', onSignal)
  })
}
