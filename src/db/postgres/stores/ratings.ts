// Ratings on PostgreSQL: a rated decision runs READ COMMITTED on row locks
// (WriteOptions.rowLocks), so the ratings it updates from are read FOR
// UPDATE: two decisions of different matches of one player, on two
// instances, take turns on the player's row, and the second computes from
// what the first committed (no lost update; the history stays one chain).
// lockRatings reads in user id order, so two decisions that share two
// players lock them in the same order and never deadlock.
import type { SQL } from 'drizzle-orm'
import { RatingsQueries, type ChainStep } from '../../stores/ratings'

export class PostgresRatingsStore extends RatingsQueries {
  /** Inside a unit of work (reads outside one have no afterCommit). */
  private get inWrite(): boolean {
    return this.scope.afterCommit !== undefined
  }

  protected override lockedInWrite<Q>(query: Q): Q {
    if (!this.inWrite) return query
    return (query as Q & { for(strength: 'update'): Q }).for('update')
  }

  /** The chain walk (the same SQL on both engines) as a raw query; its bigint ids come as strings, numbered by the caller. */
  protected override async walk(query: SQL): Promise<ChainStep[]> {
    return [...(await this.db.execute(query))] as unknown as ChainStep[]
  }
}
