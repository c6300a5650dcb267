// Named operator accounts and their sessions (contract §11). An operator
// signs in with a name and a password (argon2id, through the hash gate like a
// player's); a password arena printed (create, reset) is one-time, so the
// first sign-in with it must set a new one: in the same request on the API
// (`newPassword`), or in the console's choose-your-password step that follows
// the proven one-time password (beginSignIn, passwordStep,
// finishPasswordStep: a signed, short-lived ticket, nothing stored). A session is a random token,
// stored only as its SHA-256: the console keeps it in an HttpOnly cookie, an
// API client sends it as a bearer. The console's CSRF token is an HMAC of the
// session token, so it is never stored and dies with the session.
//
// Signing in is throttled exactly like a player's login (../auth/throttle.ts):
// a place at the hash gate, then the block checked and the attempt counted
// per operator name and per client address in one unit of work, before the
// slow hash. The counters are the players' table, under keys of their own
// (`operator:<name>`, `operator-address:<address>`), so a player spraying
// logins does not lock operators out, nor the other way round. A wrong TOTP
// code counts like a wrong password (the attempt stays counted), so codes
// cannot be guessed faster than passwords. From a place the operator signed
// in from before (an address, or the console's device cookie: see
// ../auth/known-places.ts) the attempt counts on that place's own counter, so
// strangers failing on the name elsewhere lock nobody out, at the password
// step or the code step.
//
// Signing in is not recorded in the audit log (it changes no data); the
// session row itself (created, address, user agent) is the record of it.
import type { Storage } from '../../db/storage'
import { isStorageUnavailable, UniqueViolationError } from '../../db/errors'
import type { Clock } from '../../shared/clock'
import { constantTimeEqual, randomToken, sha256Hex } from '../../shared/crypto'
import { AppError } from '../../shared/errors'
import { newId } from '../../shared/ids'
import type { Actor, OperatorIdentity } from '../audit/log'
import type { HashGate, HashTicket } from '../auth/hash-gate'
import { assertPasswordLength, hashPassword, verifyAgainstDummy, verifyPassword } from '../auth/passwords'
import { operatorSubject, rememberSignInPlace, signInCounter, signInPlace, type SignInCounter, type SignInPlace } from '../auth/known-places'
import { clearAttempts, LOGIN_LIMITS, rateLimited, recordAttempt, retryAfter } from '../auth/throttle'
import type { OperatorRole } from './roles'
import { newTotpSecret, sealedName, totpSealKey, totpStep, totpUri } from './totp'
import type { MasterKey } from '../../shared/sealed'
import type { Operator } from './model'
import type { OperatorRow, OperatorSessionKind, OperatorSessionRow } from './store'

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
  /** The device token this client kept from an earlier sign-in (the console's cookie, the API's `x-arena-device`), if any. */
  deviceToken?: string | null | undefined
}

export interface SignedIn {
  token: string
  /** The device token the client should keep (the one it sent when that is this operator's, else a new one). */
  deviceToken: string
  session: OperatorSessionRow
  operator: OperatorIdentity
}

/**
 * How long the console's choose-your-password step stays open after the
 * one-time password was proven: long enough to think of a password, short
 * enough that a ticket left in a browser is soon worth nothing.
 */
export const PASSWORD_STEP_TTL_MS = 10 * 60_000

/** The console's choose-your-password step: whose, and until when. */
export interface PasswordStep {
  operator: OperatorIdentity
  expiresAt: Date
}

/** A step ticket as stepTicket writes it: operator id, TOTP step (`n`: none), expiry in ms, HMAC. */
const STEP_TICKET = /^(opr_[0-9a-f]{32})\.(n|[0-9]{1,12})\.([0-9]{13})\.([0-9a-f]{64})$/

/** A sign-in whose name, password and code were checked: what opening its session needs. */
interface ProvenSignIn {
  operator: OperatorRow
  /** The TOTP step of the code given, once enrolled. */
  step: number | null
  /** The throttle counter the attempt counted on, cleared when the session opens (null: nothing counted). */
  counter: SignInCounter | null
  place: SignInPlace
}

/** An operator's session as the console shows it (never its token). */
export interface OperatorSessionView {
  id: string
  kind: OperatorSessionKind
  userAgent: string | null
  ip: string | null
  createdAt: string
  lastSeenAt: string
  expiresAt: string
  revokedAt: string | null
  /** The session asking (when the caller said which one it is). */
  current?: boolean
}

/** A live session: who it is, and (console) its CSRF token. */
export interface LiveSession {
  operator: OperatorIdentity
  sessionId: string
  csrf: string
}

/** lastSeenAt is written at most once a minute per session: a page of requests is one write, not one each. */
const LAST_SEEN_RESOLUTION_MS = 60_000

const NAME = /^[a-z0-9][a-z0-9._-]{1,31}$/i
/** The admin token's operator name (src/modules/admin/index.ts, TOKEN_OPERATOR): no account may take it. */
export const TOKEN_NAME = 'token'

export function identityOf(row: OperatorRow): OperatorIdentity {
  return { id: row.id, name: row.name, role: row.role }
}

/** The throttle keys of an operator sign-in: the name as typed (known or not, counted alike) and the client's address. */
export function operatorThrottleKeys(name: string, address: string | null): { account: string; address: string } {
  return { account: `operator:${name.trim().toLowerCase()}`, address: `operator-address:${(address ?? 'unknown').toLowerCase()}` }
}

export function sessionView(row: OperatorSessionRow, currentSessionId?: string): OperatorSessionView {
  return {
    id: row.id,
    kind: row.kind,
    userAgent: row.userAgent,
    ip: row.ip,
    createdAt: row.createdAt.toISOString(),
    lastSeenAt: row.lastSeenAt.toISOString(),
    expiresAt: row.expiresAt.toISOString(),
    revokedAt: row.revokedAt?.toISOString() ?? null,
    ...(currentSessionId !== undefined ? { current: row.id === currentSessionId } : {}),
  }
}

function notFound(): AppError {
  return new AppError('not_found', 'No such operator')
}

/** The throttle counter of an operator's re-authentication (its session's own, as a known sign-in place's). */
function reauthKey(operatorId: string): string {
  return `operator-reauth:${operatorId}`
}

/** A TOTP code refused at set-up or removal: 422 on the form's `code` field (never 401, which would read as a lost session). */
function wrongCode(message: string): AppError {
  return new AppError('validation_failed', 'Request failed validation', { details: [{ path: 'body/code', message }] })
}

export function operatorView(row: OperatorRow): Operator {
  return { id: row.id, name: row.name, role: row.role, totpEnabled: row.totpEnabledAt !== null, disabled: row.disabledAt !== null, createdAt: row.createdAt.toISOString() }
}

export class OperatorService {
  private readonly totpKey: MasterKey

  constructor(private readonly deps: OperatorServiceDeps) {
    this.totpKey = totpSealKey(deps.chainKey)
  }

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

  /** The operator's sessions, newest first, ended ones included; `currentSessionId` marks the one asking. */
  async sessions(operatorId: string, currentSessionId?: string): Promise<OperatorSessionView[]> {
    return (await this.deps.storage.read.operators.operatorSessions(operatorId)).map((row) => sessionView(row, currentSessionId))
  }

  /** Ends one of the operator's sessions; 404 when the operator has no such session. Ending an ended one changes nothing and records nothing. */
  async revokeSession(operatorId: string, sessionId: string, by: Actor): Promise<OperatorSessionView> {
    const now = this.deps.clock.now()
    const row = await this.deps.storage.write(async (tx) => {
      const session = await tx.operators.operatorSessionById(sessionId)
      if (!session || session.operatorId !== operatorId) throw new AppError('not_found', 'No such session')
      if (session.revokedAt !== null) return session
      await tx.operators.revokeOperatorSession(sessionId, now)
      await by.record(tx, { action: 'operator.session.revoke', target: operatorId, details: { sessionId } })
      return { ...session, revokedAt: now }
    })
    return sessionView(row)
  }

  /**
   * Asks a signed-in operator for its password again (and, when `code` is
   * not undefined, a current code of its enabled TOTP), before setting up or
   * removing TOTP: a stolen session (a console cookie, an API bearer) alone
   * must not be able to add a second factor the owner does not hold (locking
   * the owner out) or strip the one the owner has.
   *
   * Each try is a sign-in guess, throttled with the sign-in's limit
   * (LOGIN_LIMITS.account). A session is a place its operator signed in
   * from, so, as a known sign-in place (../auth/known-places.ts), its tries
   * count on a counter of their own (`operator-reauth:<operator id>`),
   * checked and counted in one unit of work before the slow hash: strangers
   * failing on the name elsewhere cannot block the owner's own changes, and
   * parallel guesses are counted one by one. A wrong password or code also
   * counts as a failure of the name (`operator:<name>`), so a thief's guesses
   * here use up the budget of guesses by sign-in from unknown places. The
   * own counter is cleared once every factor asked for was right. 429
   * rate_limited while it is blocked; 403 forbidden for a wrong password; 422
   * (body/code) for a missing, wrong or already used code. Answers the
   * operator row and the code's step.
   */
  private async reauthenticate(operatorId: string, password: string, code: string | undefined): Promise<{ row: OperatorRow; step: number | null }> {
    const { storage, clock, hashGate } = this.deps
    const key = reauthKey(operatorId)
    hashGate.refuseIfFull()
    let ticket: HashTicket | undefined
    let found: OperatorRow | null = null
    let blockedForS: number | null
    try {
      blockedForS = await storage.write(async (tx) => {
        ticket?.cancel()
        ticket = hashGate.admit()
        const now = clock.now()
        found = await tx.operators.operatorById(operatorId)
        if (!found) throw notFound()
        const blocked = await retryAfter(tx.auth, [key], now)
        if (blocked === null) await recordAttempt(tx.auth, key, LOGIN_LIMITS.account, now)
        else ticket.cancel()
        return blocked
      })
    } catch (error) {
      ticket?.cancel()
      throw error
    }
    if (blockedForS !== null) throw rateLimited(blockedForS, 'Too many wrong passwords or codes; try again later')
    const row = found as unknown as OperatorRow
    if (!(await verifyPassword(password, row.passwordHash, ticket!))) {
      await this.failureOfName(row)
      throw new AppError('forbidden', 'Password is incorrect')
    }
    let step: number | null = null
    if (code !== undefined) {
      if (row.totpEnabledAt === null || row.totpSecretSealed === null) throw new AppError('conflict', 'TOTP is not enabled')
      step = totpStep(await this.totpKey.open(row.totpSecretSealed, sealedName(row.id)), code, clock.now())
      if (step === null || (row.totpLastStep !== null && step <= row.totpLastStep)) {
        await this.failureOfName(row)
        throw wrongCode('Not the current code of your authenticator, or one already used: wait for the next one')
      }
    }
    await storage.write((tx) => clearAttempts(tx.auth, key))
    return { row, step }
  }

  /** A wrong password or code at re-authentication: one failure of the operator's name, as a failed sign-in from an unknown place (not counted while the name is blocked). */
  private async failureOfName(row: OperatorRow): Promise<void> {
    const name = operatorThrottleKeys(row.nameKey, null).account
    const { storage, clock } = this.deps
    await storage.write(async (tx) => {
      const now = clock.now()
      if ((await retryAfter(tx.auth, [name], now)) === null) await recordAttempt(tx.auth, name, LOGIN_LIMITS.account, now)
    })
  }

  /**
   * Starts enrolling the operator's own TOTP, after its password (see
   * reauthenticate): a new secret, stored sealed and pending (sign-in does
   * not ask for a code until confirmTotp). Answered once, to be shown to the
   * operator; beginning again replaces a pending secret. 409 conflict when
   * TOTP is already enabled (turn it off first).
   */
  async beginTotp(operatorId: string, password: string): Promise<{ secret: string; uri: string }> {
    const found = await this.deps.storage.read.operators.operatorById(operatorId)
    if (!found) throw notFound()
    // Refused before the password is asked: nothing to guess for, nothing counted.
    if (found.totpEnabledAt !== null) throw new AppError('conflict', 'TOTP is enabled already: turn it off before enrolling again')
    await this.reauthenticate(operatorId, password, undefined)
    const secret = newTotpSecret()
    const sealed = await this.totpKey.seal(secret, sealedName(operatorId))
    const now = this.deps.clock.now()
    const name = await this.deps.storage.write(async (tx) => {
      const current = await tx.operators.operatorById(operatorId)
      if (!current) throw notFound()
      if (current.totpEnabledAt !== null) throw new AppError('conflict', 'TOTP is enabled already: turn it off before enrolling again')
      await tx.operators.updateOperator(operatorId, { totpSecretSealed: sealed, totpLastStep: null, updatedAt: now })
      return current.name
    })
    return { secret, uri: totpUri(secret, name) }
  }

  /**
   * Confirms enrolment with a code from the authenticator: from now on,
   * sign-in asks for a code. 409 conflict when nothing is pending; 422 when
   * the code is wrong (the secret stays pending: try again). A wrong code
   * counts like a wrong code at re-authentication (its own counter, and a
   * failure of the name), and a blocked counter is 429 rate_limited: a
   * pending secret is no free way to guess codes.
   */
  async confirmTotp(operatorId: string, code: string, by: Actor): Promise<Operator> {
    const { storage, clock } = this.deps
    const found = await storage.read.operators.operatorById(operatorId)
    if (!found) throw notFound()
    if (found.totpEnabledAt !== null) throw new AppError('conflict', 'TOTP is enabled already')
    if (found.totpSecretSealed === null) throw new AppError('conflict', 'No TOTP enrolment is pending: begin one first')
    const key = reauthKey(operatorId)
    const blocked = await retryAfter(storage.read.auth, [key], clock.now())
    if (blocked !== null) throw rateLimited(blocked, 'Too many wrong passwords or codes; try again later')
    const secret = await this.totpKey.open(found.totpSecretSealed, sealedName(operatorId))
    const now = clock.now()
    const step = totpStep(secret, code, now)
    if (step === null) {
      await storage.write(async (tx) => {
        // Counted where the block is checked: confirmations racing in parallel cannot all slip under it.
        if ((await retryAfter(tx.auth, [key], now)) === null) await recordAttempt(tx.auth, key, LOGIN_LIMITS.account, now)
      })
      await this.failureOfName(found)
      throw wrongCode('Not the current code of this secret')
    }
    const row = await storage.write(async (tx) => {
      const current = await tx.operators.operatorById(operatorId)
      // Enrolment restarted (another secret) or finished meanwhile: this code is not for it.
      if (!current || current.totpSecretSealed !== found.totpSecretSealed || current.totpEnabledAt !== null) throw new AppError('conflict', 'The TOTP enrolment changed meanwhile: begin again')
      await tx.operators.updateOperator(operatorId, { totpEnabledAt: now, totpLastStep: step, updatedAt: now })
      await by.record(tx, { action: 'operator.totp.enable', target: operatorId, details: { name: current.name } })
      return { ...current, totpEnabledAt: now, totpLastStep: step, updatedAt: now }
    })
    return operatorView(row)
  }

  /**
   * The operator turns its own TOTP off: its password and, once TOTP is
   * enabled, a current code of it (see reauthenticate); the secret is
   * dropped. A pending enrolment (never confirmed) needs the password only.
   * 409 conflict when there is nothing enrolled.
   */
  async removeOwnTotp(operatorId: string, input: { password: string; code?: string | undefined }, by: Actor): Promise<Operator> {
    const found = await this.deps.storage.read.operators.operatorById(operatorId)
    if (!found) throw notFound()
    if (found.totpSecretSealed === null && found.totpEnabledAt === null) throw new AppError('conflict', 'TOTP is not enrolled')
    const enabled = found.totpEnabledAt !== null
    const { row: checked } = await this.reauthenticate(operatorId, input.password, enabled ? (input.code ?? '') : undefined)
    return this.dropTotp(operatorId, by, (current) => current.totpSecretSealed === checked.totpSecretSealed && current.totpEnabledAt?.getTime() === checked.totpEnabledAt?.getTime())
  }

  /**
   * An admin turns another operator's TOTP off (one who lost the
   * authenticator, or the command line's break-glass): the secret is
   * dropped. An operator acting on itself is refused with 403 forbidden: its
   * own TOTP comes off only with its password and a code (removeOwnTotp),
   * or a stolen admin session could strip it here. 409 conflict when there
   * is none.
   */
  async disableTotp(operatorId: string, by: Actor): Promise<Operator> {
    if (by.operator.id !== null && by.operator.id === operatorId) {
      throw new AppError('forbidden', 'Turn off your own authenticator on your account page, with your password and a current code')
    }
    return this.dropTotp(operatorId, by, () => true)
  }

  /** Drops the operator's TOTP secret and records it, if `unchanged` still holds for the row read in this unit of work. */
  private async dropTotp(operatorId: string, by: Actor, unchanged: (current: OperatorRow) => boolean): Promise<Operator> {
    const now = this.deps.clock.now()
    const row = await this.deps.storage.write(async (tx) => {
      const current = await tx.operators.operatorById(operatorId)
      if (!current) throw notFound()
      if (current.totpSecretSealed === null && current.totpEnabledAt === null) throw new AppError('conflict', 'TOTP is not enrolled')
      // Enrolled again (another secret) between the check and now: what was confirmed is not what is here.
      if (!unchanged(current)) throw new AppError('conflict', 'The authenticator changed meanwhile: try again')
      await tx.operators.updateOperator(operatorId, { totpSecretSealed: null, totpEnabledAt: null, totpLastStep: null, updatedAt: now })
      await by.record(tx, { action: 'operator.totp.disable', target: operatorId, details: { name: current.name, wasEnabled: current.totpEnabledAt !== null } })
      return { ...current, totpSecretSealed: null, totpEnabledAt: null, totpLastStep: null, updatedAt: now }
    })
    return operatorView(row)
  }

  /**
   * Checks a name, a password and (once enrolled) a TOTP code, and opens a
   * session. Throttled like a player's login (see the top of this file):
   * 429 rate_limited with Retry-After while the name or the address is
   * blocked. Every failure of the password is the same 401, whether the name
   * exists, is disabled or the password is wrong; with the right password,
   * 401 totp_required when the code is missing, 401 invalid_totp when it is
   * wrong or was used already, 403 password_change_required on a one-time
   * password without newPassword.
   */
  async signIn(input: SignInInput): Promise<SignedIn> {
    const proven = await this.prove(input)
    let passwordHash: string | undefined
    if (proven.operator.passwordOneTime) {
      if (input.newPassword === undefined) throw new AppError('password_change_required', 'This password was for one sign-in: choose a new password (newPassword)')
      passwordHash = await this.newPasswordHash(input.newPassword)
    }
    return this.openSession(proven, passwordHash, input)
  }

  /**
   * The console's sign-in: as signIn, except that a proven one-time password
   * answers the choose-your-password step (a signed ticket, see
   * passwordStep) instead of a 403, whatever `newPassword` says; the console
   * finishes it with finishPasswordStep.
   */
  async beginSignIn(input: Omit<SignInInput, 'newPassword'>): Promise<{ signedIn: SignedIn } | { passwordStep: PasswordStep & { ticket: string } }> {
    const proven = await this.prove(input)
    if (!proven.operator.passwordOneTime) return { signedIn: await this.openSession(proven, undefined, input) }
    const expiresAt = new Date(this.deps.clock.now().getTime() + PASSWORD_STEP_TTL_MS)
    const ticket = this.stepTicket(proven.operator, proven.step, expiresAt.getTime())
    return { passwordStep: { ticket, operator: identityOf(proven.operator), expiresAt } }
  }

  /**
   * The step a console ticket stands for: its operator and expiry, or null
   * when it is malformed, forged, expired, or no longer matches the operator
   * (the one-time password replaced or reset, the authenticator changed, the
   * operator disabled). Reading it counts nothing.
   */
  async passwordStep(ticket: string): Promise<PasswordStep | null> {
    const opened = await this.openTicket(ticket)
    return opened === null ? null : { operator: identityOf(opened.operator), expiresAt: opened.expiresAt }
  }

  /**
   * Finishes the console's first sign-in: the new password (the rule of
   * every new password: 8 to 128 characters, 422 on `body/newPassword`)
   * replaces the one-time one and a session opens, in one unit of work that
   * checks again the one-time password is still the one proven (a ticket
   * opens one session: a second finish, or one racing it, is 401). A refused
   * password counts towards no throttle: the one-time password was proven
   * when the ticket was made. 401 invalid_credentials for a ticket that
   * passwordStep refuses.
   */
  async finishPasswordStep(input: { ticket: string; newPassword: string } & Omit<SignInInput, 'name' | 'password' | 'newPassword' | 'totp'>): Promise<SignedIn> {
    const opened = await this.openTicket(input.ticket)
    if (opened === null) throw new AppError('invalid_credentials', 'This step has expired or was used: sign in again with the one-time password')
    const passwordHash = await this.newPasswordHash(input.newPassword)
    return this.openSession({ operator: opened.operator, step: opened.step, counter: null, place: signInPlace(input.ip, input.deviceToken) }, passwordHash, input)
  }

  /** A new password checked against the rule of every new password, then hashed through the gate. */
  private async newPasswordHash(newPassword: string): Promise<string> {
    assertPasswordLength(newPassword, 'body/newPassword')
    return hashPassword(newPassword, this.deps.hashGate)
  }

  /**
   * The name, password and code of a sign-in, counted and checked (the top
   * of this file). A one-time password proven (with its code, once
   * enrolled) clears the attempt it counted: what follows is choosing a new
   * password, which may take tries and is no guess.
   */
  private async prove(input: Omit<SignInInput, 'newPassword'>): Promise<ProvenSignIn> {
    const { storage, clock } = this.deps
    const keys = operatorThrottleKeys(input.name, input.ip)
    this.deps.hashGate.refuseIfFull()
    const found = await storage.read.operators.operatorByNameKey(input.name.trim().toLowerCase())
    // As SignIn.login (auth/sign-in.ts): a place at the hash gate, the block checked and
    // the attempt counted in one unit of work, before the slow hash. The
    // ticket is run or cancelled on every path.
    const place = signInPlace(input.ip, input.deviceToken)
    let counter: SignInCounter | undefined
    let ticket: HashTicket | undefined
    let blockedForS: number | null
    try {
      blockedForS = await storage.write(async (tx) => {
        ticket?.cancel()
        ticket = this.deps.hashGate.admit()
        const now = clock.now()
        // The name's counter, or the known place's own (../auth/known-places.ts).
        counter = await signInCounter(tx.auth, keys.account, found ? operatorSubject(found.id) : null, place, now)
        const blocked = await retryAfter(tx.auth, [counter.key, keys.address], now)
        if (blocked === null) await recordAttempt(tx.auth, counter.key, counter.limit, now)
        else ticket.cancel()
        return blocked
      })
    } catch (error) {
      ticket?.cancel()
      throw error
    }
    if (blockedForS !== null) throw rateLimited(blockedForS, 'Too many failed sign-ins; try again later')
    const valid = found ? await verifyPassword(input.password, found.passwordHash, ticket!) : await verifyAgainstDummy(input.password, ticket!)
    if (!found || !valid || found.disabledAt !== null) {
      await storage.write((tx) => recordAttempt(tx.auth, keys.address, LOGIN_LIMITS.address, clock.now()))
      throw new AppError('invalid_credentials', 'Invalid operator name or password')
    }
    let step: number | null = null
    if (found.totpEnabledAt !== null) {
      // The attempt counted above stays counted until a sign-in succeeds: a missing or wrong code costs one attempt.
      if (input.totp === undefined || input.totp === '') throw new AppError('totp_required', 'This operator signs in with a TOTP code (totp)')
      const secret = await this.totpKey.open(found.totpSecretSealed!, sealedName(found.id))
      step = totpStep(secret, input.totp, clock.now())
      if (step === null || (found.totpLastStep !== null && step <= found.totpLastStep)) {
        await storage.write((tx) => recordAttempt(tx.auth, keys.address, LOGIN_LIMITS.address, clock.now()))
        throw new AppError('invalid_totp', 'Wrong TOTP code, or one already used: wait for the next one')
      }
    }
    const counted = counter!
    if (found.passwordOneTime) await storage.write((tx) => clearAttempts(tx.auth, counted.key))
    return { operator: found, step, counter: counted, place }
  }

  /**
   * Opens the session of a proven sign-in, with the new password when the
   * proven one was one-time, in one unit of work that checks again what was
   * proven: the operator still enabled with the same password hash, the
   * code's step still unused.
   */
  private async openSession(proven: ProvenSignIn, passwordHash: string | undefined, input: Pick<SignInInput, 'kind' | 'userAgent' | 'ip'>): Promise<SignedIn> {
    const { operator: found, step, counter, place } = proven
    const token = randomToken(32)
    const now = this.deps.clock.now()
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
    const deviceToken = await this.deps.storage.write(async (tx) => {
      const current = await tx.operators.operatorById(found.id)
      // Changed between the check and now (disabled, or its one-time password already replaced): sign in again.
      if (!current || current.disabledAt !== null || current.passwordHash !== found.passwordHash) throw new AppError('invalid_credentials', 'Invalid operator name or password')
      if (step !== null) {
        // Checked again here, where it is written: two sign-ins racing with one code cannot both pass (on PostgreSQL one of them runs again and sees the other's step).
        if (current.totpEnabledAt === null || current.totpSecretSealed !== found.totpSecretSealed || (current.totpLastStep !== null && step <= current.totpLastStep)) {
          throw new AppError('invalid_totp', 'Wrong TOTP code, or one already used: wait for the next one')
        }
      } else if (current.totpEnabledAt !== null) {
        throw new AppError('totp_required', 'This operator signs in with a TOTP code (totp)')
      }
      await tx.operators.updateOperator(found.id, {
        ...(passwordHash !== undefined ? { passwordHash, passwordOneTime: false } : {}),
        ...(step !== null ? { totpLastStep: step } : {}),
        updatedAt: now,
      })
      await tx.operators.createOperatorSession(session)
      if (counter !== null) await clearAttempts(tx.auth, counter.key)
      return rememberSignInPlace(tx.auth, operatorSubject(found.id), place, now)
    })
    return { token, deviceToken, session, operator: identityOf(found) }
  }

  /**
   * A ticket for the choose-your-password step: `<operator id>.<TOTP step or
   * n>.<expiry, ms>.<HMAC>`, the HMAC (under the CSRF key) covering those and
   * the operator's current password hash and sealed TOTP secret, so it dies
   * with the one-time password it proves (replaced, or reset) and with the
   * authenticator it was made with. Nothing is stored.
   */
  private stepTicket(operator: OperatorRow, step: number | null, expiresMs: number): string {
    const claims = `${operator.id}.${step ?? 'n'}.${expiresMs}`
    return `${claims}.${this.stepMac(claims, operator)}`
  }

  private stepMac(claims: string, operator: OperatorRow): string {
    return new Bun.CryptoHasher('sha256', this.deps.csrfKey).update(`password-step:${claims}:${operator.passwordHash}:${operator.totpSecretSealed ?? ''}`).digest('hex')
  }

  private async openTicket(ticket: string): Promise<{ operator: OperatorRow; step: number | null; expiresAt: Date } | null> {
    const parts = STEP_TICKET.exec(ticket)
    if (parts === null) return null
    const [, operatorId, stepText, expiresText, mac] = parts as unknown as [string, string, string, string, string]
    const expiresMs = Number(expiresText)
    if (expiresMs <= this.deps.clock.now().getTime()) return null
    const operator = await this.deps.storage.read.operators.operatorById(operatorId)
    if (operator === null || !constantTimeEqual(mac, this.stepMac(`${operatorId}.${stepText}.${expiresText}`, operator))) return null
    if (!operator.passwordOneTime || operator.disabledAt !== null) return null
    return { operator, step: stepText === 'n' ? null : Number(stepText), expiresAt: new Date(expiresMs) }
  }

  /** The live session holding this token, of this kind; null when it is unknown, expired, revoked, or its operator disabled. */
  async session(token: string, kind: OperatorSessionKind): Promise<LiveSession | null> {
    const found = await this.deps.storage.read.operators.operatorSessionByTokenHash(sha256Hex(token))
    if (!found) return null
    const { session, operator } = found
    if (session.kind !== kind || session.revokedAt !== null || operator.disabledAt !== null) return null
    const now = this.deps.clock.now()
    if (session.expiresAt.getTime() <= now.getTime()) return null
    if (now.getTime() - session.lastSeenAt.getTime() >= LAST_SEEN_RESOLUTION_MS) {
      try {
        await this.deps.storage.write((tx) => tx.operators.touchOperatorSession(session.id, now))
      } catch (error) {
        // Bookkeeping only: a full or failing disk must not turn a live session into a 503 for reads.
        if (!isStorageUnavailable(error)) throw error
      }
    }
    return { operator: identityOf(operator), sessionId: session.id, csrf: this.csrfFor(token) }
  }

  /** Ends the session holding this token (signing out); nothing when it is none. */
  async signOut(token: string): Promise<void> {
    const found = await this.deps.storage.read.operators.operatorSessionByTokenHash(sha256Hex(token))
    if (!found || found.session.revokedAt !== null) return
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
