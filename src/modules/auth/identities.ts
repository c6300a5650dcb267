// Identities (contract §13): the ways an account signs in. The password one
// is the account's own columns (email, username, password hash); the others
// (a guest device, an OpenID Connect provider, Steam) are rows of
// `identities`, one per provider and account, each naming one account.
//
// A provider's module proves who the player is there (a ProvenIdentity); this
// module decides what that means for accounts, the same for every provider:
// - a known identity signs in to its account; an unknown one creates an
//   account only when the client asked (`create`), at most
//   ARENA_GUEST_CREATE_PER_HOUR a client address;
// - accounts are never merged and never found by email: a first sign-in
//   whose verified address belongs to an account is 409 account_exists, and
//   an identity linked elsewhere is 409 identity_in_use;
// - the last way to sign in cannot be taken away (409 last_identity).
// `users.identity_providers` lists the providers (what `user.identities`
// shows) and is written in the same unit of work as the rows it describes.
import { UniqueViolationError } from '../../db/errors'
import type { Storage, Transaction } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { randomToken, sha256Hex } from '../../shared/crypto'
import { AppError } from '../../shared/errors'
import { newId } from '../../shared/ids'
import type { Actor } from '../audit/log'
import { publishWebhook } from '../webhooks/publish'
import type { SecurityEventInput } from '../security/event-log'
import type { IdentityView, SignInResponse, TokenResponse } from './model'
import { defaultHashGate, type HashGate } from './hash-gate'
import { assertPasswordLength, hashPassword } from './passwords'
import { providerList, toUser } from './service'
import type { SignIn } from './sign-in'
import type { StoredIdentity, UserAccount } from './store'
import { rateLimited, recordAttempt, retryAfter, type ThrottleLimit } from './throttle'

/** Who a provider proved the player is there. */
export interface ProvenIdentity {
  provider: 'device' | 'steam' | `oidc:${string}`
  subject: string
  /**
   * The address the provider gave, and whether the provider says it verified
   * it. Never used to find or link an account; a verified one that belongs
   * to an existing account makes a first sign-in 409 account_exists.
   */
  email?: string | null
  emailVerified?: boolean
}

/** Where a sign-in comes from: the client address (throttles), its user agent (new-device detection) and the device token it sent (`x-arena-device`: known-places.ts). */
export interface SignInPlace {
  address: string
  userAgent: string | null
  deviceToken?: string | null
}

/** The password identity a caller adds (POST /me/identities/password). */
export interface PasswordCredential {
  email: string
  password: string
  username?: string
}

export interface IdentitiesDeps {
  storage: Storage
  clock: Clock
  signIn: SignIn
  /** ARENA_GUEST_CREATE_PER_HOUR: accounts one address may create by a first sign-in. */
  createPerHour: number
  /** More of the unit of work that adds a password identity: its verification code and mail (email-verification.ts). */
  onPasswordLinked?: (tx: Transaction, user: { id: string; email: string }, now: Date) => Promise<void>
  onSecurityEvent?: (event: SecurityEventInput) => void
  hashGate?: HashGate
}

/** The guest identity of a device secret: only its SHA-256 is ever stored. */
export function deviceIdentity(deviceSecret: string): ProvenIdentity {
  return { provider: 'device', subject: sha256Hex(deviceSecret) }
}

/** A new account's username when no one chose it: `player_` and 8 characters of Crockford base32 (contract §13). */
export function generatedUsername(): string {
  const alphabet = '0123456789abcdefghjkmnpqrstvwxyz'
  const bytes = crypto.getRandomValues(new Uint8Array(8))
  return 'player_' + Array.from(bytes, (byte) => alphabet[byte & 31]).join('')
}

const HOUR_MS = 3_600_000

/** The providers a path may name: `password`, `device`, `steam`, `oidc:<name>`. */
export function isProviderName(provider: string): boolean {
  return provider === 'password' || provider === 'device' || provider === 'steam' || /^oidc:[a-z0-9_-]{1,32}$/.test(provider)
}

export class Identities {
  private readonly createLimit: ThrottleLimit
  private readonly hashGate: HashGate

  constructor(private readonly deps: IdentitiesDeps) {
    // As the mailed-code limits count: every creation counts, the one that reaches the limit still goes through and starts the block, which ends with the hour.
    this.createLimit = { maxFailures: deps.createPerHour, windowMs: HOUR_MS, blockMs: HOUR_MS }
    this.hashGate = deps.hashGate ?? defaultHashGate()
  }

  /**
   * Finds the account of the identity, or creates one when `create`, and
   * opens a session: the login shape plus `created`, and the device token
   * to keep (the route answers it as a header).
   */
  async signIn(proven: ProvenIdentity, options: { create: boolean } & SignInPlace): Promise<SignInResponse & { deviceToken: string }> {
    const { userId, created } = await this.resolve(proven, options)
    return { ...(await this.openSession(userId, options)), created }
  }

  /** The find-or-create of signIn, without a session (a web sign-in's callback, the device page). */
  async resolve(proven: ProvenIdentity, options: { create: boolean; address: string }): Promise<{ userId: string; created: boolean }> {
    const { storage } = this.deps
    const known = await storage.read.auth.identity(proven.provider, proven.subject)
    if (known) return { userId: known.userId, created: false }
    if (!options.create) throw invalidCredentials()
    try {
      return await this.create(proven, options.address)
    } catch (error) {
      // A first sign-in of the same identity committed first (the primary key
      // decides): this one signs in to the account it created.
      if (error instanceof UniqueViolationError && error.involves('identities.subject')) {
        const winner = await storage.read.auth.identity(proven.provider, proven.subject)
        if (winner) return { userId: winner.userId, created: false }
      }
      throw error
    }
  }

  /** Opens a session for an account resolved earlier: the login shape (403 account_banned, 401 if deleted since), and the device token to keep. */
  async openSession(userId: string, place: SignInPlace): Promise<TokenResponse & { deviceToken: string }> {
    const user = await this.deps.storage.read.auth.userById(userId)
    if (!user || user.deletedAt !== null) throw invalidCredentials()
    return this.deps.signIn.openFor(user, place)
  }

  private async create(proven: ProvenIdentity, address: string): Promise<{ userId: string; created: boolean }> {
    const { storage, clock } = this.deps
    const verifiedEmail = proven.emailVerified === true && proven.email ? proven.email.trim() : null
    const key = createKey(address)
    for (let attempt = 0; ; attempt++) {
      const username = generatedUsername()
      const outcome = await storage
        .write(async (tx) => {
          const now = clock.now()
          // A verified address of an existing account: that person signs in and links, or someone else holds the address; never a second account, never a takeover.
          if (verifiedEmail) {
            const holder = await tx.auth.userByEmailKey(verifiedEmail.toLowerCase())
            if (holder && holder.deletedAt === null) throw new AppError('account_exists', 'An account with this email address exists: sign in to it and link this identity instead')
          }
          const blocked = await retryAfter(tx.auth, [key], now)
          if (blocked !== null) return { blocked }
          await recordAttempt(tx.auth, key, this.createLimit, now)
          const userId = newId('user')
          await tx.auth.createUser({
            id: userId,
            email: null,
            emailKey: null,
            username,
            usernameKey: username.toLowerCase(),
            passwordHash: null,
            // Unknown until the player says (PATCH /me): ZZ is ISO 3166's "unknown or unspecified".
            country: 'ZZ',
            createdAt: now,
            emailVerifiedAt: null,
            identityProviders: proven.provider,
          })
          await tx.auth.addIdentity({ provider: proven.provider, subject: proven.subject, userId, email: proven.email?.trim() || null, linkedAt: now })
          await tx.events.append({ userId, topic: 'account', type: 'account.identity_linked', data: { provider: proven.provider } }, now)
          await publishWebhook(tx, { type: 'user.created', data: { userId, username, provider: proven.provider } }, now)
          return { userId }
        })
        .catch((error: unknown) => {
          // 40 bits of random name taken: draw another (the identity's own violation is the caller's).
          if (error instanceof UniqueViolationError && error.involves('username_key') && attempt < 3) return { retry: true as const }
          throw error
        })
      if ('retry' in outcome) continue
      if ('blocked' in outcome) throw rateLimited(outcome.blocked!, 'Too many accounts created from this address; try again later')
      return { userId: outcome.userId!, created: true }
    }
  }

  /** GET /me/identities: every way the account signs in, in link order. */
  async list(userId: string): Promise<IdentityView[]> {
    const { storage } = this.deps
    const user = await storage.read.auth.userById(userId)
    if (!user || user.deletedAt !== null) return []
    return viewsOf(user, await storage.read.auth.identitiesOf(userId))
  }

  /** POST /me/identities/{provider} for a provider's identity: links it to the caller's account. */
  async link(userId: string, proven: ProvenIdentity): Promise<IdentityView[]> {
    const { storage, clock } = this.deps
    try {
      await storage.write(async (tx) => {
        const now = clock.now()
        const user = await liveUser(tx, userId)
        const holder = await tx.auth.identity(proven.provider, proven.subject)
        if (holder && holder.userId !== userId) throw identityInUse()
        // The same identity again: nothing to do (a retried link succeeds).
        if (holder) return
        if ((await tx.auth.identitiesOf(userId)).some((identity) => identity.provider === proven.provider)) {
          throw new AppError('identity_in_use', `The account has a ${proven.provider} identity already: unlink it first`)
        }
        await tx.auth.addIdentity({ provider: proven.provider, subject: proven.subject, userId, email: proven.email?.trim() || null, linkedAt: now })
        await this.linked(tx, user, proven.provider, now)
      })
    } catch (error) {
      // A link of the same identity to another account committed first, or
      // one of another identity of the provider to this account.
      if (error instanceof UniqueViolationError && (error.involves('identities.subject') || error.involves('identities.user_id'))) throw identityInUse()
      throw error
    }
    return this.list(userId)
  }

  /**
   * POST /me/identities/password: gives an account without a password one
   * (and an email, which then asks for verification as at registration, so
   * an upgraded guest verifies it before it may withdraw where that is asked).
   */
  async linkPassword(userId: string, credential: PasswordCredential): Promise<IdentityView[]> {
    const { storage, clock } = this.deps
    assertPasswordLength(credential.password, 'body/password')
    const current = await storage.read.auth.userById(userId)
    if (current?.passwordHash) throw new AppError('identity_in_use', 'The account has a password identity already: change the password instead')
    const email = credential.email.trim()
    // Hash before the unit of work: it is slow and must not hold the write lock.
    const passwordHash = await hashPassword(credential.password, this.hashGate)
    await storage.write(async (tx) => {
      const now = clock.now()
      const user = await liveUser(tx, userId)
      if (user.passwordHash !== null) throw new AppError('identity_in_use', 'The account has a password identity already: change the password instead')
      const username = credential.username === undefined ? undefined : { username: credential.username, usernameKey: credential.username.toLowerCase() }
      try {
        await tx.auth.addPasswordIdentity(userId, { email, emailKey: email.toLowerCase(), passwordHash, ...(username ? { username } : {}) }, now)
      } catch (error) {
        if (error instanceof UniqueViolationError && error.involves('email_key')) throw new AppError('email_taken', 'That email is already registered')
        if (error instanceof UniqueViolationError && error.involves('username_key')) throw new AppError('username_taken', 'That username is taken')
        throw error
      }
      await this.linked(tx, user, 'password', now)
      await this.deps.onPasswordLinked?.(tx, { id: userId, email }, now)
    })
    return this.list(userId)
  }

  /**
   * DELETE /me/identities/{provider}, or an operator's unlink (audited):
   * 404 when the account has none of that provider, 409 last_identity when it
   * is the only way left to sign in.
   */
  async unlink(userId: string, provider: string, by?: { actor: Actor; reason: string }): Promise<IdentityView[]> {
    const { storage, clock } = this.deps
    await storage.write(async (tx) => {
      const now = clock.now()
      const user = await liveUser(tx, userId)
      const providers = providerList(user.identityProviders)
      if (!providers.includes(provider)) throw new AppError('not_found', `The account has no ${provider} identity`)
      if (providers.length === 1) throw new AppError('last_identity', 'This is the only way left to sign in to the account: link another first')
      if (provider === 'password') await tx.auth.removePasswordIdentity(userId)
      else await tx.auth.removeIdentity(userId, provider)
      await tx.auth.setIdentityProviders(userId, providers.filter((name) => name !== provider).join(','))
      await tx.events.append({ userId, topic: 'account', type: 'account.identity_unlinked', data: { provider, byOperator: by !== undefined } }, now)
      if (by) await by.actor.record(tx, { action: 'user.identity_unlink', target: userId, reason: by.reason, details: { provider } })
      tx.afterCommit(() =>
        this.deps.onSecurityEvent?.({ userId, source: 'server', kind: 'IDENTITY_UNLINKED', level: 'SAFE', details: { provider, byOperator: by !== undefined } }),
      )
    })
    return this.list(userId)
  }

  /** PATCH /me: the username (409 username_taken) and the country. */
  async updateProfile(userId: string, change: { username?: string; country?: string }): Promise<ReturnType<typeof toUser>> {
    const { storage } = this.deps
    return storage.write(async (tx) => {
      await liveUser(tx, userId)
      try {
        await tx.auth.updateProfile(userId, {
          ...(change.username === undefined ? {} : { username: { username: change.username, usernameKey: change.username.toLowerCase() } }),
          ...(change.country === undefined ? {} : { country: change.country }),
        })
      } catch (error) {
        if (error instanceof UniqueViolationError && error.involves('username_key')) throw new AppError('username_taken', 'That username is taken')
        throw error
      }
      return toUser((await tx.auth.userById(userId))!)
    })
  }

  /** A new identity's bookkeeping, in its unit of work: the provider list, the event, the security event. */
  private async linked(tx: Transaction, user: UserAccount, provider: string, now: Date): Promise<void> {
    await tx.auth.setIdentityProviders(user.id, [...providerList(user.identityProviders), provider].join(','))
    await tx.events.append({ userId: user.id, topic: 'account', type: 'account.identity_linked', data: { provider } }, now)
    tx.afterCommit(() => this.deps.onSecurityEvent?.({ userId: user.id, source: 'server', kind: 'IDENTITY_LINKED', level: 'SAFE', details: { provider } }))
  }
}

/** The account's identities as GET /me/identities shows them, in users.identity_providers' order. */
export function viewsOf(user: UserAccount, rows: readonly StoredIdentity[]): IdentityView[] {
  const byProvider = new Map(rows.map((row) => [row.provider, row]))
  return providerList(user.identityProviders).flatMap((provider): IdentityView[] => {
    if (provider === 'password') {
      return user.email === null ? [] : [{ provider, email: user.email, linkedAt: (user.passwordLinkedAt ?? user.createdAt).toISOString() }]
    }
    const row = byProvider.get(provider)
    if (!row) return []
    // A device's subject is the hash of its secret: nothing to show.
    return [{ provider, ...(provider === 'device' ? {} : { subject: row.subject }), ...(row.email ? { email: row.email } : {}), linkedAt: row.linkedAt.toISOString() }]
  })
}

async function liveUser(tx: Transaction, userId: string): Promise<UserAccount> {
  const user = await tx.auth.userById(userId)
  if (!user || user.deletedAt !== null) throw new AppError('not_found', 'No such user')
  return user
}

function createKey(address: string): string {
  return `create:${address.toLowerCase()}`
}

/** The refusal of every sign-in by identity, whatever failed (an unknown identity, a credential that does not check out): one answer, one message. */
export function invalidCredentials(): AppError {
  return new AppError('invalid_credentials', 'Unknown identity, or the credential is not valid')
}

function identityInUse(): AppError {
  return new AppError('identity_in_use', 'This identity is linked to another account; accounts are never merged')
}

/** A random device secret (tests, the SDK's guest helper): 32 bytes, base64url. */
export function newDeviceSecret(): string {
  return randomToken(32)
}
