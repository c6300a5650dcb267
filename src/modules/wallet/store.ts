// What the wallet module needs from the database, in its own terms (see src/db/storage.ts).
export interface WalletStore {}
