// The console's operations queries on SQLite: those of
// src/db/stores/operations.ts, and the database's size as SQLite counts it.
import { OperationsQueries } from '../../stores/operations'
import type { SqliteScope } from '../storage'

export class SqliteOperationsStore extends OperationsQueries {
  constructor(protected override readonly scope: SqliteScope) {
    super(scope)
  }

  async databaseSizeBytes(): Promise<number> {
    // The main file's pages (the WAL is checkpointed into it; what a backup copies).
    const row = this.scope.handle.sqlite.query<{ bytes: number }, []>('SELECT page_count * page_size AS bytes FROM pragma_page_count(), pragma_page_size()').get()
    return row?.bytes ?? 0
  }
}
