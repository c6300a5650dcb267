import type { AuthStore } from '../../../modules/auth/store'
import type { SqliteScope } from '../storage'

export class SqliteAuthStore implements AuthStore {
  constructor(private readonly scope: SqliteScope) {}
}
