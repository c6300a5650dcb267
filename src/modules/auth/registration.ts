// Registration (contract §1): a new account, its password hashed before the
// write, and (./email-verification.ts) its verification code in the same
// unit of work.
import { UniqueViolationError } from '../../db/errors'
import type { Storage, Transaction } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { AppError } from '../../shared/errors'
import { newId } from '../../shared/ids'
import { publishWebhook } from '../webhooks/publish'
import { COUNTRY_CODES } from './countries'
import type { RegisterBody, User } from './model'
import { defaultHashGate, type HashGate } from './hash-gate'
import { assertPasswordLength, hashPassword } from './passwords'
import { toUser } from './service'
import type { NewUser } from './store'

export interface RegistrationDeps {
  storage: Storage
  clock: Clock
  /** Bounds concurrent argon2id work (default: the process's gate). */
  hashGate?: HashGate
  /**
   * More of register's unit of work, on the account just created: the
   * verification code, its mail and its event (email-verification.ts). A
   * failure there fails the registration: no account without its code.
   */
  onRegister?: (tx: Transaction, user: NewUser, now: Date) => Promise<void>
}

export class Registration {
  private readonly hashGate: HashGate

  constructor(private readonly deps: RegistrationDeps) {
    this.hashGate = deps.hashGate ?? defaultHashGate()
  }

  async register(input: RegisterBody): Promise<User> {
    assertPasswordLength(input.password, 'body/password')
    const country = input.country.toUpperCase()
    if (!COUNTRY_CODES.has(country)) {
      throw new AppError('validation_failed', 'Request failed validation', {
        details: [{ path: 'body/country', message: 'Expected an ISO 3166-1 alpha-2 country code' }],
      })
    }
    const email = input.email.trim()
    const user: NewUser = {
      id: newId('user'),
      email,
      emailKey: email.toLowerCase(),
      username: input.username,
      usernameKey: input.username.toLowerCase(),
      // Hash before the transaction: it is slow and must not hold the write lock.
      // Refused by the hash gate (503): nothing has been written.
      passwordHash: await hashPassword(input.password, this.hashGate),
      country,
      createdAt: this.deps.clock.now(),
      emailVerifiedAt: null,
      identityProviders: 'password',
    }
    await this.deps.storage.write(async (tx) => {
      try {
        await tx.auth.createUser(user)
      } catch (error) {
        // The unique indexes decide, so two racing registrations cannot both win.
        if (error instanceof UniqueViolationError && error.involves('username_key')) throw new AppError('username_taken', 'That username is taken')
        if (error instanceof UniqueViolationError && error.involves('email_key')) throw new AppError('email_taken', 'That email is already registered')
        throw error
      }
      const now = this.deps.clock.now()
      await publishWebhook(tx, { type: 'user.created', data: { userId: user.id, username: user.username, provider: 'password' } }, now)
      await this.deps.onRegister?.(tx, user, now)
    })
    return toUser(user)
  }

  /** Which of these usernames or emails (compared case-insensitively) are taken; the holders' usernames. */
  takenNames(usernames: readonly string[], emails: readonly string[]): Promise<string[]> {
    return this.deps.storage.read.auth.usernamesHolding(
      usernames.map((name) => name.toLowerCase()),
      emails.map((email) => email.toLowerCase()),
    )
  }
}
