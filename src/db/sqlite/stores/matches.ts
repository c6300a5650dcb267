import type { MatchesStore } from '../../../modules/matches/store'
import type { SqliteScope } from '../storage'

export class SqliteMatchesStore implements MatchesStore {
  constructor(private readonly scope: SqliteScope) {}
}
