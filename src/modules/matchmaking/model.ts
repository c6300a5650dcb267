// The wire shapes of matchmaking (contract §16): queues, tickets, the match a
// queue or a challenge makes, and challenges.
import { t, type Static } from 'elysia'

const Amount = (description: string) => t.String({ minLength: 1, maxLength: 40, description })
const Instant = t.String({ description: 'ISO 8601, UTC' })

export const QueueWindowSchema = t.Object(
  {
    initial: t.Number({ minimum: 0, maximum: 10_000, description: 'half-width of a new ticket\'s window, in display points' }),
    widenPerSecond: t.Number({ minimum: 0, maximum: 10_000, description: 'how much the half-width grows each second waited' }),
    max: t.Number({ minimum: 0, maximum: 10_000, description: 'the largest half-width; at least `initial`' }),
  },
  { $id: 'QueueWindow' },
)

export const DrawRuleSchema = t.Union([t.Literal('replay'), t.Literal('result')], { description: '`replay` (default): an agreed draw is played again; `result`: it decides the match (stakes refunded)' })

const QueueSettings = {
  rated: t.Boolean({ description: 'its matches update ratings' }),
  stake: t.Optional(t.Nullable(Amount('what each player puts in (a decimal amount); null or absent: no stake'))),
  rake: t.Optional(t.String({ minLength: 1, maxLength: 10, description: 'the house\'s share of the pot, a decimal fraction 0–0.5 (`"0.05"`); default `"0"`' })),
  window: QueueWindowSchema,
  readyCheckS: t.Integer({ minimum: 5, maximum: 600, description: 'seconds both players have to confirm a match found' }),
  matchDeadlineS: t.Optional(t.Nullable(t.Integer({ minimum: 60, maximum: 604_800, description: 'seconds to play once ready (the deadline job settles a match still running); none by default' }))),
  rematchCooldownS: t.Optional(t.Integer({ minimum: 0, maximum: 604_800, description: 'two players are not paired again within this many seconds of their last match; default 0' })),
  draws: t.Optional(DrawRuleSchema),
}

export const CreateQueueBody = t.Object({ name: t.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]*$', description: 'unique among the game\'s open queues; letters, digits, `_ . -`' }), ...QueueSettings }, { $id: 'CreateQueueBody' })
export type CreateQueueBody = Static<typeof CreateQueueBody>

export const UpdateQueueBody = t.Partial(t.Object(QueueSettings), { $id: 'UpdateQueueBody' })
export type UpdateQueueBody = Static<typeof UpdateQueueBody>

export const Queue = t.Object(
  {
    id: t.String(),
    gameId: t.String(),
    name: t.String(),
    rated: t.Boolean(),
    stake: t.Nullable(t.String({ description: 'what each player puts in; null: no stake' })),
    rake: t.String(),
    window: QueueWindowSchema,
    readyCheckS: t.Integer(),
    matchDeadlineS: t.Nullable(t.Integer()),
    rematchCooldownS: t.Integer(),
    draws: DrawRuleSchema,
    createdAt: Instant,
    updatedAt: Instant,
    closedAt: t.Nullable(t.String({ description: 'when an operator closed it; null while open' })),
  },
  { $id: 'Queue' },
)
export type Queue = Static<typeof Queue>

export const QueueCloseReason = t.Union([
  t.Literal('left'),
  t.Literal('matched'),
  t.Literal('ready_timeout'),
  t.Literal('insufficient_funds'),
  t.Literal('queue_closed'),
  t.Literal('account_closed'),
])

export const Ticket = t.Object(
  {
    id: t.String(),
    gameId: t.String(),
    queue: t.String({ description: 'the queue\'s name' }),
    status: t.Union([t.Literal('open'), t.Literal('matched'), t.Literal('cancelled')]),
    display: t.Number({ description: 'the rating display the window is centred on (the player\'s when they joined)' }),
    window: t.Number({ description: 'the window\'s half-width now' }),
    waitingSince: Instant,
    matchId: t.Nullable(t.String({ description: 'the match it made' })),
    createdAt: Instant,
    closedAt: t.Nullable(t.String()),
    closeReason: t.Nullable(QueueCloseReason),
  },
  { $id: 'Ticket' },
)
export type Ticket = Static<typeof Ticket>

export const MatchPlayer = t.Object({
  participantId: t.String({ description: 'the seat: what claims and sessions name' }),
  userId: t.String(),
  username: t.String(),
  slot: t.Union([t.Literal(1), t.Literal(2)]),
  ready: t.Boolean({ description: 'confirmed the ready check (true once the match runs)' }),
})

export const MatchView = t.Object(
  {
    id: t.String(),
    kind: t.Union([t.Literal('tournament'), t.Literal('queue'), t.Literal('challenge')]),
    gameId: t.String(),
    tournamentId: t.Nullable(t.String()),
    queue: t.Nullable(t.String({ description: 'the queue that made it' })),
    challengeId: t.Nullable(t.String({ description: 'the challenge that made it' })),
    status: t.Union([t.Literal('waiting'), t.Literal('running'), t.Literal('disputed'), t.Literal('decided'), t.Literal('cancelled')]),
    rated: t.Boolean(),
    stake: t.Nullable(t.String({ description: 'what each player put in; null: none' })),
    rake: t.String({ description: 'the house\'s share of the pot' }),
    players: t.Array(MatchPlayer),
    readyBy: t.Nullable(t.String({ description: 'the ready check ends then (a match found, waiting for both players)' })),
    deadline: t.Nullable(t.String()),
    createdAt: t.Nullable(t.String()),
    decision: t.Nullable(
      t.Object({
        outcome: t.Union([t.Literal('WIN'), t.Literal('DRAW')]),
        winnerParticipantId: t.Nullable(t.String()),
        decidedBy: t.Union([t.Literal('played'), t.Literal('bye'), t.Literal('walkover')]),
        decidedAt: t.String(),
      }),
    ),
  },
  { $id: 'MatchView' },
)
export type MatchView = Static<typeof MatchView>

export const CancelMatchBody = t.Object({ reason: t.String({ minLength: 1, maxLength: 500 }) }, { $id: 'CancelMatchBody' })

export const CreateChallengeBody = t.Object(
  {
    opponent: t.String({ minLength: 1, maxLength: 64, description: 'a username or a user id' }),
    stake: t.Optional(t.Nullable(Amount('what each player puts in (a decimal amount)'))),
    expiresInS: t.Optional(t.Integer({ minimum: 30, maximum: 86_400, description: 'default 300' })),
  },
  { $id: 'CreateChallengeBody' },
)
export type CreateChallengeBody = Static<typeof CreateChallengeBody>

const Person = t.Object({ userId: t.String(), username: t.String() })

export const Challenge = t.Object(
  {
    id: t.String(),
    gameId: t.String(),
    challenger: Person,
    opponent: Person,
    stake: t.Nullable(t.String()),
    status: t.Union([t.Literal('open'), t.Literal('accepted'), t.Literal('declined'), t.Literal('expired'), t.Literal('cancelled')]),
    expiresAt: Instant,
    matchId: t.Nullable(t.String({ description: 'the match its acceptance made' })),
    createdAt: Instant,
    closedAt: t.Nullable(t.String()),
  },
  { $id: 'Challenge' },
)
export type Challenge = Static<typeof Challenge>
