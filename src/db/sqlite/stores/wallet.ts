import type { WalletStore } from '../../../modules/wallet/store'
import type { SqliteScope } from '../storage'

export class SqliteWalletStore implements WalletStore {
  constructor(private readonly scope: SqliteScope) {}
}
