// Every table on PostgreSQL, one file per domain, mirroring src/db/schema (the
// SQLite schema) table for table and column for column; a test holds the two
// together. drizzle-kit reads this to generate ./drizzle-postgres.
export * from './auth'
export * from './events'
export * from './games'
export * from './security'
export * from './wallet'
