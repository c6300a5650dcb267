import { defineConfig } from 'drizzle-kit'

// `npm run db:generate` writes a new migration into ./drizzle from the schema.
// Migrations are generated, never hand-edited, and embedded in the binary
// (src/db/sqlite/embedded-migrations.ts).
export default defineConfig({
  dialect: 'sqlite',
  schema: './src/db/schema/index.ts',
  out: './drizzle',
  strict: true,
  verbose: true,
})
