// Named operator accounts (contract §11): create one (with a one-time
// password, answered once and never stored), list and read them, disable and
// enable, change a role, reset a password. Each change is an operator action,
// recorded in its own unit of work. Signing in and the sessions are
// sessions.ts; the second factor is second-factor.ts.
import type { Storage } from '../../db/storage'
import { UniqueViolationError } from '../../db/errors'
import type { Clock } from '../../shared/clock'
import { randomToken } from '../../shared/crypto'
import { AppError } from '../../shared/errors'
import { newId } from '../../shared/ids'
import type { Actor, OperatorIdentity } from '../audit/log'
import type { HashGate } from '../auth/hash-gate'
import { hashPassword } from '../auth/passwords'
import type { OperatorRole } from './roles'
import type { Operator } from './model'
import type { OperatorRow } from './store'

export interface OperatorServiceDeps {
  storage: Storage
  clock: Clock
  hashGate: HashGate
  /** Keys the CSRF tokens (derived per session). */
  csrfKey: string
  /** The chain key: the TOTP secrets are sealed under a key derived from it (./totp.ts). */
  chainKey: string
  /** How long a session lives from sign-in. */
  sessionTtlS: number
}

const NAME = /^[a-z0-9][a-z0-9._-]{1,31}$/i
/** The admin token's operator name (src/modules/admin/index.ts, TOKEN_OPERATOR): no account may take it. */
export const TOKEN_NAME = 'token'

export function identityOf(row: OperatorRow): OperatorIdentity {
  return { id: row.id, name: row.name, role: row.role }
}

export function notFound(): AppError {
  return new AppError('not_found', 'No such operator')
}

export function operatorView(row: OperatorRow): Operator {
  return { id: row.id, name: row.name, role: row.role, totpEnabled: row.totpEnabledAt !== null, disabled: row.disabledAt !== null, createdAt: row.createdAt.toISOString() }
}

export class OperatorService {
  constructor(private readonly deps: Pick<OperatorServiceDeps, 'storage' | 'clock' | 'hashGate'>) {}

  /** Creates an operator with a one-time password, which is answered once and never stored. */
  async create(input: { name: string; role: OperatorRole }, by: Actor): Promise<{ operator: Operator; password: string }> {
    const name = input.name.trim()
    if (!NAME.test(name)) {
      throw new AppError('validation_failed', 'Request failed validation', { details: [{ path: 'body/name', message: 'Expected 2 to 32 letters, digits, dots, dashes or underscores' }] })
    }
    // `token` is the admin token's name in the audit log: an operator called so would read as the automation credential.
    if (name.toLowerCase() === TOKEN_NAME) {
      throw new AppError('validation_failed', 'Request failed validation', { details: [{ path: 'body/name', message: 'The name "token" is reserved for the admin token' }] })
    }
    const password = randomToken(18)
    const passwordHash = await hashPassword(password, this.deps.hashGate)
    const now = this.deps.clock.now()
    const row: OperatorRow = {
      id: newId('operator'),
      name,
      nameKey: name.toLowerCase(),
      role: input.role,
      passwordHash,
      passwordOneTime: true,
      totpSecretSealed: null,
      totpEnabledAt: null,
      totpLastStep: null,
      disabledAt: null,
      createdAt: now,
      updatedAt: now,
    }
    try {
      await this.deps.storage.write(async (tx) => {
        await tx.operators.createOperator(row)
        await by.record(tx, { action: 'operator.create', target: row.id, details: { name, role: input.role } })
      })
    } catch (error) {
      // PostgreSQL names the index (operators_name_key), SQLite the column (operators.name_key).
      if (error instanceof UniqueViolationError && (error.involves('operators_name_key') || error.involves('name_key'))) throw new AppError('conflict', `An operator named ${JSON.stringify(name)} exists`)
      throw error
    }
    return { operator: operatorView(row), password }
  }

  async list(): Promise<Operator[]> {
    return (await this.deps.storage.read.operators.listOperators()).map(operatorView)
  }

  /** One operator; 404 not_found when there is none with this id. */
  async byId(id: string): Promise<Operator> {
    const row = await this.deps.storage.read.operators.operatorById(id)
    if (!row) throw notFound()
    return operatorView(row)
  }

  /** One operator by name (any case); 404 not_found when there is none (the CLI names operators). */
  async byName(name: string): Promise<Operator> {
    const row = await this.deps.storage.read.operators.operatorByNameKey(name.trim().toLowerCase())
    if (!row) throw notFound()
    return operatorView(row)
  }

  /**
   * Disables an operator: it cannot sign in, and every session it has ends
   * at once (in the same unit of work). The last enabled admin cannot be
   * disabled (409 last_admin): nobody named could then manage operators from
   * the console. Disabling a disabled operator is 409 conflict.
   */
  async disable(id: string, by: Actor): Promise<Operator> {
    const now = this.deps.clock.now()
    const row = await this.deps.storage.write(async (tx) => {
      const current = await tx.operators.operatorById(id)
      if (!current) throw notFound()
      if (current.disabledAt !== null) throw new AppError('conflict', `${current.name} is disabled already`)
      if (current.role === 'admin') {
        // Read in this unit of work: on PostgreSQL two admins disabling each other at once serialize, and the second sees the first.
        const admins = (await tx.operators.listOperators()).filter((op) => op.role === 'admin' && op.disabledAt === null)
        if (admins.length <= 1) throw new AppError('last_admin', `${current.name} is the last enabled admin: create another admin first`)
      }
      await tx.operators.updateOperator(id, { disabledAt: now, updatedAt: now })
      await tx.operators.revokeOperatorSessions(id, now)
      await by.record(tx, { action: 'operator.disable', target: id, details: { name: current.name, role: current.role } })
      return { ...current, disabledAt: now, updatedAt: now }
    })
    return operatorView(row)
  }

  /** Lets a disabled operator sign in again (its old sessions stay ended). 409 conflict when it is enabled. */
  async enable(id: string, by: Actor): Promise<Operator> {
    const now = this.deps.clock.now()
    const row = await this.deps.storage.write(async (tx) => {
      const current = await tx.operators.operatorById(id)
      if (!current) throw notFound()
      if (current.disabledAt === null) throw new AppError('conflict', `${current.name} is enabled already`)
      await tx.operators.updateOperator(id, { disabledAt: null, updatedAt: now })
      await by.record(tx, { action: 'operator.enable', target: id, details: { name: current.name, role: current.role } })
      return { ...current, disabledAt: null, updatedAt: now }
    })
    return operatorView(row)
  }

  /**
   * Gives the operator another role, in force at its next request (sessions
   * read the role each time). The last enabled admin keeps its role (409
   * last_admin); the role it has already is 409 conflict.
   */
  async setRole(id: string, role: OperatorRole, by: Actor): Promise<Operator> {
    const now = this.deps.clock.now()
    const row = await this.deps.storage.write(async (tx) => {
      const current = await tx.operators.operatorById(id)
      if (!current) throw notFound()
      if (current.role === role) throw new AppError('conflict', `${current.name} is ${role} already`)
      if (current.role === 'admin' && current.disabledAt === null) {
        const admins = (await tx.operators.listOperators()).filter((op) => op.role === 'admin' && op.disabledAt === null)
        if (admins.length <= 1) throw new AppError('last_admin', `${current.name} is the last enabled admin: make another operator admin first`)
      }
      await tx.operators.updateOperator(id, { role, updatedAt: now })
      await by.record(tx, { action: 'operator.role', target: id, details: { name: current.name, from: current.role, to: role } })
      return { ...current, role, updatedAt: now }
    })
    return operatorView(row)
  }

  /**
   * A new one-time password for the operator (answered once, never stored):
   * the old password stops working and every session ends. TOTP is left as
   * it is (a lost authenticator is disableTotp's business), and so is a
   * disabled operator's state: resetting does not enable.
   */
  async resetPassword(id: string, by: Actor): Promise<{ operator: Operator; password: string }> {
    const password = randomToken(18)
    const passwordHash = await hashPassword(password, this.deps.hashGate)
    const now = this.deps.clock.now()
    const row = await this.deps.storage.write(async (tx) => {
      const current = await tx.operators.operatorById(id)
      if (!current) throw notFound()
      await tx.operators.updateOperator(id, { passwordHash, passwordOneTime: true, updatedAt: now })
      await tx.operators.revokeOperatorSessions(id, now)
      await by.record(tx, { action: 'operator.reset_password', target: id, details: { name: current.name } })
      return { ...current, passwordHash, passwordOneTime: true, updatedAt: now }
    })
    return { operator: operatorView(row), password }
  }
}
