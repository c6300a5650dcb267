// Bun macro: runs when the code is bundled or transpiled, never at run time.
// It reads ./drizzle (the folder drizzle-kit writes) and its return value is
// inlined where it is called, so the compiled binary carries every migration
// and needs no files beside it.
//
// Import it only as `import { embeddedMigrations } from './embedded-migrations' with { type: 'macro' }`.
import { join } from 'node:path'
import { readMigrationFiles, type MigrationMeta } from 'drizzle-orm/migrator'

export function embeddedMigrations(): MigrationMeta[] {
  return readMigrationFiles({ migrationsFolder: join(import.meta.dir, '..', '..', '..', 'drizzle') })
}
