// Games, tournaments, participants and brackets on PostgreSQL: the queries of
// src/db/stores/games.ts, with the tournament a write decides from locked,
// a bracket seeded in one statement, and larger INSERT chunks.
import { eq, sql } from 'drizzle-orm'
import { GamesQueries } from '../../stores/games'
import type { PostgresScope } from '../scope'

export class PostgresGamesStore extends GamesQueries {
  /** A 1024-player bracket is 1023 rows of 18 parameters: two statements, under PostgreSQL's 65535 parameters each. */
  protected override readonly bracketChunk = 1000

  constructor(protected override readonly scope: PostgresScope) {
    super(scope)
  }

  /** In a write, what a start or a finalization moves on from: two of them take turns. */
  protected override lockedInWrite(query: Parameters<GamesQueries['lockedInWrite']>[0]) {
    return this.scope.afterCommit !== undefined ? query.for('no key update') : query
  }

  override async assignSeeds(tournamentId: string, participantIds: readonly string[]): Promise<void> {
    if (participantIds.length === 0) return
    const { participants } = this.t
    // PostgreSQL checks the unique (tournament, seed) index row by row: out of
    // the way first (registration numbers are positive), then one statement
    // rather than a round trip per participant.
    await this.db.update(participants).set({ seed: sql`-${participants.seed}` }).where(eq(participants.tournamentId, tournamentId))
    const pairs = sql.join(participantIds.map((id, index) => sql`(${id}::text, ${index + 1}::integer)`), sql`, `)
    await this.db.execute(sql`UPDATE participants SET seed = v.seed FROM (VALUES ${pairs}) AS v(id, seed) WHERE participants.id = v.id AND participants.tournament_id = ${tournamentId}`)
  }
}
