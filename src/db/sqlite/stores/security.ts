import type { SecurityStore } from '../../../modules/security/store'
import type { SqliteScope } from '../storage'

export class SqliteSecurityStore implements SecurityStore {
  constructor(private readonly scope: SqliteScope) {}
}
