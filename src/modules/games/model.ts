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
    status: t.Union([t.Literal('waiting'), t.Literal('running'), t.Literal('disputed'), t.Literal('decided'), t.Literal('cancelled')], {
      description: '`cancelled`: its tournament was cancelled before it was decided',
    }),
    slot1ParticipantId: t.Nullable(t.String()),
    slot2ParticipantId: t.Nullable(t.String()),
    winnerParticipantId: t.Nullable(t.String()),
    nextMatchId: t.Nullable(t.String()),
    deadline: t.Nullable(t.String({ description: 'ISO time at which a match still running is settled (options.matchDeadlineS); null: no deadline, or not running yet' })),
  },
  { $id: 'Match' },
)
export type Match = Static<typeof Match>

export const TournamentOptions = t.Object(
  {
    matchDeadlineS: t.Optional(
      t.Integer({ minimum: 1, maximum: 31_536_000, description: 'seconds a match may run before it is settled (no_show or deadline_passed); absent: no deadline' }),
    ),
  },
  { $id: 'TournamentOptions' },
)

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
    options: TournamentOptions,
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
  options: t.Optional(TournamentOptions),
})

export const ReasonBody = t.Object({ reason: t.String({ minLength: 1, maxLength: 500, description: 'why; every affected player sees it in the event' }) })

export const CorrectBody = t.Object({
  winnerParticipantId: t.String({ minLength: 1, maxLength: 64, description: 'the participant who really won: the other player of the match' }),
  reason: t.String({ minLength: 1, maxLength: 500, description: 'why; both players see it in the match.corrected event' }),
})
export type CreateTournamentBody = Static<typeof CreateTournamentBody>
