// Webhooks on SQLite: the queries of src/db/stores/webhooks.ts, but the
// subscriptions' read, which every unit of work that reports a fact makes
// once (a claim's decision among them, whether anyone subscribes or not), is
// compiled once per connection: building it cost more than running it. It
// reads the tables in every unit of work: an endpoint created by another
// process on the same data dir (`arena webhook add`) gets the next fact.
import { getTableColumns } from 'drizzle-orm'
import { webhooks, webhookTypes } from '../../schema'
import { WebhooksQueries } from '../../stores/webhooks'
import { perConnection } from '../connection'
import type { SqliteScope } from '../storage'

const statements = perConnection((sqlite) => {
  const type = getTableColumns(webhookTypes)
  const hook = getTableColumns(webhooks)
  return {
    // As the query builder's: every subscription of the enabled endpoints.
    enabledSubscriptions: sqlite.prepare<{ type: string; webhookId: string }, []>(
      `SELECT t."${type.type.name}" AS type, t."${type.webhookId.name}" AS webhookId FROM webhook_types t INNER JOIN webhooks w ON w."${hook.id.name}" = t."${type.webhookId.name}" WHERE w."${hook.enabled.name}" = 1`,
    ),
  }
})

export class SqliteWebhooksStore extends WebhooksQueries {
  private readonly statements: ReturnType<typeof statements>

  constructor(scope: SqliteScope) {
    super(scope)
    this.statements = statements(scope.handle.sqlite)
  }

  protected override async enabledSubscriptions(): Promise<{ type: string; webhookId: string }[]> {
    return this.statements.enabledSubscriptions.all()
  }
}
