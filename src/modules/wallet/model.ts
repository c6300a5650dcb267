// TypeBox models of the wallet routes (mirrored by the client SDK, checked by test/sdk/wire-types.*).
import { t, type Static } from 'elysia'
import { Withdrawal } from '../security/model'

export const WalletResponse = t.Object({
  asset: t.String(),
  balance: t.String({ description: 'decimal string' }),
  address: t.String({ description: 'base58 Ed25519 public key of the 2-of-3 custody key' }),
})
export type WalletResponse = Static<typeof WalletResponse>

export const TransactionKind = t.Union(
  [
    t.Literal('credit'),
    t.Literal('adjustment'),
    t.Literal('withdrawal'),
    t.Literal('withdrawal_reversal'),
    t.Literal('entry_fee'),
    t.Literal('entry_fee_refund'),
    t.Literal('prize'),
  ],
  { $id: 'TransactionKind' },
)
export type TransactionKind = Static<typeof TransactionKind>

export const WalletTransaction = t.Object(
  {
    id: t.String({ description: 'the movement (`ltx_…`)' }),
    kind: TransactionKind,
    amount: t.String({ description: 'signed decimal string: positive credits the wallet, negative debits it' }),
    balanceAfter: t.String({ description: 'decimal string: the balance right after this movement' }),
    reference: t.Nullable(t.String({ description: 'the operator\'s reference of a credit or adjustment; the withdrawal id of a withdrawal and its reversal' })),
    createdAt: t.String(),
  },
  { $id: 'WalletTransaction' },
)
export type WalletTransaction = Static<typeof WalletTransaction>

export const TransactionsQuery = t.Object({
  after: t.Optional(t.String({ maxLength: 64, description: 'the `cursor` of the previous answer; absent or empty, from the first movement' })),
  limit: t.Optional(t.Numeric({ minimum: 1, maximum: 100, description: '1 to 100, default 50' })),
})

export const TransactionsPage = t.Object({
  transactions: t.Array(WalletTransaction),
  cursor: t.String({ description: 'pass as `after` to read on; with no movements it stays where you were' }),
})
export type TransactionsPage = Static<typeof TransactionsPage>

export const WithdrawalsQuery = t.Object({
  after: t.Optional(t.String({ maxLength: 64, description: 'the `cursor` of the previous page' })),
  limit: t.Optional(t.Numeric({ minimum: 1, maximum: 100, description: '1 to 100, default 50' })),
})

export const WithdrawalsPage = t.Object({
  withdrawals: t.Array(Withdrawal),
  cursor: t.Nullable(t.String({ description: 'pass as `after` for the next page; null at the end' })),
})
export type WithdrawalsPage = Static<typeof WithdrawalsPage>
