// PostgreSQL only: the secrets every instance shares, sealed under
// ARENA_MASTER_KEY (src/vault/). SQLite has no counterpart table: it keeps
// them in its data dir (secrets.json, custody/).
import { pgTable, text } from 'drizzle-orm/pg-core'
import { timestampMs } from './mirror'

export const serverSecrets = pgTable('server_secrets', {
  /** What the secret is: `signing-keys`, `chain-key`, `admin-token`, `custody/<keyRef>/<participant>`. */
  name: text('name').primaryKey(),
  /** `v1.<nonce>.<ciphertext>`, sealed with `name` as additional data (src/shared/sealed.ts). */
  sealed: text('sealed').notNull(),
  createdAt: timestampMs('created_at').notNull(),
})
