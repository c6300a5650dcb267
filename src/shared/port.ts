// Whether the server's address can be bound, asked before anything is
// written: a start that cannot listen must leave no data dir and no migrated
// database behind, and say which address it wanted.
import { createServer } from 'node:net'

/** The address cannot be listened on: in use, or not ours to bind. A start-up error naming ARENA_HOST/ARENA_PORT. */
export class ListenError extends Error {
  constructor(host: string, port: number, code: string | undefined) {
    super(
      code === 'EADDRINUSE'
        ? `port ${port} on ${host} is already in use (ARENA_PORT=${port}): stop what listens there, or set ARENA_PORT to a free port (0 picks any free one)`
        : code === 'EACCES' || code === 'EPERM'
          ? `port ${port} on ${host} may not be bound by this user (ARENA_PORT=${port}; ports below 1024 need privileges): choose a port above 1023`
          : code === 'EADDRNOTAVAIL'
            ? `${host} is not an address of this machine (ARENA_HOST=${host}): use one of its addresses, 127.0.0.1 or 0.0.0.0`
            : `cannot listen on ${host}:${port} (${code ?? 'unknown error'})`,
    )
    this.name = 'ListenError'
  }
}

/** The errno codes that mean the address itself is the problem (anything else is rethrown as it is). */
export function isListenErrorCode(code: string | undefined): boolean {
  return code === 'EADDRINUSE' || code === 'EACCES' || code === 'EPERM' || code === 'EADDRNOTAVAIL'
}

/**
 * Binds host:port and lets go at once; throws ListenError when it cannot be
 * bound. Port 0 (any free port) always can. A process that takes the port in
 * the moment between this check and the real listen still gets the same error
 * from the listen itself, only later.
 */
export async function assertCanListen(host: string, port: number): Promise<void> {
  if (port === 0) return
  await new Promise<void>((resolve, reject) => {
    const probe = createServer()
    probe.once('error', (error: NodeJS.ErrnoException) => {
      probe.close()
      reject(isListenErrorCode(error.code) ? new ListenError(host, port, error.code) : error)
    })
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()))
  })
}
