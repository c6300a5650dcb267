// Webhooks on SQLite: the queries of src/db/stores/webhooks.ts, but
// `subscribers`, the read every change that reports a fact makes (a claim's
// decision and its rating updates among them, whether anyone subscribes or
// not), is compiled once per connection: building it cost more than running
// it. It reads the tables on every call: an endpoint created by another
// process on the same data dir gets the next fact.
import { getTableColumns } from 'drizzle-orm'
import { webhooks, webhookTypes } from '../../schema'
import { WebhooksQueries } from '../../stores/webhooks'
import { perConnection } from '../connection'
import type { SqliteScope } from '../storage'

const statements = perConnection((sqlite) => {
  const type = getTableColumns(webhookTypes)
  const hook = getTableColumns(webhooks)
  return {
    // As the query builder's: through webhook_types' primary key (type, webhook_id), enabled endpoints only.
    subscribers: sqlite.prepare<{ id: string }, { type: string }>(
      `SELECT t."${type.webhookId.name}" AS id FROM webhook_types t INNER JOIN webhooks w ON w."${hook.id.name}" = t."${type.webhookId.name}" WHERE t."${type.type.name}" = $type AND w."${hook.enabled.name}" = 1`,
    ),
  }
})

export class SqliteWebhooksStore extends WebhooksQueries {
  private readonly statements: ReturnType<typeof statements>

  constructor(scope: SqliteScope) {
    super(scope)
    this.statements = statements(scope.handle.sqlite)
  }

  override async subscribers(type: string): Promise<string[]> {
    return this.statements.subscribers.all({ type }).map((row) => row.id)
  }
}
