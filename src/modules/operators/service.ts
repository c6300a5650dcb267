// Named operator accounts and their sessions (contract §11). An operator
// signs in with a name and a password (argon2id, through the hash gate like a
// player's); a password arena printed (create, reset) is one-time, so the
// first sign-in with it must set a new one. A session is a random token,
// stored only as its SHA-256: the console keeps it in an HttpOnly cookie, an
// API client sends it as a bearer. The console's CSRF token is an HMAC of the
// session token, so it is never stored and dies with the session.
import type { Storage } from '../../db/storage'
import { UniqueViolationError } from '../../db/errors'
import type { Clock } from '../../shared/clock'
import { constantTimeEqual, randomToken, sha256Hex } from '../../shared/crypto'
import { AppError } from '../../shared/errors'
import { newId } from '../../shared/ids'
import type { Actor, OperatorIdentity } from '../audit/log'
import type { HashGate } from '../auth/hash-gate'
import { assertPasswordLength, hashPassword, verifyPassword } from '../auth/passwords'
import type { OperatorRole } from './roles'
import type { OperatorRow, OperatorSessionKind, OperatorSessionRow } from './store'

export interface OperatorServiceDeps {
  storage: Storage
  clock: Clock
  hashGate: HashGate
  /** Keys the CSRF tokens (derived per session). */
  csrfKey: string
  /** How long a session lives from sign-in. */
  sessionTtlS: number
}

/** An operator as the API and the console show it. */
export interface OperatorView {
  id: string
  name: string
  role: OperatorRole
  totpEnabled: boolean
  disabled: boolean
  createdAt: string
}

export interface SignInInput {
  name: string
  password: string
  /** Required when the password is one-time. */
  newPassword?: string | undefined
  /** The authenticator code; required once the operator enrolled TOTP. */
  totp?: string | undefined
  kind: OperatorSessionKind
  userAgent: string | null
  ip: string | null
}

export interface SignedIn {
  token: string
  session: OperatorSessionRow
  operator: OperatorIdentity
}

/** A live session: who it is, and (console) its CSRF token. */
export interface LiveSession {
  operator: OperatorIdentity
  sessionId: string
  csrf: string
}

const NAME = /^[a-z0-9][a-z0-9._-]{1,31}$/i

export function identityOf(row: OperatorRow): OperatorIdentity {
  return { id: row.id, name: row.name, role: row.role }
}

export function operatorView(row: OperatorRow): OperatorView {
  return { id: row.id, name: row.name, role: row.role, totpEnabled: row.totpEnabledAt !== null, disabled: row.disabledAt !== null, createdAt: row.createdAt.toISOString() }
}

export class OperatorService {
  constructor(private readonly deps: OperatorServiceDeps) {}

  /** Creates an operator with a one-time password, which is answered once and never stored. */
  async create(input: { name: string; role: OperatorRole }, by: Actor): Promise<{ operator: OperatorView; password: string }> {
    const name = input.name.trim()
    if (!NAME.test(name)) {
      throw new AppError('validation_failed', 'Request failed validation', { details: [{ path: 'body/name', message: 'Expected 2 to 32 letters, digits, dots, dashes or underscores' }] })
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
      if (error instanceof UniqueViolationError && error.involves('operators_name_key')) throw new AppError('conflict', `An operator named ${JSON.stringify(name)} exists`)
      throw error
    }
    return { operator: operatorView(row), password }
  }

  async list(): Promise<OperatorView[]> {
    return (await this.deps.storage.read.operators.listOperators()).map(operatorView)
  }

  /**
   * Checks a name and password and opens a session. Every failure is the
   * same 401, whether the name exists, is disabled or the password is wrong.
   */
  async signIn(input: SignInInput): Promise<SignedIn> {
    const { storage, clock } = this.deps
    const found = await storage.read.operators.operatorByNameKey(input.name.trim().toLowerCase())
    const valid = found ? await verifyPassword(input.password, found.passwordHash, this.deps.hashGate) : false
    if (!found || !valid || found.disabledAt !== null) throw new AppError('invalid_credentials', 'Invalid operator name or password')
    let passwordHash: string | undefined
    if (found.passwordOneTime) {
      if (input.newPassword === undefined) throw new AppError('password_change_required', 'This password was for one sign-in: choose a new password (newPassword)')
      assertPasswordLength(input.newPassword, 'body/newPassword')
      passwordHash = await hashPassword(input.newPassword, this.deps.hashGate)
    }
    const token = randomToken(32)
    const now = clock.now()
    const session: OperatorSessionRow = {
      id: newId('operatorSession'),
      operatorId: found.id,
      tokenHash: sha256Hex(token),
      kind: input.kind,
      userAgent: input.userAgent?.slice(0, 256) ?? null,
      ip: input.ip,
      createdAt: now,
      lastSeenAt: now,
      expiresAt: new Date(now.getTime() + this.deps.sessionTtlS * 1000),
      revokedAt: null,
    }
    await storage.write(async (tx) => {
      const current = await tx.operators.operatorById(found.id)
      // Changed between the check and now (disabled, or its one-time password already replaced): sign in again.
      if (!current || current.disabledAt !== null || current.passwordHash !== found.passwordHash) throw new AppError('invalid_credentials', 'Invalid operator name or password')
      if (passwordHash !== undefined) await tx.operators.updateOperator(found.id, { passwordHash, passwordOneTime: false, updatedAt: now })
      await tx.operators.createOperatorSession(session)
    })
    return { token, session, operator: identityOf(found) }
  }

  /** The live session holding this token, of this kind; null when it is unknown, expired, revoked, or its operator disabled. */
  async session(token: string, kind: OperatorSessionKind): Promise<LiveSession | null> {
    const found = await this.deps.storage.read.operators.operatorSessionByTokenHash(sha256Hex(token))
    if (!found) return null
    const { session, operator } = found
    if (session.kind !== kind || session.revokedAt !== null || operator.disabledAt !== null) return null
    if (session.expiresAt.getTime() <= this.deps.clock.now().getTime()) return null
    return { operator: identityOf(operator), sessionId: session.id, csrf: this.csrfFor(token) }
  }

  /** Ends the session holding this token (signing out); nothing when it is none. */
  async signOut(token: string): Promise<void> {
    const found = await this.deps.storage.read.operators.operatorSessionByTokenHash(sha256Hex(token))
    if (!found) return
    await this.deps.storage.write((tx) => tx.operators.revokeOperatorSession(found.session.id, this.deps.clock.now()))
  }

  /** The CSRF token of the session holding `token`. */
  csrfFor(token: string): string {
    return new Bun.CryptoHasher('sha256', this.deps.csrfKey).update(`csrf:${token}`).digest('hex')
  }

  /** True when `given` is the CSRF token of the session holding `token` (constant time). */
  csrfMatches(token: string, given: string): boolean {
    return constantTimeEqual(given, this.csrfFor(token))
  }
}
