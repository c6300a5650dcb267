import type { GamesStore } from '../../../modules/games/store'
import type { SqliteScope } from '../storage'

export class SqliteGamesStore implements GamesStore {
  constructor(private readonly scope: SqliteScope) {}
}
