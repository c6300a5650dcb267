// `arena game-server`: a game's dedicated servers (contract §17) from the
// command line: add (register a public key), list, disable, rotate. The same
// GameServers methods the admin routes call (audited as the CLI's operator);
// a key the API refuses is refused here, named by its flag. `--json` prints
// what the routes answer.
import type { Command, Io } from './command'
import { UsageError } from './command'
import { AppError, type ErrorCode } from '../shared/errors'
import type { Services } from '../services'
import { cliActor } from './actor'
import type { GameServer } from '../modules/games/model'

/** The service names the body's fields; the command line names its flags. */
function byFlag(error: unknown): unknown {
  if (!(error instanceof AppError) || !error.details) return error
  const details = error.details.map((d) => ({ ...d, path: d.path === 'body/publicKey' ? '--public-key' : d.path }))
  return new AppError(error.code as ErrorCode, error.message, { details, status: error.status })
}

/** One line a server: status, name, key, when created and rotated, id. */
function serverLine(s: GameServer): string {
  return [s.status.padEnd(8), s.name.padEnd(16), s.publicKey, `created ${s.createdAt}`, `rotated ${s.rotatedAt ?? '-'}`, s.id].join('  ')
}

export function gameServerCommand(withServices: <T>(fn: (services: Services) => Promise<T> | T) => Promise<T>): Command {
  const print = (io: Io, json: boolean, value: unknown, text: () => string) => {
    io.out(json ? JSON.stringify(value) : text())
    return 0
  }
  return {
    summary: "Register, list, disable or rotate a game's servers (their signed results decide matches)",
    usage:
      'arena game-server add <gameId> --name <name> --public-key=<Ed25519 key, base64url> [--json]\n' +
      '       arena game-server list <gameId> [--json]\n' +
      '       arena game-server disable <serverId> [--json]\n' +
      '       arena game-server rotate <serverId> --public-key=<Ed25519 key, base64url> [--json]',
    options: { name: { type: 'string' }, 'public-key': { type: 'string' }, json: { type: 'boolean' } },
    positionals: true,
    async run({ values, positionals }, io) {
      const [action, id, ...rest] = positionals
      const json = values.json === true
      if (!id) throw new UsageError(action === 'add' || action === 'list' ? 'missing <gameId>' : 'missing <serverId>')
      if (rest.length > 0) throw new UsageError(`unexpected "${rest.join(' ')}"`)
      const publicKey = values['public-key'] as string | undefined
      const name = (values.name as string | undefined)?.trim()
      if (action === 'add') {
        if (!name) throw new UsageError('missing --name')
        if (name.length > 64) throw new UsageError('--name: at most 64 characters')
        if (publicKey === undefined) throw new UsageError('missing --public-key')
        const server = await withServices(async (services) => {
          try {
            return await services.gameServers.create(id, { name, publicKey }, cliActor(services))
          } catch (error) {
            throw byFlag(error)
          }
        })
        return print(io, json, { server }, () => `game server ${server.id} "${server.name}" added to ${server.gameId}\n${serverLine(server)}`)
      }
      if (name !== undefined) throw new UsageError('--name is for add')
      if (action === 'list') {
        const servers = await withServices((services) => services.gameServers.list(id))
        return print(io, json, { servers }, () => (servers.length === 0 ? '(no game server)' : servers.map(serverLine).join('\n')))
      }
      if (action === 'disable') {
        const server = await withServices((services) => services.gameServers.disable(id, cliActor(services)))
        return print(io, json, { server }, () => `game server ${server.id} disabled: its signatures are refused from now on`)
      }
      if (action === 'rotate') {
        if (publicKey === undefined) throw new UsageError('missing --public-key')
        const server = await withServices(async (services) => {
          try {
            return await services.gameServers.rotate(id, publicKey, cliActor(services))
          } catch (error) {
            throw byFlag(error)
          }
        })
        return print(io, json, { server }, () => `game server ${server.id} has a new key: the old one no longer works\n${serverLine(server)}`)
      }
      throw new UsageError(`unknown action "${action ?? ''}"`)
    },
  }
}
