// Every table on PostgreSQL, one file per domain, mirroring src/db/schema (the
// SQLite schema) table for table and column for column; a test holds the two
// together. Two tables are PostgreSQL's alone: server_secrets (secrets.ts), what
// SQLite keeps in its data dir, and rate_limit_counters (rate-limits.ts), what
// SQLite's one server counts in memory. drizzle-kit reads this to generate
// ./drizzle-postgres.
export * from './auth'
export * from './events'
export * from './games'
export * from './mail'
export * from './rate-limits'
export * from './secrets'
export * from './security'
export * from './wallet'
export * from './operators'
