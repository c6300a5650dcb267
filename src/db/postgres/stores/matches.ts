// Match sessions, claims and match moves on PostgreSQL.
//
// One decision per match and one bracket move across instances: every store
// call of a claim runs in the claim's unit of work, one SERIALIZABLE
// transaction, and the claim path reads what it decides on (the session, the
// match, the round's claims) through that same transaction. Two claims of one
// match each read the round's claims and insert their own, so each wrote into
// what the other read: PostgreSQL's SSI fails one of them (40001) and the
// engine runs it again from the start, when it sees both claims and decides.
// Two decisions moving winners into one next match both update that match's
// row: the second waits for the first and fails with 40001, and on its rerun
// finds the other slot filled and opens the match.
//
// Inside a write, the session and the match a claim decides on are also read
// FOR NO KEY UPDATE, so claims of one match (and two uses of one token) take
// turns on those rows instead of racing to a 40001 at commit. SSI does not
// need it; it is what keeps the claim path right without SSI (at READ
// COMMITTED each statement sees what the claim it waited for committed),
// where a burst of claims does not fail over and over on SSI's page-sized
// read locks. NO KEY UPDATE: the claims and sessions inserted meanwhile check
// their foreign key with KEY SHARE on the match, which it does not block.
import type { Table } from 'drizzle-orm'
import { MatchesQueries } from '../../stores/matches'

/** The queries of MatchesQueries, with the locks described above. */
export class PostgresMatchesStore extends MatchesQueries {
  /** Inside a unit of work (reads outside one have no afterCommit). */
  private get inWrite(): boolean {
    return this.scope.afterCommit !== undefined
  }

  /**
   * In a write: FOR NO KEY UPDATE, of the table `of` when the query joins
   * others. What a claim or a resolve decides on (the session, then its
   * match): claims of one match take turns. A session issue's match:
   * a correction that deletes it (a Swiss round paired again)
   * holds the same lock, so the issue either waits and finds no match, or
   * commits first and its session is deleted with the match. The foreign
   * key's KEY SHARE alone does not order them.
   */
  protected override lockedInWrite<Q>(query: Q, of?: Table): Q {
    if (!this.inWrite) return query
    return (query as Q & { for(strength: 'no key update', config?: { of: Table }): Q }).for('no key update', of ? { of } : undefined)
  }
}
