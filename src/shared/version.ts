import pkg from '../../package.json' with { type: 'json' }

/** The version of this build, from package.json (inlined by the bundler). */
export const VERSION: string = pkg.version

/**
 * How the person at the terminal starts the server: the binary they are
 * running (`bun build --compile` puts modules under /$bunfs/), or the npm
 * script of a source checkout.
 */
export function serveCommand(): string {
  return import.meta.path.startsWith('/$bunfs/') ? `${process.execPath.split('/').pop()} serve` : 'npm start'
}
