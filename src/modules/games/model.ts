import { t, type Static } from 'elysia'

export const Game = t.Object({ id: t.String(), name: t.String(), createdAt: t.String() }, { $id: 'Game' })

export const CreateGameBody = t.Object({ name: t.String({ minLength: 1, maxLength: 100 }) })
export const CreateGameResponse = t.Object({ game: Game, gameKey: t.String({ description: 'shown once; store it' }) })
export const GameKeyResponse = t.Object({ gameKey: t.String() })

export const Match = t.Object(
  {
    id: t.String(),
    round: t.Integer(),
    position: t.Integer(),
    status: t.Union([t.Literal('waiting'), t.Literal('running'), t.Literal('disputed'), t.Literal('decided')]),
    slot1ParticipantId: t.Nullable(t.String()),
    slot2ParticipantId: t.Nullable(t.String()),
    winnerParticipantId: t.Nullable(t.String()),
    nextMatchId: t.Nullable(t.String()),
  },
  { $id: 'Match' },
)
export type Match = Static<typeof Match>

export const Tournament = t.Object(
  {
    id: t.String(),
    gameId: t.String(),
    name: t.String(),
    format: t.Literal('single_elimination'),
    status: t.Union([t.Literal('draft'), t.Literal('running'), t.Literal('finalizing'), t.Literal('completed'), t.Literal('cancelled')]),
    participants: t.Array(t.Object({ id: t.String(), userId: t.String(), seed: t.Integer() })),
    matches: t.Array(Match),
    winnerParticipantId: t.Nullable(t.String()),
  },
  { $id: 'Tournament' },
)
export type Tournament = Static<typeof Tournament>

export const TournamentResponse = t.Object({ tournament: Tournament })

export const CreateTournamentBody = t.Object({
  gameId: t.String({ minLength: 1 }),
  name: t.String({ minLength: 1, maxLength: 100 }),
  format: t.Literal('single_elimination'),
  participants: t.Array(t.String({ minLength: 1, maxLength: 64 }), {
    minItems: 2,
    maxItems: 1024,
    description: 'user ids or usernames, seeded in this order',
  }),
})
export type CreateTournamentBody = Static<typeof CreateTournamentBody>
