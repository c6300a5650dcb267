import { t, type Static } from 'elysia'
import { BracketKind } from '../games/model'

export const GameIdParams = t.Object({ gameId: t.String({ minLength: 1, maxLength: 64 }) })

export const SessionBody = t.Object({ matchId: t.String({ minLength: 1, maxLength: 64 }) }, { $id: 'SessionBody' })

export const GameSessionResponse = t.Object(
  {
    sessionId: t.String(),
    token: t.String({ description: 'single use; send as x-session-token with the result' }),
    expiresAt: t.String(),
    context: t.Object({
      tournamentId: t.Nullable(t.String({ description: 'null for a match without a tournament (a queue\'s or a challenge\'s)' })),
      matchId: t.String(),
      participantId: t.String(),
      slot: t.Union([t.Literal(1), t.Literal(2)]),
    }),
  },
  { $id: 'GameSession' },
)

// One object rather than a union: Elysia's normalisation silently dropped an
// invalid `score` from a union member instead of refusing it.
export const ClaimBody = t.Object(
  {
    outcome: t.Union([t.Literal('WIN'), t.Literal('DRAW')]),
    winnerParticipantId: t.Optional(t.String({ minLength: 1, maxLength: 64, description: 'required with WIN, refused with DRAW' })),
    score: t.Optional(t.Record(t.String(), t.Unknown(), { description: 'stored, not compared' })),
  },
  { $id: 'ClaimBody' },
)

export const DecisionResponse = t.Object(
  {
    decision: t.Union([
      t.Literal('pending'),
      t.Literal('replay'),
      t.Literal('game_advance'),
      t.Literal('game_advance_pending_finalization'),
      t.Literal('dispute'),
    ]),
    reason: t.String(),
    matchId: t.String(),
    tournamentId: t.Nullable(t.String({ description: 'null for a match without a tournament' })),
    outcome: t.Optional(t.Union([t.Literal('WIN'), t.Literal('DRAW')], { description: 'with a `game_advance…` decision: `DRAW` is a result in round robin and Swiss' })),
    winnerParticipantId: t.Optional(t.String({ description: 'with a `game_advance…` decision that is a win' })),
    nextMatchId: t.Optional(t.String({ description: 'the match the winner moves to, when there is one' })),
  },
  { $id: 'Decision' },
)
export type DecisionResponse = Static<typeof DecisionResponse>

export const ResolveBody = t.Object({ winnerParticipantId: t.String({ minLength: 1, maxLength: 64 }) }, { $id: 'ResolveBody' })

/** Where a match is: its game, its tournament (none for a queue's or a challenge's match), round and position. */
const MatchPlace = {
  matchId: t.String(),
  kind: t.Union([t.Literal('tournament'), t.Literal('queue'), t.Literal('challenge')]),
  tournamentId: t.Nullable(t.String()),
  tournamentName: t.Nullable(t.String()),
  gameId: t.String(),
  bracket: BracketKind,
  round: t.Integer(),
  position: t.Integer(),
}

export const MyMatch = t.Object({
  ...MatchPlace,
  status: t.Union([t.Literal('waiting'), t.Literal('running'), t.Literal('disputed')]),
  participantId: t.String(),
  slot: t.Union([t.Literal(1), t.Literal(2)]),
  opponent: t.Nullable(t.Object({ participantId: t.String(), userId: t.String(), username: t.String() })),
})

/** A match the user was seated in, whatever its state (the account export). */
export const PlayedMatch = t.Object({
  ...MatchPlace,
  status: t.Union([t.Literal('waiting'), t.Literal('running'), t.Literal('disputed'), t.Literal('decided'), t.Literal('cancelled')]),
  participantId: t.String({ description: "the user's seat in the tournament" }),
  opponentParticipantId: t.Nullable(t.String()),
  winnerParticipantId: t.Nullable(t.String()),
  result: t.Nullable(t.Union([t.Literal('won'), t.Literal('lost'), t.Literal('drawn')])),
  decidedAt: t.Nullable(t.String()),
})
