// The held payouts as the operator API shows them (GET/POST /admin/payouts…,
// docs/api.md) and as a player's wallet history lists theirs (`held`).
import { t, type Static } from 'elysia'

export const RaisedSignalModel = t.Object(
  {
    signal: t.Union([t.Literal('pair_limit'), t.Literal('shared_address'), t.Literal('shared_device'), t.Literal('alternating'), t.Literal('upset')]),
    detail: t.Record(t.String(), t.Union([t.String(), t.Number(), t.Boolean()]), { description: 'the figures it was raised on (counts, ratings, the amount at stake); never an address or a device token' }),
  },
)

export const PayoutHold = t.Object(
  {
    id: t.String({ description: '`hld_…`' }),
    kind: t.Union([t.Literal('stake'), t.Literal('prize')], { description: 'stake: a staked match\'s winnings (the pot less the rake); prize: a tournament prize' }),
    status: t.Union([t.Literal('held'), t.Literal('released'), t.Literal('voided')]),
    matchId: t.String({ description: 'the staked match, or the flagged match that held the prize' }),
    tournamentId: t.Nullable(t.String()),
    rank: t.Nullable(t.Integer({ description: 'a prize\'s rank' })),
    userId: t.String({ description: 'the winner' }),
    username: t.String(),
    participantId: t.String(),
    amount: t.String({ description: 'decimal string: what a release pays the winner' }),
    asset: t.String(),
    signals: t.Array(RaisedSignalModel),
    createdAt: t.String(),
    decidedAt: t.Nullable(t.String()),
    decidedBy: t.Nullable(t.String({ description: 'the operator who released or voided it' })),
    reason: t.Nullable(t.String()),
  },
  { $id: 'PayoutHold' },
)
export type PayoutHold = Static<typeof PayoutHold>

export const PayoutsQuery = t.Object({
  status: t.Optional(t.Union([t.Literal('held'), t.Literal('released'), t.Literal('voided')], { description: 'default held' })),
  after: t.Optional(t.String({ maxLength: 64, description: 'the `cursor` of the previous page' })),
  limit: t.Optional(t.Numeric({ minimum: 1, maximum: 100, description: '1 to 100, default 50' })),
})

export const PayoutsPage = t.Object({
  payouts: t.Array(PayoutHold),
  cursor: t.Optional(t.String({ description: 'present when there may be more: pass it as `after`' })),
})
export type PayoutsPage = Static<typeof PayoutsPage>

export const PayoutResponse = t.Object({ payout: PayoutHold })
export type PayoutResponse = Static<typeof PayoutResponse>

export const PayoutDecisionBody = t.Object(
  { reason: t.String({ minLength: 1, maxLength: 500, description: 'why; kept with the hold and in the audit record' }) },
  { $id: 'PayoutDecisionBody' },
)

/** One of the caller's payouts held for review, in GET /wallet/transactions `held`. */
export const HeldPayout = t.Object(
  {
    holdId: t.String(),
    kind: t.Union([t.Literal('stake_payout'), t.Literal('prize')], { description: 'stake_payout: a staked match\'s winnings; prize: a tournament prize' }),
    amount: t.String({ description: 'decimal string: what you are paid if it is released' }),
    asset: t.String(),
    matchId: t.String(),
    tournamentId: t.Nullable(t.String()),
    heldAt: t.String(),
  },
  { $id: 'HeldPayout' },
)
export type HeldPayout = Static<typeof HeldPayout>
