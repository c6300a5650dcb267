// TypeBox models of the wallet routes, the PIN verify that makes a withdrawal
// among them (mirrored by the client SDK, checked by test/sdk/wire-types.*).
import { HeldPayout } from '../integrity/model'
import { t, type Static } from 'elysia'

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
    t.Literal('stake'),
    t.Literal('stake_payout'),
    t.Literal('stake_refund'),
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
  held: t.Array(HeldPayout, { description: 'your payouts held for an operator\'s review (integrity signals), oldest first, on every page: not movements; one released shows up as a movement, one voided goes' }),
})
export type TransactionsPage = Static<typeof TransactionsPage>

export const Withdrawal = t.Object(
  {
    id: t.String(),
    status: t.Union(
      [t.Literal('awaiting_approval'), t.Literal('held'), t.Literal('pending_signature'), t.Literal('signed'), t.Literal('failed'), t.Literal('rejected')],
      {
        description:
          'awaiting_approval: above the approval threshold, waiting for an operator; held: a first withdrawal to this address, signed when releasesAt comes; pending_signature: being signed; signed, failed (custody refused it, funds returned), rejected (an operator refused it, funds returned) are final',
      },
    ),
    amount: t.String(),
    asset: t.String(),
    destinationAddress: t.String(),
    idempotencyKey: t.String(),
    signature: t.Optional(t.String({ description: 'base58 Ed25519 signature over the canonical withdrawal message' })),
    failureReason: t.Optional(t.String({ description: 'why custody refused it, once `failed`' })),
    reason: t.Optional(
      t.Union([t.Literal('approval_required'), t.Literal('new_destination')], {
        description: 'why it is not signed yet, while awaiting_approval (approval_required) or held (new_destination)',
      }),
    ),
    releasesAt: t.Optional(t.String({ description: 'when its new-destination hold ends (ISO 8601), while awaiting_approval or held with one' })),
    rejectionReason: t.Optional(t.String({ description: "the operator's reason, once `rejected`" })),
    createdAt: t.String(),
  },
  { $id: 'Withdrawal' },
)
export type Withdrawal = Static<typeof Withdrawal>

export const PinVerifyResponse = t.Object(
  {
    valid: t.Boolean(),
    locked: t.Boolean(),
    attempt: t.Integer({ description: 'consecutive failures; 0 after a valid PIN' }),
    withdrawal: t.Optional(Withdrawal),
  },
  { $id: 'PinVerifyResponse' },
)
export type PinVerifyResponse = Static<typeof PinVerifyResponse>

export const VerifyBody = t.Object(
  {
    pin: t.String({ minLength: 1, maxLength: 16 }),
    amount: t.String({ maxLength: 64, description: 'decimal string' }),
    destinationAddress: t.String({ minLength: 1, maxLength: 64 }),
    idempotencyKey: t.String({ minLength: 1, maxLength: 128 }),
  },
  { $id: 'VerifyBody' },
)
export type VerifyBody = Static<typeof VerifyBody>

export const WithdrawalsQuery = t.Object({
  after: t.Optional(t.String({ maxLength: 64, description: 'the `cursor` of the previous page' })),
  limit: t.Optional(t.Numeric({ minimum: 1, maximum: 100, description: '1 to 100, default 50' })),
})

export const WithdrawalsPage = t.Object({
  withdrawals: t.Array(Withdrawal),
  cursor: t.Nullable(t.String({ description: 'pass as `after` for the next page; null at the end' })),
})
export type WithdrawalsPage = Static<typeof WithdrawalsPage>
