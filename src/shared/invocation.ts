// How the person at the terminal runs arena, for every hint arena prints
// ("`npx arena admin-token` prints it"), so a hint can be pasted as it is:
// - from a checkout (source, `npm start`, `npx arena`): `npx arena`, which
//   package.json's "bin" (bin/arena) makes work there;
// - the compiled binary: the way it was started, when that still names it
//   (`./arena` typed in its directory, `arena` found on PATH); otherwise its
//   path from here, or its absolute path.
import { realpathSync } from 'node:fs'
import { basename, delimiter, isAbsolute, join, relative, resolve } from 'node:path'

/** The command in a checkout. */
export const CHECKOUT_COMMAND = 'npx arena'

/** `bun build --compile` puts the program's modules under /$bunfs/. */
export function isCompiled(): boolean {
  return import.meta.path.startsWith('/$bunfs/')
}

interface Process {
  argv0: string
  execPath: string
  cwd: string
  path: string | undefined
}

/** The command that runs arena from this terminal: `npx arena`, `./arena`, `arena`, or a path to the binary. */
export function commandName(): string {
  if (!isCompiled()) return CHECKOUT_COMMAND
  return binaryCommand({ argv0: process.argv0, execPath: process.execPath, cwd: process.cwd(), path: process.env.PATH })
}

/** How to start the server from here: the README's `npm start` in a checkout, `<binary> serve` otherwise. */
export function serveCommand(): string {
  return isCompiled() ? `${commandName()} serve` : 'npm start'
}

/** The compiled binary's name for the user, from how the process was started (exported for tests). */
export function binaryCommand(proc: Process): string {
  const self = real(proc.execPath)
  const typed = proc.argv0
  if (typed.includes('/')) {
    // A path the user typed (./arena, dist/arena, /opt/arena/arena): as typed, if it still leads here.
    if (real(resolve(proc.cwd, typed)) === self) return typed
  } else if (typed !== '' && onPath(typed, proc.path) === self) {
    return typed
  }
  const fromHere = relative(proc.cwd, proc.execPath)
  if (fromHere !== '' && !fromHere.startsWith('..') && !isAbsolute(fromHere)) return `./${fromHere}`
  const name = basename(proc.execPath)
  return onPath(name, proc.path) === self ? name : proc.execPath
}

function onPath(name: string, path: string | undefined): string | undefined {
  for (const dir of (path ?? '').split(delimiter)) {
    if (dir === '') continue
    const found = real(join(dir, name))
    if (found !== undefined) return found
  }
  return undefined
}

function real(path: string): string | undefined {
  try {
    return realpathSync(path)
  } catch {
    return undefined
  }
}
