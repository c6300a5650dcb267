// `arena queue`: a game's matchmaking queues (contract §16) from the command
// line: create, list, update, close. The same MatchmakingService methods the
// admin routes call (audited as the CLI's operator); the settings are the
// body those routes take, checked against their schema, so the CLI refuses
// what the API refuses, naming the flag. `--json` prints what the routes answer.
import type { Command, Io } from './command'
import { UsageError } from './command'
import { AppError, type ErrorCode } from '../shared/errors'
import type { Services } from '../services'
import { cliActor } from './actor'
import type { Queue } from '../modules/matchmaking/model'
import { checkedCreateQueue, checkedUpdateQueue } from '../modules/matchmaking/queue-input'

/** The flag that sets each field of the body: the service's `body/...` paths are reported by flag. */
const FLAG_OF: Record<string, string> = {
  'body/name': '--name',
  'body/rated': '--rated/--unrated',
  'body/stake': '--stake',
  'body/rake': '--rake',
  'body/window': '--window-initial/--window-widen/--window-max',
  'body/window/initial': '--window-initial',
  'body/window/widenPerSecond': '--window-widen',
  'body/window/max': '--window-max',
  'body/readyCheckS': '--ready-check',
  'body/matchDeadlineS': '--match-deadline',
  'body/rematchCooldownS': '--rematch-cooldown',
  'body/draws': '--draws',
}

function byFlag(error: unknown): unknown {
  if (!(error instanceof AppError) || !error.details) return error
  const details = error.details.map((d) => ({ ...d, path: FLAG_OF[d.path] ?? d.path }))
  return new AppError(error.code as ErrorCode, error.message, { details, status: error.status })
}

const SETTINGS_USAGE =
  '[--rated|--unrated (the default)] [--stake <decimal>|none] [--rake <fraction>] --window-initial <points> --window-widen <points a second> --window-max <points>\n' +
  '         --ready-check <seconds> [--match-deadline <seconds>|none] [--rematch-cooldown <seconds>] [--draws replay|result]'

/** The settings the flags give, as the admin API's body (only those given: an update changes just them). */
function settingsOf(values: Record<string, unknown>): Record<string, unknown> {
  const text = (flag: string) => values[flag] as string | undefined
  // A number, or the text as given (the schema names the flag that is not one).
  const number = (flag: string) => {
    const given = text(flag)
    if (given === undefined) return undefined
    const n = Number(given.trim())
    return given.trim() === '' || !Number.isFinite(n) ? given : n
  }
  const body: Record<string, unknown> = {}
  if (values.rated === true && values.unrated === true) throw new UsageError('--rated or --unrated, not both')
  if (values.rated === true) body.rated = true
  if (values.unrated === true) body.rated = false
  if (text('stake') !== undefined) body.stake = text('stake') === 'none' ? null : text('stake')
  if (text('rake') !== undefined) body.rake = text('rake')
  const window = { initial: number('window-initial'), widenPerSecond: number('window-widen'), max: number('window-max') }
  const windowGiven = Object.values(window).filter((v) => v !== undefined).length
  if (windowGiven === 3) body.window = window
  else if (windowGiven > 0) throw new UsageError('give the window whole: --window-initial, --window-widen and --window-max')
  if (text('ready-check') !== undefined) body.readyCheckS = number('ready-check')
  if (text('match-deadline') !== undefined) body.matchDeadlineS = text('match-deadline') === 'none' ? null : number('match-deadline')
  if (text('rematch-cooldown') !== undefined) body.rematchCooldownS = number('rematch-cooldown')
  if (text('draws') !== undefined) body.draws = text('draws')
  return body
}

/** One line a queue: name, open or closed, rated, stake and rake, window, ready check, deadline, cooldown, draws, id. */
function queueLine(q: Queue): string {
  return [
    q.name.padEnd(16),
    (q.closedAt === null ? 'open' : `closed ${q.closedAt}`).padEnd(6),
    q.rated ? 'rated  ' : 'unrated',
    `stake ${q.stake ?? '-'} rake ${q.rake}`,
    `window ±${q.window.initial} +${q.window.widenPerSecond}/s ≤${q.window.max}`,
    `ready ${q.readyCheckS}s`,
    `deadline ${q.matchDeadlineS === null ? '-' : `${q.matchDeadlineS}s`}`,
    `cooldown ${q.rematchCooldownS}s`,
    `draws ${q.draws}`,
    q.id,
  ].join('  ')
}

export function queueCommand(withServices: <T>(fn: (services: Services) => Promise<T> | T) => Promise<T>): Command {
  const print = (io: Io, json: boolean, value: unknown, text: () => string) => {
    io.out(json ? JSON.stringify(value) : text())
    return 0
  }
  return {
    summary: "Open, list, change or close a game's matchmaking queues",
    usage:
      `arena queue create <gameId> --name <name> ${SETTINGS_USAGE} [--json]\n` +
      '       arena queue list <gameId> [--closed] [--json]\n' +
      `       arena queue update <gameId> <name> (any of the settings above) [--json]\n` +
      '       arena queue close <gameId> <name> [--json]',
    options: {
      name: { type: 'string' },
      rated: { type: 'boolean' },
      unrated: { type: 'boolean' },
      stake: { type: 'string' },
      rake: { type: 'string' },
      'window-initial': { type: 'string' },
      'window-widen': { type: 'string' },
      'window-max': { type: 'string' },
      'ready-check': { type: 'string' },
      'match-deadline': { type: 'string' },
      'rematch-cooldown': { type: 'string' },
      draws: { type: 'string' },
      closed: { type: 'boolean' },
      json: { type: 'boolean' },
    },
    positionals: true,
    async run({ values, positionals }, io) {
      const [action, gameId, name, ...rest] = positionals
      const json = values.json === true
      if (!gameId) throw new UsageError('missing <gameId>')
      const settings = () => settingsOf(values)
      if (action === 'create') {
        if (name !== undefined) throw new UsageError(`unexpected "${[name, ...rest].join(' ')}" (the name is --name)`)
        if (values.name === undefined) throw new UsageError('missing --name')
        const body: Record<string, unknown> = { rated: false, ...settings(), name: (values.name as string).trim() }
        for (const [flag, field] of [['--window-initial/--window-widen/--window-max', 'window'], ['--ready-check', 'readyCheckS']] as const) {
          if (body[field] === undefined) throw new UsageError(`missing ${flag}`)
        }
        const { queue } = await withServices(async (services) => {
          try {
            return await services.matchmaking.createQueue(gameId, checkedCreateQueue(body), cliActor(services))
          } catch (error) {
            throw byFlag(error)
          }
        })
        return print(io, json, { queue }, () => `queue ${queue.name} opened in ${gameId}\n${queueLine(queue)}`)
      }
      if (action === 'list') {
        if (name !== undefined) throw new UsageError(`unexpected "${[name, ...rest].join(' ')}"`)
        const { queues } = await withServices((services) => services.matchmaking.queues(gameId, values.closed === true))
        return print(io, json, { queues }, () => (queues.length === 0 ? '(no queue)' : queues.map(queueLine).join('\n')))
      }
      if (action !== 'update' && action !== 'close') throw new UsageError(`unknown action "${action ?? ''}"`)
      if (!name) throw new UsageError('missing <name>')
      if (rest.length > 0) throw new UsageError(`unexpected "${rest.join(' ')}"`)
      if (values.name !== undefined) throw new UsageError('a queue is not renamed: --name is for create')
      if (action === 'update') {
        const body = settings()
        if (Object.keys(body).length === 0) throw new UsageError('give at least one setting to change')
        const { queue } = await withServices(async (services) => {
          try {
            return await services.matchmaking.updateQueue(gameId, name, checkedUpdateQueue(body), cliActor(services))
          } catch (error) {
            throw byFlag(error)
          }
        })
        return print(io, json, { queue }, () => `queue ${queue.name} changed\n${queueLine(queue)}`)
      }
      const { queue } = await withServices((services) => services.matchmaking.closeQueue(gameId, name, cliActor(services)))
      return print(io, json, { queue }, () => `queue ${queue.name} closed: its waiting tickets are cancelled`)
    },
  }
}
