// Every table on PostgreSQL, one file per domain, mirroring src/db/schema (the
// SQLite schema) table for table and column for column; a test holds the two
// together. One table is PostgreSQL's alone: server_secrets (secrets.ts), what
// SQLite keeps in its data dir. drizzle-kit reads this to generate
// ./drizzle-postgres.
export * from './auth'
export * from './events'
export * from './games'
export * from './mail'
export * from './secrets'
export * from './security'
export * from './wallet'
export * from './operators'
