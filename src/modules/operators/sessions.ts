// Operators signing in, and their sessions (contract §11). An operator
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
import { isStorageUnavailable } from '../../db/errors'
import { constantTimeEqual, randomToken, sha256Hex } from '../../shared/crypto'
import { AppError } from '../../shared/errors'
import { newId } from '../../shared/ids'
import type { Actor, OperatorIdentity } from '../audit/log'
import type { HashTicket } from '../auth/hash-gate'
import { assertPasswordLength, hashPassword, verifyAgainstDummy, verifyPassword } from '../auth/passwords'
import { operatorSubject, rememberSignInPlace, signInCounter, signInPlace, type SignInCounter, type SignInPlace } from '../auth/known-places'
import { clearAttempts, LOGIN_LIMITS, rateLimited, recordAttempt, retryAfter } from '../auth/throttle'
import { identityOf, type OperatorServiceDeps } from './service'
import { sealedName, totpSealKey, totpStep } from './totp'
import type { MasterKey } from '../../shared/sealed'
import type { OperatorRow, OperatorSessionKind, OperatorSessionRow } from './store'

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

export class OperatorSessions {
  private readonly totpKey: MasterKey

  constructor(private readonly deps: OperatorServiceDeps) {
    this.totpKey = totpSealKey(deps.chainKey)
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
      return rememberSignInPlace(tx.auth, operatorSubject(found.id), place, now, 'known-only')
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
