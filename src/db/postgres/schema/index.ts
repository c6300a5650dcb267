// Every table on PostgreSQL. The shared tables are not written here: they are
// built from the one schema, src/db/schema (mirror.ts), so a table or column
// declared there is PostgreSQL's too. Two tables are PostgreSQL's alone:
// server_secrets (secrets.ts), what SQLite keeps in its data dir, and
// rate_limit_counters (rate-limits.ts), what SQLite's one server counts in
// memory. drizzle-kit reads this to generate ./drizzle-postgres.
import * as schema from '../../schema'
import { mirrorSchema } from './mirror'

export const { users, authSessions, refreshTokens, loginThrottle, knownSignInPlaces, accountCodes, outboxEvents, securityEvents, securityLogHead, games, tournaments, participants, matches, gameSessions, matchClaims, jobs, mailOutbox, operators, operatorSessions, auditLog, auditHead, userPins, pinLocks, pinSessions, withdrawals, ledgerAccounts, ledgerTransactions, ledgerPostings, wallets, identities, deviceCodes, oidcLoginFlows, loginExchangeCodes, socketTickets, seasons, ratings, ratingHistory, seasonStandings, queues, tickets, challenges, gameServers, gameServerSignatures, evidenceBlobs, matchEvidence, integrityFlags, payoutHolds, webhooks, webhookTypes, webhookDeliveries, webhookAttempts } = mirrorSchema(schema)
export * from './rate-limits'
export * from './secrets'
