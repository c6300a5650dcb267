// Signing in (contract §1): an identifier and a password, checked against
// the login throttle (./throttle.ts) and the places the account signed in
// from before (./known-places.ts), open a session with its first refresh
// token. The session's life after that is ./service.ts's.
import { isStorageUnavailable } from '../../db/errors'
import type { Storage, Transaction } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { randomToken, sha256Hex } from '../../shared/crypto'
import { AppError } from '../../shared/errors'
import { newId } from '../../shared/ids'
import type { AccessTokens } from './access-tokens'
import type { SecurityEventInput } from '../security/event-log'
import type { TokenResponse } from './model'
import { defaultHashGate, type HashGate, type HashTicket } from './hash-gate'
import { verifyAgainstDummy, verifyPassword } from './passwords'
import { issueTokens, isLive, revokeSessions } from './service'
import { bannedError } from './standing'
import { banInForce, type UserAccount } from './store'
import { rememberSignInPlace, signInCounter, signInPlace, userSubject, type SignInCounter, type SignInPlace } from './known-places'
import { accountKey, addressKey, clearAttempts, LOGIN_LIMITS, recordAttempt, retryAfter } from './throttle'

const MAX_USER_AGENT = 256
/**
 * Session rows (live or ended) one account keeps: a login past it removes the
 * oldest ended ones, then ends the oldest live one (docs/operations.md, "How
 * the database's growth is bounded"). New-device detection remembers the
 * devices of these rows.
 */
export const MAX_AUTH_SESSIONS = 100

/** A password sign-in: the identifier (email or username), the password, and where it comes from. */
export interface PasswordSignInInput {
  identifier: string
  password: string
  address: string
  userAgent: string | null
  deviceToken?: string | null
}

export interface SignInDeps {
  storage: Storage
  clock: Clock
  accessTokens: AccessTokens
  refreshTtlS: number
  /** Throttled logins and new-device logins go to the security log. */
  onSecurityEvent?: (event: SecurityEventInput) => void
  /** Bounds concurrent argon2id work (default: the process's gate). */
  hashGate?: HashGate
}

export class SignIn {
  private readonly hashGate: HashGate

  constructor(private readonly deps: SignInDeps) {
    this.hashGate = deps.hashGate ?? defaultHashGate()
  }

  /**
   * Checks an identifier and a password and opens a session. Answers, beside
   * the tokens, the device token the client should keep and send back as
   * `deviceToken` on its next sign-ins (known-places.ts): the one it sent,
   * when well-formed, else a new one. From a place the account signed in
   * from before, failures elsewhere do not block it.
   */
  async login(input: PasswordSignInInput): Promise<TokenResponse & { deviceToken: string }> {
    const { user, counted, place } = await this.prove(input)
    const { storage, clock } = this.deps
    const now = clock.now()
    const sessionId = newId('authSession')
    const refreshToken = randomToken(32)
    let opened: { newDevice: boolean; deviceToken: string }
    try {
      opened = await this.openSession(user, sessionId, refreshToken, counted.key, place, now, input.userAgent)
    } catch (error) {
      // The password was right but the session could not be stored (a full or
      // failing disk: 503). The attempt counted above must not stay counted,
      // or five such 503s would lock the owner out for 15 minutes: clear it on
      // its own, best effort (the disk may refuse this too).
      if (isStorageUnavailable(error)) {
        try {
          await storage.write((tx) => clearAttempts(tx.auth, counted.key))
        } catch {
          // Still failing: the count stays, and expires with its window.
        }
      }
      throw error
    }
    this.reportNewDevice(user.id, sessionId, opened.newDevice, input)
    return { ...(await issueTokens(this.deps.accessTokens, user, sessionId, refreshToken)), deviceToken: opened.deviceToken }
  }

  /**
   * Checks an identifier and a password on the login's throttle, and opens
   * no session: for a page that only needs to know who the player is (the
   * device-code page, src/device-page/). The owner's success forgets its own
   * failures, as a login does; a banned or deleted account is refused after
   * the right password, as a login is.
   */
  async check(input: PasswordSignInInput): Promise<UserAccount> {
    const { user, counted } = await this.prove(input)
    await this.deps.storage.write(async (tx) => {
      const standing = await tx.auth.standing(user.id)
      if (standing === null || standing.deletedAt !== null) throw new AppError('invalid_credentials', 'Invalid identifier or password')
      if (banInForce(standing.ban, this.deps.clock.now())) throw bannedError(standing.ban!)
      await clearAttempts(tx.auth, counted.key)
    })
    return user
  }

  /** The identifier and password checked, counted on the throttle before the slow hash (429 when blocked, 401 when wrong): whose they are, and the counter the attempt counted on. */
  private async prove(input: PasswordSignInInput): Promise<{ user: UserAccount; counted: SignInCounter; place: SignInPlace }> {
    const { storage, clock } = this.deps
    // Refused before any read or write when the gate is full (see refuseIfFull).
    this.hashGate.refuseIfFull()
    const lookup = input.identifier.trim().toLowerCase()
    const found = lookup.includes('@') ? await storage.read.auth.userByEmailKey(lookup) : await storage.read.auth.userByUsernameKey(lookup)
    // A deleted account is no account: its erased key (`erased:<id>`) names it, but nobody may log in as it.
    const user = found?.deletedAt === null ? found : null
    const account = accountKey(user?.id, input.identifier)
    const address = addressKey(input.address)
    const place = signInPlace(input.address, input.deviceToken)
    // The name's counter, or (from a place this account signed in from) the place's own: decided in the unit of work below.
    let counter: SignInCounter | undefined

    // Admit at the hash gate, check and count in one unit of work, before the
    // slow hash, so parallel guesses are counted one by one (see throttle.ts).
    //
    // A place at the hash gate first, known or unknown user alike. A login
    // the gate refuses (503 + Retry-After) was never judged: it leaves here,
    // before the attempt is counted (its unit of work rolls back, having
    // written nothing) and before any session exists. (So while the gate is
    // full, even a blocked account hears 503, not 429.) Admission happens
    // inside the unit of work, next to the block check, so a burst's logins
    // waiting for their turn to be checked hold no place at the gate: a login
    // that turns out blocked gives its place back before the next is admitted.
    // Once admitted, the ticket is run or cancelled on every path: no slot leaks.
    let ticket: HashTicket | undefined
    let blockedForS: number | null
    try {
      blockedForS = await storage.write(async (tx) => {
        // An engine may run a unit of work again (PostgreSQL, on a
        // serialization failure): the ticket of an attempt that did not
        // commit is given back first, or its slot would be held for good.
        ticket?.cancel()
        ticket = this.hashGate.admit()
        const now = clock.now()
        counter = await signInCounter(tx.auth, account, user ? userSubject(user.id) : null, place, now)
        const blocked = await retryAfter(tx.auth, [counter.key, address], now)
        if (blocked === null) await recordAttempt(tx.auth, counter.key, counter.limit, now)
        else ticket.cancel()
        return blocked
      })
    } catch (error) {
      ticket?.cancel()
      throw error
    }
    const admitted = ticket!
    const counted = counter!
    if (blockedForS !== null) {
      this.deps.onSecurityEvent?.({
        userId: user?.id ?? null,
        source: 'server',
        kind: 'LOGIN_THROTTLED',
        level: 'WARN',
        details: { address: input.address, retryAfterS: blockedForS },
      })
      throw new AppError('rate_limited', 'Too many failed logins; try again later', {
        headers: { 'retry-after': String(blockedForS) },
      })
    }

    // An account without a password identity (contract §13) is checked against the dummy too: no oracle for which accounts have one.
    const valid = user?.passwordHash ? await verifyPassword(input.password, user.passwordHash, admitted) : await verifyAgainstDummy(input.password, admitted)
    if (!user || !user.passwordHash || !valid) {
      await storage.write((tx) => recordAttempt(tx.auth, address, LOGIN_LIMITS.address, clock.now()))
      throw new AppError('invalid_credentials', 'Invalid identifier or password')
    }

    return { user, counted, place }
  }

  /**
   * Opens a session for an account another credential proved (contract §13:
   * a guest secret, a provider's identity, an exchange or device code): the
   * same session, bans, new-device detection, events and remembered places
   * (the device token it sent, adopted as a login's is) as a password login,
   * without the password's throttle. Answers the device token to keep beside
   * the tokens.
   */
  async openFor(user: UserAccount, place: { address: string; userAgent: string | null; deviceToken?: string | null }): Promise<TokenResponse & { deviceToken: string }> {
    const sessionId = newId('authSession')
    const refreshToken = randomToken(32)
    const opened = await this.openSession(user, sessionId, refreshToken, null, signInPlace(place.address, place.deviceToken), this.deps.clock.now(), place.userAgent)
    this.reportNewDevice(user.id, sessionId, opened.newDevice, place)
    return { ...(await issueTokens(this.deps.accessTokens, user, sessionId, refreshToken)), deviceToken: opened.deviceToken }
  }

  private reportNewDevice(userId: string, sessionId: string, newDevice: boolean, place: { address: string; userAgent: string | null }): void {
    if (!newDevice) return
    this.deps.onSecurityEvent?.({
      userId,
      source: 'server',
      kind: 'NEW_DEVICE_LOGIN',
      level: 'SAFE',
      details: { sessionId, address: place.address, userAgent: place.userAgent?.slice(0, MAX_USER_AGENT) ?? null },
    })
  }

  /**
   * Keeps the account below MAX_AUTH_SESSIONS session rows, live or ended,
   * before a login adds one: the oldest ended sessions go first, then, if
   * the account really holds that many live ones, the oldest live ones, which
   * end (`superseded`, with their session.logout event) and go.
   */
  private async makeRoomForSession(tx: Transaction, userId: string, now: Date): Promise<void> {
    const rows = await tx.auth.sessionRowsOf(userId)
    const excess = rows.length - (MAX_AUTH_SESSIONS - 1)
    if (excess <= 0) return
    const ended = rows.filter((row) => !isLive(row, now))
    const victims = [...ended, ...rows.filter((row) => isLive(row, now))].slice(0, excess)
    const live = victims.filter((row) => isLive(row, now)).map((row) => row.id)
    await revokeSessions(tx, this.deps.clock, userId, live, 'superseded')
    await tx.auth.deleteSessions(userId, victims.map((row) => row.id))
  }

  /**
   * Opens the session and remembers where it came from (known-places.ts);
   * whether it is the first from this user agent (a new device), and the
   * device token the client keeps.
   */
  private openSession(
    user: UserAccount,
    sessionId: string,
    refreshToken: string,
    counterKey: string | null,
    place: SignInPlace,
    now: Date,
    userAgent: string | null,
  ): Promise<{ newDevice: boolean; deviceToken: string }> {
    const agent = userAgent?.slice(0, MAX_USER_AGENT) ?? null
    return this.deps.storage.write(async (tx) => {
      // Checked here, in the write that opens the session, not before the
      // hash: a ban committed while the password was being checked is seen
      // (and on PostgreSQL a ban racing this write makes one of the two run
      // again). A wrong password never gets this far: no ban oracle.
      const standing = await tx.auth.standing(user.id)
      if (standing === null || standing.deletedAt !== null) throw new AppError('invalid_credentials', 'Invalid identifier or password')
      if (banInForce(standing.ban, now)) throw bannedError(standing.ban!)
      // The counter this login counted on (the account's, or its known place's): the owner's success forgets its own failures.
      if (counterKey !== null) await clearAttempts(tx.auth, counterKey)
      // A player's client chooses its device token: the one it sent is adopted (known-places.ts).
      const deviceToken = await rememberSignInPlace(tx.auth, userSubject(user.id), place, now, 'adopt')
      // The first login of an account is not a new device: there is no old one.
      const earlier = await tx.auth.earlierSessions(user.id, agent)
      const newDevice = earlier.any && !earlier.sameAgent
      await this.makeRoomForSession(tx, user.id, now)
      await tx.auth.createSession({
        id: sessionId,
        userId: user.id,
        createdAt: now,
        lastUsedAt: now,
        expiresAt: new Date(now.getTime() + this.deps.refreshTtlS * 1000),
        userAgent: agent,
      })
      await tx.auth.issueRefreshToken(sha256Hex(refreshToken), sessionId, now)
      await tx.events.append({ userId: user.id, topic: 'session', type: 'session.login', data: { sessionId, newDevice } }, now)
      return { newDevice, deviceToken }
    })
  }
}
