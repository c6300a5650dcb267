// Devices without a keyboard (contract §13, RFC 8628): a TV, a console or a
// Steam Deck asks for a code pair, shows the player the short `userCode` (and
// the page to type it on), and polls with the long `deviceCode` until the
// player, signed in on that page in a browser, approves or denies it.
//
// What must stay true:
// - the device code is a 256-bit secret, stored only as its SHA-256; the user
//   code is not a credential by itself (it only names the request on a page
//   the player signs in to), so it may travel in a URL;
// - a code lives ARENA_DEVICE_CODE_TTL_S, then answers expired_token, and
//   housekeeping deletes it;
// - a device polling faster than its interval hears slow_down, and its
//   interval grows by 5 s, stored with the code;
// - an approved code hands out tokens once: the spend is a conditional update
//   (approved → spent) in the unit of work that decides, so of two polls at
//   once, on one instance or two, one gets the tokens and the other
//   expired_token (or slow_down).
import type { Storage } from '../../db/storage'
import { UniqueViolationError } from '../../db/errors'
import type { Clock } from '../../shared/clock'
import { randomToken, sha256Hex } from '../../shared/crypto'
import { AppError } from '../../shared/errors'
import type { SecurityEventInput } from '../security/event-log'
import type { DeviceCode } from './device-code-store'
import type { Identities, SignInPlace } from './identities'
import type { TokenResponse } from './model'

/** The first polling interval (RFC 8628's default), and what each slow_down adds to it. */
export const DEVICE_CODE_INTERVAL_S = 5
export const SLOW_DOWN_STEP_S = 5

/** Crockford's base32: no I, L, O or U, so a code read off a TV is not misread. */
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
const USER_CODE_LENGTH = 8
/** How many user codes to draw before giving up on a collision (40 bits each: a second draw is already a rare event). */
const USER_CODE_DRAWS = 4

/** Opens a session for an account resolved earlier: the identities core (./identities.ts). */
export type SessionOpener = Pick<Identities, 'openSession'>

export interface DeviceCodesDeps {
  storage: Storage
  clock: Clock
  /** ARENA_DEVICE_CODE_TTL_S. */
  ttlS: number
  sessions: SessionOpener
  /** An approval goes to the security log: a device now holds (or soon will) the account's tokens. */
  onSecurityEvent?: (event: SecurityEventInput) => void
}

/** A code pair as the device receives it (the route adds the verification URIs). */
export interface IssuedDeviceCode {
  deviceCode: string
  /** `XXXX-XXXX`, as the player reads and types it. */
  userCode: string
  expiresIn: number
  interval: number
}

/** `ABCD1234` as it is shown: `ABCD-1234`. */
export function displayUserCode(stored: string): string {
  return `${stored.slice(0, 4)}-${stored.slice(4)}`
}

/**
 * What the player typed, as stored: upper-case, without dashes or spaces, and
 * read the way Crockford's base32 reads it (I and L are 1, O is 0); null when
 * that is not 8 characters of the alphabet.
 */
export function normalizeUserCode(typed: string): string | null {
  const code = typed
    .toUpperCase()
    .replace(/[\s-]/g, '')
    .replace(/[IL]/g, '1')
    .replace(/O/g, '0')
  if (code.length !== USER_CODE_LENGTH) return null
  for (const ch of code) if (!CROCKFORD.includes(ch)) return null
  return code
}

function drawUserCode(): string {
  // 32 symbols divide 256: a byte's low 5 bits are uniform.
  const bytes = crypto.getRandomValues(new Uint8Array(USER_CODE_LENGTH))
  let code = ''
  for (const byte of bytes) code += CROCKFORD[byte & 31]
  return code
}

/** What a poll found, decided inside its unit of work and answered after it committed (a slow_down's grown interval must commit). */
type PollVerdict = { answer: 'expired' | 'pending' | 'slow_down' | 'denied' } | { answer: 'approved'; userId: string }

/** The page's view of a code the player typed. */
export interface PendingDeviceCode {
  userCode: string
  expiresAt: Date
}

export class DeviceCodes {
  constructor(private readonly deps: DeviceCodesDeps) {}

  /** A new code pair (POST /auth/device-code). */
  async issue(): Promise<IssuedDeviceCode> {
    const { storage, clock, ttlS } = this.deps
    const deviceCode = randomToken(32)
    for (let draw = 1; ; draw++) {
      const now = clock.now()
      const userCode = drawUserCode()
      try {
        await storage.write((tx) =>
          tx.deviceCodes.create({
            deviceCodeHash: sha256Hex(deviceCode),
            userCode,
            status: 'pending',
            userId: null,
            intervalS: DEVICE_CODE_INTERVAL_S,
            lastPolledAt: null,
            createdAt: now,
            expiresAt: new Date(now.getTime() + ttlS * 1000),
          }),
        )
        return { deviceCode, userCode: displayUserCode(userCode), expiresIn: ttlS, interval: DEVICE_CODE_INTERVAL_S }
      } catch (error) {
        // Another live code holds this user code: draw again (a fresh unit of work: PostgreSQL's failed insert ended the last).
        if (!(error instanceof UniqueViolationError) || draw >= USER_CODE_DRAWS) throw error
      }
    }
  }

  /**
   * The device's poll (POST /auth/device-code/token): the tokens once the
   * player approved, else the RFC 8628 error that says why not yet or never.
   */
  async poll(deviceCode: string, place: SignInPlace): Promise<TokenResponse & { deviceToken: string }> {
    const { storage, clock } = this.deps
    const hash = sha256Hex(deviceCode)
    const verdict = await storage.write(async (tx): Promise<PollVerdict> => {
      const now = clock.now()
      const code = await tx.deviceCodes.byDeviceCodeHash(hash)
      if (code === null || code.status === 'spent' || code.expiresAt.getTime() <= now.getTime()) return { answer: 'expired' }
      if (code.lastPolledAt !== null && now.getTime() - code.lastPolledAt.getTime() < code.intervalS * 1000) {
        await tx.deviceCodes.recordPoll(hash, now, code.intervalS + SLOW_DOWN_STEP_S)
        return { answer: 'slow_down' }
      }
      await tx.deviceCodes.recordPoll(hash, now, code.intervalS)
      if (code.status === 'pending') return { answer: 'pending' }
      if (code.status === 'denied') return { answer: 'denied' }
      // Approved: spent here, once; a concurrent poll that also read it approved finds nothing to spend.
      if (code.userId === null || !(await tx.deviceCodes.spend(hash))) return { answer: 'expired' }
      return { answer: 'approved', userId: code.userId }
    })
    switch (verdict.answer) {
      case 'expired':
        throw new AppError('expired_token', 'This device code has expired or was used: ask for a new one')
      case 'pending':
        throw new AppError('authorization_pending', 'The player has not approved this device yet: poll again after the interval')
      case 'slow_down':
        throw new AppError('slow_down', `Polled sooner than the interval: wait ${SLOW_DOWN_STEP_S} s longer between polls from now on`)
      case 'denied':
        throw new AppError('access_denied', 'The player denied this device')
      case 'approved':
        // A ban or a deletion since the approval is refused here (account_banned, invalid_credentials); the code stays spent.
        return this.deps.sessions.openSession(verdict.userId, place)
    }
  }

  /** A code the player typed, while it still waits for a decision; null when it is unknown, expired or decided. */
  async pending(typed: string): Promise<PendingDeviceCode | null> {
    const userCode = normalizeUserCode(typed)
    if (userCode === null) return null
    const code = await this.deps.storage.read.deviceCodes.byUserCode(userCode)
    return code !== null && isPending(code, this.deps.clock.now()) ? { userCode: displayUserCode(code.userCode), expiresAt: code.expiresAt } : null
  }

  /**
   * The signed-in player's answer on the verification page: approved (the
   * device's next poll gets tokens for `userId`) or denied. 404 not_found
   * when the code is unknown, expired, or already decided.
   */
  async decide(typed: string, decision: 'approved' | 'denied', userId: string, place?: SignInPlace): Promise<void> {
    const userCode = normalizeUserCode(typed)
    const decided = userCode !== null && (await this.deps.storage.write((tx) => tx.deviceCodes.decide(userCode, decision, userId, this.deps.clock.now())))
    if (!decided) throw new AppError('not_found', 'No device is waiting for that code: it may have expired or been answered already. Check the code on your device, or start again there.')
    if (decision === 'approved') {
      this.deps.onSecurityEvent?.({
        userId,
        source: 'server',
        kind: 'DEVICE_APPROVED',
        level: 'SAFE',
        details: { userCode: displayUserCode(userCode!), address: place?.address ?? null, userAgent: place?.userAgent?.slice(0, 256) ?? null },
      })
    }
  }
}

function isPending(code: DeviceCode, now: Date): boolean {
  return code.status === 'pending' && code.expiresAt.getTime() > now.getTime()
}
