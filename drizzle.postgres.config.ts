import { defineConfig } from 'drizzle-kit'

// `npm run db:generate` writes the PostgreSQL migration into ./drizzle-postgres
// from src/db/postgres/schema, beside the SQLite one (drizzle.config.ts).
// Generated, never hand-edited, embedded in the binary
// (src/db/postgres/embedded-migrations.ts).
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/postgres/schema/index.ts',
  out: './drizzle-postgres',
  strict: true,
  verbose: true,
})
