// What loadConfig refuses in an environment: its problems, one line each.
import { expect } from 'bun:test'
import { ConfigError, loadConfig } from '../../src/config'

/** The problems loadConfig names for `env`; fails the test if it accepts it. */
export function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env)
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return (error as ConfigError).problems
  }
  throw new Error('expected loadConfig to refuse this environment')
}
