// `arena operator create|list|disable|enable|reset-password|set-role|disable-totp`
// (contract §11): named operator accounts from the command line, on the data dir's database,
// through the same OperatorService (and OperatorTotp) the admin API and the console call. The
// command line acts as an admin named `cli:<OS user>` (via `cli`): whoever
// can run it can read the database anyway, and the audit log still says
// which OS account did what. A password arena prints (create, reset) is
// one-time: printed once, never stored, replaced at the first sign-in.
import type { Command, Io } from './command'
import { UsageError } from './command'
import { commandName } from '../shared/invocation'
import { OPERATOR_ROLES, type OperatorRole } from '../modules/operators/roles'
import type { Operator } from '../modules/operators/model'
import type { Services } from '../services'
import { cliActor } from './actor'
import type { Actor } from '../modules/audit/log'

type WithServices = <T>(fn: (services: Services) => Promise<T> | T) => Promise<T>

function roleOf(raw: unknown): OperatorRole {
  if (typeof raw !== 'string') throw new UsageError(`missing --role (${OPERATOR_ROLES.join(', ')})`)
  if (!(OPERATOR_ROLES as readonly string[]).includes(raw)) throw new UsageError(`--role takes one of ${OPERATOR_ROLES.join(', ')}, got "${raw}"`)
  return raw as OperatorRole
}

function line(op: Operator): string {
  const state = [op.disabled ? 'disabled' : 'enabled', op.totpEnabled ? 'totp' : null].filter(Boolean).join(', ')
  return `${op.id}  ${op.name.padEnd(20)} ${op.role.padEnd(9)} ${state}  since ${op.createdAt}`
}

function print(io: Io, json: boolean, value: unknown, text: () => string): number {
  io.out(json ? JSON.stringify(value) : text())
  return 0
}

/** The actions on one named operator that answer it as it is afterwards. */
const CHANGES: Record<'disable' | 'enable' | 'disable-totp', { run: (services: Services, id: string, by: Actor) => Promise<Operator>; said: string }> = {
  disable: { run: (services, id, by) => services.operators.disable(id, by), said: 'disabled: its sessions have ended' },
  enable: { run: (services, id, by) => services.operators.enable(id, by), said: 'enabled: it may sign in again' },
  'disable-totp': { run: (services, id, by) => services.operatorTotp.disableTotp(id, by), said: 'signs in without TOTP until it enrols again' },
}

const ACTIONS = ['create', 'list', 'disable', 'enable', 'reset-password', 'set-role', 'disable-totp'] as const
type Action = (typeof ACTIONS)[number]

export function operatorCommand(withServices: WithServices): Command {
  return {
    summary: 'Named operator accounts: create (prints a one-time password), list, disable, enable, reset-password, set-role, disable-totp',
    usage: `arena operator create <name> --role <${OPERATOR_ROLES.join('|')}> [--json] | arena operator list [--json] | arena operator disable|enable|reset-password|disable-totp <name> [--json] | arena operator set-role <name> --role <role> [--json]`,
    options: { role: { type: 'string' }, json: { type: 'boolean' } },
    positionals: true,
    async run({ values, positionals }, io) {
      const [action, name, ...extra] = positionals
      const json = values.json === true
      if (extra.length > 0) throw new UsageError(`unexpected "${extra.join(' ')}"`)
      if (action === 'list') {
        if (name !== undefined) throw new UsageError(`unexpected "${name}"`)
        const operators = await withServices(({ operators }) => operators.list())
        return print(io, json, { operators }, () => (operators.length === 0 ? `no operators (${commandName()} operator create <name> --role admin)` : operators.map(line).join('\n')))
      }
      if (!ACTIONS.includes(action as Action)) throw new UsageError(`unknown action "${action ?? ''}"`)
      if (name === undefined) throw new UsageError('missing <name>')
      if (action === 'create') {
        const role = roleOf(values.role)
        const created = await withServices((services) => services.operators.create({ name, role }, cliActor(services)))
        return print(io, json, created, () => `operator ${created.operator.id} "${created.operator.name}" (${role})\npassword ${created.password}  (one-time, shown once: it must be replaced at the first sign-in)`)
      }
      if (action === 'set-role') {
        const role = roleOf(values.role)
        const operator = await withServices(async (services) => services.operators.setRole((await services.operators.byName(name)).id, role, cliActor(services)))
        return print(io, json, { operator }, () => `operator "${operator.name}" is now ${operator.role}`)
      }
      if (values.role !== undefined) throw new UsageError('--role is for create and set-role only')
      const change = CHANGES[action as keyof typeof CHANGES]
      if (change !== undefined) {
        const operator = await withServices(async (services) => change.run(services, (await services.operators.byName(name)).id, cliActor(services)))
        return print(io, json, { operator }, () => `operator "${operator.name}" ${change.said}`)
      }
      const reset = await withServices(async (services) => services.operators.resetPassword((await services.operators.byName(name)).id, cliActor(services)))
      return print(io, json, reset, () => `operator "${reset.operator.name}": new password ${reset.password}  (one-time, shown once; every session has ended)`)
    },
  }
}
