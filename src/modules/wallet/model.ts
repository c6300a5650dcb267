// TypeBox models of the wallet routes (mirrored by the client SDK, checked by test/sdk/wire-types.*).
import { t, type Static } from 'elysia'

export const WalletResponse = t.Object({
  asset: t.String(),
  balance: t.String({ description: 'decimal string' }),
  address: t.String({ description: 'base58 Ed25519 public key of the 2-of-3 custody key' }),
})
export type WalletResponse = Static<typeof WalletResponse>
