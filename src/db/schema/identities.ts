import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { flag, instant } from './columns'
import { users } from './auth'

// The ways an account signs in besides its password (contract §13): a guest
// device (`device`, subject = SHA-256 of the secret the client keeps), an
// OpenID Connect provider (`oidc:<name>`, subject = the ID token's `sub`) or
// Steam (`steam`, subject = the SteamID). The password identity is the
// account's own columns (users.password_hash, email, username). One identity
// belongs to one account, and an account has at most one per provider.
// Created by a first sign-in with `create` or by linking; erased with the
// account (deletion) or by unlinking.
export const identities = sqliteTable(
  'identities',
  {
    provider: text('provider').notNull(),
    subject: text('subject').notNull(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    /** What the provider said the address is, when it said so (never used to find or link an account). */
    email: text('email'),
    linkedAt: instant('linked_at').notNull(),
  },
  (table) => [primaryKey({ columns: [table.provider, table.subject] }), uniqueIndex('identities_user_provider').on(table.userId, table.provider)],
)

// A device asking for a sign-in (RFC 8628, contract §13): the device keeps
// `deviceCode` (only its SHA-256 here), the player types `userCode` on the
// verification page and approves or denies it. Lives ARENA_DEVICE_CODE_TTL_S,
// then housekeeping deletes it; its tokens are handed out once.
export const deviceCodes = sqliteTable(
  'device_codes',
  {
    deviceCodeHash: text('device_code_hash').primaryKey(),
    /** 8 characters of Crockford base32, stored without a dash, upper-case. */
    userCode: text('user_code').notNull().unique(),
    status: text('status', { enum: ['pending', 'approved', 'denied', 'spent'] }).notNull(),
    /** Who approved or denied it, once someone did. */
    userId: text('user_id').references(() => users.id),
    /** Seconds the device must wait between polls (5, +5 after each slow_down). */
    intervalS: integer('interval_s').notNull(),
    lastPolledAt: instant('last_polled_at'),
    createdAt: instant('created_at').notNull(),
    expiresAt: instant('expires_at').notNull(),
  },
  (table) => [index('device_codes_expires').on(table.expiresAt)],
)

// A web sign-in under way with an OpenID Connect provider (contract §13): the
// `state` sent to the provider (only its SHA-256 here), where to send the
// player back, and whether a first sign-in creates an account. The PKCE
// verifier and the nonce are derived from the state with a server key, so
// nothing secret is stored. Lives 10 minutes; used once.
export const oidcLoginFlows = sqliteTable(
  'oidc_login_flows',
  {
    stateHash: text('state_hash').primaryKey(),
    provider: text('provider').notNull(),
    /** The allow-listed URL the callback redirects to; for the device page, its own path. */
    redirect: text('redirect').notNull(),
    create: flag('create').notNull(),
    /** `login` (a game's web sign-in) or `device` (the device-code page's sign-in). */
    purpose: text('purpose', { enum: ['login', 'device'] }).notNull(),
    createdAt: instant('created_at').notNull(),
    expiresAt: instant('expires_at').notNull(),
  },
  (table) => [index('oidc_login_flows_expires').on(table.expiresAt)],
)

// The one-time code a web sign-in's callback puts in the redirect's fragment
// (contract §13): `POST /user/login/exchange` trades it for the tokens once,
// within 60 s. Only its SHA-256 is stored.
export const loginExchangeCodes = sqliteTable(
  'login_exchange_codes',
  {
    codeHash: text('code_hash').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    /** Whether the sign-in that made it created the account (answered as `created`). */
    created: flag('created').notNull(),
    createdAt: instant('created_at').notNull(),
    expiresAt: instant('expires_at').notNull(),
  },
  (table) => [index('login_exchange_codes_expires').on(table.expiresAt)],
)
