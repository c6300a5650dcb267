// Matchmaking on SQLite: the queries of MatchmakingQueries, with the
// matcher's read on a statement of its own. A tick reads every open ticket
// of a queue (10 000 in the benchmark, bench/matcher-tick.ts): through the
// query builder that read took as long as the pairing itself; compiled once
// per connection, with the rows mapped here, it is a fraction of it.
import { getTableColumns } from 'drizzle-orm'
import { tickets } from '../../schema'
import { MatchmakingQueries } from '../../stores/matchmaking'
import type { WaitingTicket } from '../../../modules/matchmaking/matcher'
import { perConnection, selectList } from '../connection'
import type { SqliteScope } from '../storage'

type RawWaiting = Omit<WaitingTicket, 'waitingSince'> & { waitingSince: number }

const statements = perConnection((sqlite) => ({
  waiting: sqlite.prepare<RawWaiting, { queueId: string }>(
    `SELECT ${selectList(getTableColumns(tickets), ['id', 'userId', 'display', 'waitingSince'])} FROM tickets
     WHERE queue_id = $queueId AND status = 'open' ORDER BY waiting_since, id`,
  ),
}))

export class SqliteMatchmakingStore extends MatchmakingQueries {
  private readonly statements: ReturnType<typeof statements>

  constructor(scope: SqliteScope) {
    super(scope)
    this.statements = statements(scope.handle.sqlite)
  }

  override async waitingTickets(queueId: string): Promise<WaitingTicket[]> {
    return this.statements.waiting.all({ queueId }).map((row) => ({ id: row.id, userId: row.userId, display: row.display, waitingSince: new Date(row.waitingSince) }))
  }
}
