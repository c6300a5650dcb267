import { t, type Static } from 'elysia'
import type { TLiteral, TUnion } from '@sinclair/typebox'
import { GameRatingSettings } from '../ratings/model'
import { BRACKETS, FORMAT_NAMES, FORMAT_OPTIONS, type BracketTuple, type FormatNameTuple } from './formats/engines'

const ChallengeRake = t.String({ minLength: 1, maxLength: 10, description: 'the house\'s share of a challenge\'s pot (contract §16), a decimal fraction 0–0.5 (`"0.05"`); default `"0"`' })
/** Who reports a game's results (contract §17). */
export const GameResults = t.Union([t.Literal('claims'), t.Literal('server'), t.Literal('either')], {
  description: '`claims` (the default): the players\' claims; `server`: its signed game servers only (claims are refused, 403 server_results_only); `either`: both',
})
export const Game = t.Object({ id: t.String(), name: t.String(), createdAt: t.String(), rating: GameRatingSettings, challengeRake: ChallengeRake, results: GameResults }, { $id: 'Game' })
export type Game = Static<typeof Game>

/** Rating settings to set (contract §15): each field optional, within GameRatingSettings' bounds; one left out keeps its value (its default on creation). */
export const GameRatingPatch = t.Object(
  { tau: t.Optional(GameRatingSettings.properties.tau), inactivityPeriodS: t.Optional(GameRatingSettings.properties.inactivityPeriodS) },
  { $id: 'GameRatingPatch' },
)
export type GameRatingPatch = Static<typeof GameRatingPatch>

const GameName = t.String({ minLength: 1, maxLength: 100 })
export const CreateGameBody = t.Object({ name: GameName, rating: t.Optional(GameRatingPatch), challengeRake: t.Optional(ChallengeRake), results: t.Optional(GameResults) }, { $id: 'CreateGameBody' })
export type CreateGameBody = Static<typeof CreateGameBody>
export const UpdateGameBody = t.Object(
  { name: t.Optional(GameName), rating: t.Optional(GameRatingPatch), challengeRake: t.Optional(ChallengeRake), results: t.Optional(GameResults) },
  { $id: 'UpdateGameBody', description: 'at least one field; a field left out keeps its value' },
)
export type UpdateGameBody = Static<typeof UpdateGameBody>
export const GameResponse = t.Object({ game: Game })
export const CreateGameResponse = t.Object({ game: Game, gameKey: t.String({ description: 'shown once; store it' }) })
export const GameKeyResponse = t.Object({ gameKey: t.String() })

/** A game's dedicated server (contract §17): its Ed25519 public key, never a secret. */
export const GameServer = t.Object(
  {
    id: t.String(),
    gameId: t.String(),
    name: t.String(),
    publicKey: t.String({ description: 'the Ed25519 public key, raw 32 bytes as base64url without padding' }),
    createdAt: t.String(),
    rotatedAt: t.Nullable(t.String({ description: 'when the key was last replaced; null: never' })),
    disabledAt: t.Nullable(t.String({ description: 'when an operator disabled it; null: active' })),
    status: t.Union([t.Literal('active'), t.Literal('disabled')]),
  },
  { $id: 'GameServer' },
)
export type GameServer = Static<typeof GameServer>
const ServerPublicKey = t.String({ minLength: 1, maxLength: 100, description: 'an Ed25519 public key: its raw 32 bytes as base64url without padding (43 characters)' })
export const CreateGameServerBody = t.Object({ name: t.String({ minLength: 1, maxLength: 64 }), publicKey: ServerPublicKey }, { $id: 'CreateGameServerBody' })
export const RotateGameServerBody = t.Object({ publicKey: ServerPublicKey }, { $id: 'RotateGameServerBody' })
export const GameServerResponse = t.Object({ server: GameServer })
export const GameServersResponse = t.Object({ servers: t.Array(GameServer, { description: 'oldest first, active and disabled' }) })

/** A union of the literals `names` (lists of the formats' registry), typed by their tuple `T` (the static types need one). */
function literals<T extends string[]>(names: readonly T[number][], options: { description: string }): TUnion<{ [K in keyof T]: TLiteral<T[K]> }> {
  return t.Union(names.map((name) => t.Literal(name)), options) as unknown as TUnion<{ [K in keyof T]: TLiteral<T[K]> }>
}

export const FormatName = literals<FormatNameTuple>(FORMAT_NAMES, { description: 'how the tournament is played (docs/tournaments.md)' })

export const BracketKind = literals<BracketTuple>(BRACKETS, {
  description: 'the part of the tournament the match belongs to: `winners` for every single-elimination match but the third-place one',
})

export const Match = t.Object(
  {
    id: t.String(),
    bracket: BracketKind,
    round: t.Integer({ description: 'from 1, within its bracket' }),
    position: t.Integer(),
    status: t.Union([t.Literal('waiting'), t.Literal('running'), t.Literal('disputed'), t.Literal('decided'), t.Literal('cancelled')], {
      description: '`cancelled`: its tournament was cancelled before it was decided',
    }),
    slot1ParticipantId: t.Nullable(t.String()),
    slot2ParticipantId: t.Nullable(t.String()),
    winnerParticipantId: t.Nullable(t.String({ description: 'null until decided, and for a draw' })),
    outcome: t.Nullable(t.Union([t.Literal('WIN'), t.Literal('DRAW')], { description: 'once decided: `DRAW` only in round robin and Swiss' })),
    nextMatchId: t.Nullable(t.String({ description: 'where the winner goes' })),
    loserNextMatchId: t.Nullable(t.String({ description: 'where the loser goes: the losers bracket (double elimination) or the third-place match' })),
    deadline: t.Nullable(t.String({ description: 'ISO time at which a match still running is settled (options.matchDeadlineS); null: no deadline, or not running yet' })),
  },
  { $id: 'Match' },
)
export type Match = Static<typeof Match>

export const TournamentStatus = t.Union([
  t.Literal('draft'),
  t.Literal('registration'),
  t.Literal('running'),
  t.Literal('finalizing'),
  t.Literal('completed'),
  t.Literal('cancelled'),
])

export const Seeding = t.Union([t.Literal('registration'), t.Literal('random'), t.Literal('rating')], { description: '`registration`: seeds in the order players joined; `random`: a shuffle reproducible from `seed`; `rating`: by display rating in the game at the start (docs/ratings.md), ties in the order they joined' })

/** How players sign up: null for a tournament an operator created with its participants. */
export const Registration = t.Object(
  {
    closesAt: t.String({ description: 'joining is possible until then (exclusive)' }),
    maxPlayers: t.Integer(),
    checkIn: t.Nullable(t.Object({ opensAt: t.String(), closesAt: t.String() }, { description: 'registrants who did not check in within [opensAt, closesAt) are dropped at the start' })),
    startsAt: t.String({ description: 'when the start job starts it' }),
    seeding: Seeding,
    seed: t.Nullable(t.String({ description: 'the random seeding\'s seed, shown once the tournament started (null before, and for `registration` seeding)' })),
  },
  { $id: 'Registration' },
)
export type Registration = Static<typeof Registration>
export const TournamentOptions = t.Object(
  {
    rated: t.Optional(t.Boolean({ description: 'whether its results move the players\' ratings in the game (docs/ratings.md); default true' })),
    matchDeadlineS: t.Optional(
      t.Integer({ minimum: 1, maximum: 31_536_000, description: 'seconds a match may run before it is settled (no_show or deadline_passed); absent: no deadline' }),
    ),
    // Each format's own (formats/engines.ts), whose descriptions say which.
    ...FORMAT_OPTIONS,
  },
  { $id: 'TournamentOptions' },
)

export const Standing = t.Object(
  {
    participantId: t.String(),
    rank: t.Integer({ description: '1..n, distinct: ties broken as docs/tournaments.md says' }),
    wins: t.Integer(),
    draws: t.Integer(),
    losses: t.Integer(),
    points: t.Integer({ description: 'win 3, draw 1, loss 0' }),
  },
  { $id: 'Standing' },
)

const EntryFee = t.Nullable(t.String({ description: 'decimal string: what registering takes from the wallet into the escrow (refunded on leaving before the start, on being dropped at it, on cancellation); null: free' }))
const Prizes = t.Array(t.String(), { description: 'decimal strings, rank 1 first: paid from the escrow at completion; the escrow\'s remainder goes to the house' })

export const Tournament = t.Object(
  {
    id: t.String(),
    gameId: t.String(),
    name: t.String(),
    format: FormatName,
    status: TournamentStatus,
    participants: t.Array(
      t.Object({
        id: t.String(),
        userId: t.String(),
        seed: t.Integer({ description: 'the bracket seed (1 = top); before the start of a registration, the registrant\'s number in join order' }),
        registeredAt: t.Nullable(t.String({ description: 'null for a participant the operator listed' })),
        checkedInAt: t.Nullable(t.String()),
        disqualifiedAt: t.Nullable(t.String({ description: 'when an operator disqualified them' })),
      }),
    ),
    matches: t.Array(Match),
    standings: t.Array(Standing, { description: 'live for round robin and Swiss; for the elimination formats empty until nothing is left to play (from `finalizing` on)' }),
    winnerParticipantId: t.Nullable(t.String()),
    registration: t.Nullable(Registration),
    options: TournamentOptions,
    entryFee: EntryFee,
    prizes: Prizes,
  },
  { $id: 'Tournament' },
)
export type Tournament = Static<typeof Tournament>

export const TournamentResponse = t.Object({ tournament: Tournament })

const Instant = (description: string) => t.String({ format: 'date-time', maxLength: 40, description })

export const CreateTournamentBody = t.Object(
  {
    gameId: t.String({ minLength: 1 }),
    name: t.String({ minLength: 1, maxLength: 100 }),
    format: FormatName,
    participants: t.Optional(
      t.Array(t.String({ minLength: 1, maxLength: 64 }), {
        minItems: 2,
        maxItems: 1024,
        description: 'user ids or usernames, seeded in this order: a `draft` the operator starts. Without it, `registration` and `startsAt` are required',
      }),
    ),
    registration: t.Optional(
      t.Object({
        closesAt: Instant('ISO-8601; after now, at or before startsAt'),
        maxPlayers: t.Integer({ minimum: 2, maximum: 1024 }),
        checkIn: t.Optional(
          t.Object({
            opensAt: Instant('after now, before checkIn.closesAt'),
            closesAt: Instant('at or before startsAt'),
          }),
        ),
      }),
    ),
    startsAt: t.Optional(Instant('when the tournament starts by itself (registration only); at most a year ahead')),
    seeding: t.Optional(Seeding),
    options: t.Optional(TournamentOptions),
    entryFee: t.Optional(t.String({ maxLength: 64, description: 'decimal string, positive: each registrant pays it into the escrow (registration only)' })),
    prizes: t.Optional(
      t.Array(t.String({ maxLength: 64 }), { maxItems: 1024, description: 'decimal strings, rank 1 first, at most one per player: the start waits for the escrow to cover their sum' }),
    ),
  },
  { $id: 'CreateTournamentBody' },
)
export type CreateTournamentBody = Static<typeof CreateTournamentBody>

export const ReasonBody = t.Object({ reason: t.String({ minLength: 1, maxLength: 500, description: 'why; every affected player sees it in the event' }) }, { $id: 'ReasonBody' })

export const CorrectBody = t.Object(
  {
    winnerParticipantId: t.String({ minLength: 1, maxLength: 64, description: 'the participant who really won: the other player of the match' }),
    reason: t.String({ minLength: 1, maxLength: 500, description: 'why; both players see it in the match.corrected event' }),
  },
  { $id: 'CorrectBody' },
)

export const TournamentSummary = t.Object(
  {
    id: t.String(),
    gameId: t.String(),
    name: t.String(),
    format: FormatName,
    status: TournamentStatus,
    participantCount: t.Integer({ description: 'registrants so far while in registration' }),
    registration: t.Nullable(Registration),
    entryFee: EntryFee,
    prizes: Prizes,
    createdAt: t.String(),
    startedAt: t.Nullable(t.String()),
  },
  { $id: 'TournamentSummary' },
)
export type TournamentSummary = Static<typeof TournamentSummary>

export const TournamentsQuery = t.Object({
  status: t.Optional(TournamentStatus),
  after: t.Optional(t.String({ maxLength: 64, description: 'the `cursor` of the previous page' })),
  limit: t.Optional(t.Numeric({ minimum: 1, maximum: 100, description: '1 to 100, default 50' })),
})

export const TournamentsPage = t.Object({
  tournaments: t.Array(TournamentSummary),
  cursor: t.Nullable(t.String({ description: 'pass as `after` for the next page; null at the end' })),
})
export type TournamentsPage = Static<typeof TournamentsPage>

/** The caller's own seat in a tournament they registered for. */
export const RegistrationView = t.Object(
  {
    tournamentId: t.String(),
    participantId: t.String(),
    registeredAt: t.String(),
    checkedInAt: t.Nullable(t.String()),
  },
  { $id: 'RegistrationView' },
)
export type RegistrationView = Static<typeof RegistrationView>
export const RegistrationResponse = t.Object({ registration: RegistrationView })

export const FundBody = t.Object(
  {
    amount: t.String({ maxLength: 64, description: 'decimal string, positive: moved from the funding account into the escrow' }),
    reference: t.String({ minLength: 1, maxLength: 128, description: 'idempotency: the same reference funds once' }),
  },
  { $id: 'FundBody' },
)

export const PrizePoolResponse = t.Object({
  tournamentId: t.String(),
  escrow: t.String({ description: 'decimal string: what the escrow holds now (fees and funding)' }),
  prizesTotal: t.String({ description: 'decimal string: the sum of the prizes, what the start needs the escrow to hold' }),
})
export type PrizePoolResponse = Static<typeof PrizePoolResponse>
