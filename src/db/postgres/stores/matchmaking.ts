// Matchmaking on PostgreSQL: the rows a unit of work decides on are read FOR
// UPDATE inside a write (a ticket being paired, left or reopened; a queue
// taking a ticket or closing; a challenge accepted, declined or expiring), so
// two instances deciding on the same row take turns and the second sees what
// the first committed.
import { MatchmakingQueries } from '../../stores/matchmaking'

export class PostgresMatchmakingStore extends MatchmakingQueries {
  /** Inside a unit of work (reads outside one have no afterCommit). */
  private get inWrite(): boolean {
    return this.scope.afterCommit !== undefined
  }

  protected override lockedInWrite<Q>(query: Q): Q {
    if (!this.inWrite) return query
    return (query as Q & { for(strength: 'update'): Q }).for('update')
  }
}
