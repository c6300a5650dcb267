// An operator's second factor (contract §11): enrolling its own TOTP
// (begin, then confirm with a code), removing it (its password and a code),
// and an admin turning another operator's off. Each step that adds or strips
// a factor asks the signed-in operator for its password again
// (reauthenticate): a stolen session alone can do neither. The secret is
// stored sealed under a key derived from the chain key (./totp.ts).
import { AppError } from '../../shared/errors'
import type { Actor } from '../audit/log'
import type { HashTicket } from '../auth/hash-gate'
import { verifyPassword } from '../auth/passwords'
import { clearAttempts, LOGIN_LIMITS, rateLimited, recordAttempt, retryAfter } from '../auth/throttle'
import type { MasterKey } from '../../shared/sealed'
import type { Operator } from './model'
import { notFound, operatorView, type OperatorServiceDeps } from './service'
import { operatorThrottleKeys } from './sessions'
import { newTotpSecret, sealedName, totpSealKey, totpStep, totpUri } from './totp'
import type { OperatorRow } from './store'

/** The throttle counter of an operator's re-authentication (its session's own, as a known sign-in place's). */
function reauthKey(operatorId: string): string {
  return `operator-reauth:${operatorId}`
}

/** A TOTP code refused at set-up or removal: 422 on the form's `code` field (never 401, which would read as a lost session). */
function wrongCode(message: string): AppError {
  return new AppError('validation_failed', 'Request failed validation', { details: [{ path: 'body/code', message }] })
}

export class OperatorTotp {
  private readonly totpKey: MasterKey

  constructor(private readonly deps: Pick<OperatorServiceDeps, 'storage' | 'clock' | 'hashGate' | 'chainKey'>) {
    this.totpKey = totpSealKey(deps.chainKey)
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
}
