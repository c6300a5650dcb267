// The console's operations queries on PostgreSQL: those of
// src/db/stores/operations.ts, and the database's size as PostgreSQL counts it.
import { sql } from 'drizzle-orm'
import { OperationsQueries } from '../../stores/operations'
import type { PostgresScope } from '../scope'

export class PostgresOperationsStore extends OperationsQueries {
  constructor(protected override readonly scope: PostgresScope) {
    super(scope)
  }

  async databaseSizeBytes(): Promise<number> {
    const [row] = await this.db.execute<{ bytes: string }>(sql`SELECT pg_database_size(current_database())::text AS bytes`)
    return Number(row?.bytes ?? 0)
  }
}
