// Bun macro, as src/db/sqlite/embedded-migrations.ts: reads ./drizzle-postgres
// when the code is bundled or transpiled, so the binary carries the PostgreSQL
// migrations too and needs no files beside it.
//
// Import it only as `import { embeddedMigrations } from './embedded-migrations' with { type: 'macro' }`.
import { join } from 'node:path'
import { readMigrationFiles, type MigrationMeta } from 'drizzle-orm/migrator'

export function embeddedMigrations(): MigrationMeta[] {
  return readMigrationFiles({ migrationsFolder: join(import.meta.dir, '..', '..', '..', 'drizzle-postgres') })
}
