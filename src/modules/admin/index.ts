// Operator routes (contract §6), thin over the same services the CLI calls.
// Mounted only when there is an operator token (ARENA_ADMIN_TOKEN, or in
// `local` the generated one); otherwise the whole tree is a 404 that says why,
// so nothing is open by accident and nobody hunts for a wrong URL.
import type { MatchmakingService } from '../matchmaking/service'
import { adminMatchmakingRoutes } from '../matchmaking/admin-routes'
import { adminGameServerRoutes } from './game-servers'
import type { GameServers } from '../games/game-servers'
import { adminEvidenceRoutes } from '../evidence'
import type { EvidenceService } from '../evidence/service'
import { adminPayoutRoutes } from '../integrity/admin-routes'
import type { PayoutService } from '../integrity/service'
import { adminWebhookRoutes } from '../webhooks'
import type { WebhooksService } from '../webhooks/service'
import { Elysia, t } from 'elysia'
import { constantTimeEqual } from '../../shared/crypto'
import { AppError } from '../../shared/errors'
import { errors, INVALID, JSON_BODY, STORAGE } from '../../plugins/openapi'
import { CorrectBody, CreateGameBody, CreateGameResponse, GameResponse, UpdateGameBody, CreateTournamentBody, FundBody, GameKeyResponse, Match, PrizePoolResponse, ReasonBody, TournamentResponse } from '../games/model'
import type { GamesService } from '../games/service'
import type { TournamentOperations } from '../games/tournament-operations'
import { DecisionResponse, ResolveBody } from '../matches/model'
import type { WalletService } from '../wallet/service'
import { CreateSeasonBody, RatingView, Season } from '../ratings/model'
import { SeasonsResponse } from '../ratings'
import type { RatingsService } from '../ratings/service'
import type { Storage } from '../../db/storage'
import { listSecurityEvents } from '../security/event-log'
import { listMail, mailView } from '../mail/mailbox'
import { MailboxQuery, MailboxResponse } from '../mail/model'
import { AdjustBody, CreditBody, RejectWithdrawalBody, WalletUserParams, WithdrawalDecisionResponse, WithdrawalsPage, WithdrawalsQuery } from './model'
import { withdrawalPage } from './withdrawals'
import type { OperationsOverview } from '../operations/service'
import type { WithdrawalService } from '../wallet/withdrawals'
import { ADMIN_TOKEN_HEADER, actorOf, OPERATOR, operatorRoute, setActor } from './operator'
import type { AuditLog, OperatorIdentity } from '../audit/log'
import { TOKEN_NAME } from '../operators/service'
import { requestState } from '../../plugins/request-context'
import { settleRateLimit } from '../../plugins/rate-limit'
import { adminUserRoutes, type AdminUserServices } from './users'
import { AuditPage, AuditQuery } from '../audit/model'
import { adminOperatorRoutes, adminSignInRoute, type AddressOf } from './operators'
import type { OperatorTotp } from '../operators/second-factor'
import type { OperatorService } from '../operators/service'
import type { OperatorSessions } from '../operators/sessions'

export { ADMIN_TOKEN_HEADER }
const IdParams = t.Object({ id: t.String({ minLength: 1, maxLength: 64 }) })
const SeasonResponse = t.Object({ season: Season })
const UserRatingsResponse = t.Object({
  ratings: t.Array(t.Composite([t.Object({ gameId: t.String(), seasonId: t.String({ description: 'the game\'s current season' }) }), RatingView]), { description: 'one per game the player has a rating in' }),
})

const ADMIN_PREFIX = '/api/v1/admin'
/** How GET /admin/withdrawals names its filters in a 422. */
const API_FILTER_NAMES = { status: 'query/status', from: 'query/from', to: 'query/to', after: 'query/after', limit: 'query/limit' }

/** The admin token acts as this operator (contract §11): the automation credential. */
export const TOKEN_OPERATOR: OperatorIdentity = { id: null, name: TOKEN_NAME, role: 'admin' }

/** The path of a request URL (`http://host/a/b?q` → `/a/b`), without parsing the whole URL. */
function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  if (start === -1) return '/'
  const query = url.indexOf('?', start)
  return query === -1 ? url.slice(start) : url.slice(start, query)
}

/**
 * The /api/v1/admin tree while no operator token is configured: every path
 * under it, every method. Refused before routing, so no route exists there:
 * no body is ever parsed (a catch-all route made Elysia's own parsers read
 * OPTIONS bodies of any size) and `/api/v1/administrator` is not caught.
 */
export const operatorApiDisabled = new Elysia({ name: 'arena/admin-disabled' }).onRequest(({ request }) => {
  const path = pathOf(request.url)
  if (path === ADMIN_PREFIX || path.startsWith(`${ADMIN_PREFIX}/`)) {
    throw new AppError('operator_api_disabled', 'The operator API is disabled: set ARENA_ADMIN_TOKEN to enable it')
  }
})

/**
 * GET /admin/dev/mail, the dev mailbox (contract §8): what arena queued, to
 * read a code without a mail server. Mounted only in `local` (see
 * adminModule), inside the operator module so the token check covers it.
 */
function devMailbox(storage: Storage) {
  return new Elysia({ name: 'arena/admin-dev-mail' }).get('/dev/mail', async ({ query }) => ({ messages: (await listMail(storage.read.mail, query.to)).map(mailView) }), {
    query: MailboxQuery,
    response: { 200: MailboxResponse, ...errors(OPERATOR, INVALID, STORAGE) },
    ...operatorRoute('admin', 'The dev mailbox (local only): mail queued to an address, newest first'),
  })
}

export function adminModule(
  adminToken: string,
  games: GamesService,
  tournamentOperations: TournamentOperations,
  wallet: WalletService,
  storage: Storage,
  /** `devMailbox`: mount GET /admin/dev/mail (ARENA_ENV=local only; elsewhere that path is the ordinary 404). The rest: the user routes' services. */
  options: {
    devMailbox: boolean
    /** Ratings and seasons (contract §15). */
    ratings: RatingsService
    /** Queues and matches without a tournament (contract §16). */
    matchmaking: MatchmakingService
    /** Game servers (contract §17). */
    gameServers: GameServers
    /** Evidence attached to disputes: listed with the admin match view, downloaded at /admin/evidence/{id}. */
    evidence: EvidenceService
    withdrawals: WithdrawalService
    /** The withdrawal history (GET /admin/withdrawals), the console's own read. */
    operations: OperationsOverview
    audit: AuditLog
    /** A named operator's API session from `Authorization: Bearer …`; null when it is none (unknown, expired, revoked, disabled). */
    operatorSession: (token: string, request: Request) => Promise<OperatorIdentity | null>
    operators: OperatorService
    operatorSessions: OperatorSessions
    operatorTotp: OperatorTotp
    /** The client's address, for the sign-in throttle. */
    addressOf: AddressOf
    /** Payouts held for review by integrity signals (contract §17). */
    payouts: PayoutService
    /** Webhook endpoints and their deliveries (contract §18). */
    webhooks: WebhooksService
  } & AdminUserServices,
) {
  // Signing in (POST /admin/sessions) needs no credential: it is its own
  // instance, beside the guarded one, so the guard's hook (local to its
  // instance) never sees it and keeps no list of exceptions.
  return new Elysia({ name: 'arena/admin-api' }).use(adminSignInRoute(options.operators, options.operatorSessions, options.addressOf)).use(guardedAdminRoutes(adminToken, games, tournamentOperations, wallet, storage, options))
}

/** Every operator route but sign-in: the credential is a required header, checked by this instance's transform hook. */
function guardedAdminRoutes(...[adminToken, games, tournamentOperations, wallet, storage, options]: Parameters<typeof adminModule>) {
  return (
    new Elysia({ name: 'arena/admin', prefix: '/api/v1/admin' })
      // transform runs before validation: a caller without the token learns
      // nothing about what a valid body looks like.
      .onTransform(async ({ request }) => {
        const requestId = requestState(request)?.id ?? null
        let operatorId: string | null = null
        try {
          const token = request.headers.get(ADMIN_TOKEN_HEADER)
          let operator: OperatorIdentity | null = null
          if (token !== null) {
            if (!constantTimeEqual(token, adminToken)) throw new AppError('unauthorized', 'Missing or invalid x-admin-token')
            operator = TOKEN_OPERATOR
          } else {
            const bearer = /^Bearer +(\S+)$/i.exec(request.headers.get('authorization') ?? '')?.[1]
            operator = bearer === undefined ? null : await options.operatorSession(bearer, request)
            if (operator === null) throw new AppError('unauthorized', 'Missing or invalid operator credential: x-admin-token, or an operator session as a bearer')
          }
          // The shared token is one operator to the limiter, whoever holds it.
          operatorId = operator.id ?? TOKEN_NAME
          setActor(request, options.audit.actor(operator, 'api', requestId))
        } finally {
          // The operator's rate limit once the credential is known; a refused one counts against the address alone.
          await settleRateLimit(request, operatorId)
        }
      })
      .post(
        '/games',
        async ({ body, set, request }) => {
          set.status = 201
          return await games.createGame(body.name, actorOf(request), body.rating, body.challengeRake, body.results)
        },
        { body: CreateGameBody, response: { 201: CreateGameResponse, ...errors(JSON_BODY, OPERATOR, STORAGE) }, ...operatorRoute('admin', 'Create a game, with its rating settings (defaults τ 0.5, a week); its key is shown once') },
      )
      .patch('/games/:id', async ({ params, body, request }) => ({ game: await games.updateGame(params.id, body, actorOf(request)) }), {
        params: IdParams,
        body: UpdateGameBody,
        response: { 200: GameResponse, ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'] }, STORAGE) },
        ...operatorRoute('admin', 'Rename a game, change its rating settings (τ from the next rated match, a new inactivity period on the board at once) or who reports its results (`results`)'),
      })
      .post(
        '/games/:id/seasons',
        async ({ params, body, set, request }) => {
          set.status = 201
          return await options.ratings.createSeason(params.id, body, actorOf(request))
        },
        {
          params: IdParams,
          body: CreateSeasonBody,
          response: { 201: SeasonResponse, ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'], 409: ['conflict'] }, STORAGE) },
          ...operatorRoute('admin', 'Schedule a season of a game: at startsAt its job ends the current season (its final board kept) and resets every rating, soft or hard'),
        },
      )
      // `:id` as every /admin/games/{id}/… route (the router takes one name per place in a path).
      .get('/games/:id/seasons', async ({ params }) => await options.ratings.seasons(params.id), {
        params: IdParams,
        response: { 200: SeasonsResponse, ...errors(OPERATOR, INVALID, { 404: ['not_found'] }, STORAGE) },
        ...operatorRoute('viewer', 'A game\'s seasons, newest first: scheduled, current and ended'),
      })
      .get('/users/:id/ratings', async ({ params }) => await options.ratings.ofUser(await options.users.idOf(params.id)), {
        params: IdParams,
        response: { 200: UserRatingsResponse, ...errors(OPERATOR, INVALID, { 404: ['not_found'] }, STORAGE) },
        ...operatorRoute('viewer', 'A player\'s rating in every game they were rated in (by user id or username)'),
      })
      .post('/games/:id/rotate-key', async ({ params, request }) => await games.rotateKey(params.id, actorOf(request)), {
        params: IdParams,
        response: { 200: GameKeyResponse, ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'] }, STORAGE) },
        ...operatorRoute('admin', 'Issue a new game key; the old one stops working'),
      })
      .post(
        '/tournaments',
        async ({ body, set, request }) => {
          set.status = 201
          return { tournament: await games.createTournament(body, actorOf(request)) }
        },
        {
          body: CreateTournamentBody,
          response: { 201: TournamentResponse, ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'] }, STORAGE) },
          ...operatorRoute('moderator', 'Create a single-elimination tournament: with `participants` a draft seeded in their order, or with `registration` and `startsAt` one players join, started by itself at startsAt'),
        },
      )
      .post('/tournaments/:id/start', async ({ params, request }) => ({ tournament: await games.startTournament(params.id, actorOf(request)) }), {
        params: IdParams,
        response: { 200: TournamentResponse, ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'], 409: ['conflict', 'registration_open', 'check_in_open', 'prize_pool_underfunded'] }, STORAGE) },
        ...operatorRoute('moderator', 'Build the bracket, apply byes, open the first matches (a registration: once it has closed, before startsAt); with prizes, once the escrow covers them'),
      })
      .post('/tournaments/:id/fund', async ({ params, body, request }) => await games.fund(params.id, body, actorOf(request)), {
        params: IdParams,
        body: FundBody,
        response: { 200: PrizePoolResponse, ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'], 409: ['conflict', 'idempotency_key_reused'] }, STORAGE) },
        ...operatorRoute('finance', 'Fund a tournament\'s prize pool: the amount moves from the funding account into its escrow, once per reference'),
      })
      .post('/tournaments/:id/cancel', async ({ params, body, request }) => ({ tournament: await games.cancelTournament(params.id, body.reason, actorOf(request)) }), {
        params: IdParams,
        body: ReasonBody,
        response: { 200: TournamentResponse, ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'], 409: ['conflict'] }, STORAGE) },
        ...operatorRoute('moderator', 'Cancel a tournament: its undecided matches are cancelled, open game sessions stop working, every participant is told'),
      })
      .post(
        '/tournaments/:id/participants/:participantId/disqualify',
        async ({ params, body, request }) => await tournamentOperations.disqualify(params.id, params.participantId, body.reason, actorOf(request)),
        {
          params: t.Object({ id: t.String({ minLength: 1, maxLength: 64 }), participantId: t.String({ minLength: 1, maxLength: 64 }) }),
          body: ReasonBody,
          response: {
            200: t.Object({ match: Match }),
            ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'], 409: ['conflict'] }, STORAGE),
          },
          ...operatorRoute('moderator', 'Disqualify a participant: their current match goes to the opponent (now, or as a walkover once the opponent is known)'),
        },
      )
      .get('/tournaments/:id', async ({ params }) => ({ tournament: await games.getTournament(params.id) }), {
        params: IdParams,
        response: { 200: TournamentResponse, ...errors(OPERATOR, INVALID, { 404: ['not_found'] }, STORAGE) },
        ...operatorRoute('viewer', 'A tournament with its participants and bracket'),
      })
      .post(
        '/wallets/:userId/credit',
        async ({ params, body, request }) => wallet.credit({ userId: await options.users.idOf(params.userId), amount: body.amount, reference: body.reference }, actorOf(request)),
        {
          params: WalletUserParams,
          body: CreditBody,
          response: { 200: t.Object({ balance: t.String() }), ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'], 409: ['conflict'] }, STORAGE) },
          ...operatorRoute('finance', 'Credit a wallet (idempotent by reference)'),
        },
      )
      .post(
        '/wallets/:userId/adjust',
        async ({ params, body, request }) => wallet.adjust({ userId: await options.users.idOf(params.userId), amount: body.amount, reason: body.reason, reference: body.reference }, actorOf(request)),
        {
          params: WalletUserParams,
          body: AdjustBody,
          response: {
            200: t.Object({ balance: t.String() }),
            ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'], 409: ['idempotency_key_reused'], 422: ['insufficient_funds'] }, STORAGE),
          },
          ...operatorRoute('finance', 'Adjust a wallet by a signed amount with a reason (idempotent by reference; never below zero)'),
        },
      )
      .get('/withdrawals', ({ query }) => withdrawalPage(options.operations, query, API_FILTER_NAMES), {
        query: WithdrawalsQuery,
        response: { 200: WithdrawalsPage, ...errors(OPERATOR, INVALID, { 404: ['not_found'] }, STORAGE) },
        ...operatorRoute('viewer', 'Every withdrawal of every user in any status, newest first, filtered by status, user and UTC creation days'),
      })
      .post('/withdrawals/:id/approve', async ({ params, request }) => ({ withdrawal: await options.withdrawals.approve(params.id, actorOf(request)) }), {
        params: IdParams,
        response: { 200: WithdrawalDecisionResponse, ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'], 409: ['withdrawal_not_awaiting_approval', 'withdrawal_owner_banned'] }, STORAGE) },
        ...operatorRoute('finance', 'Approve a withdrawal awaiting approval: signed at once, or held until its new-destination hold ends (idempotent); refused while its owner is banned'),
      })
      .post('/withdrawals/:id/reject', async ({ params, body, request }) => ({ withdrawal: await options.withdrawals.reject(params.id, body.reason, actorOf(request)) }), {
        params: IdParams,
        body: RejectWithdrawalBody,
        response: { 200: WithdrawalDecisionResponse, ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'], 409: ['withdrawal_signing_started', 'conflict'] }, STORAGE) },
        ...operatorRoute('finance', 'Reject a withdrawal awaiting approval or held for a new destination: its amount goes back to the wallet (idempotent); one custody has had is 409'),
      })
      .get(
        '/security-events',
        ({ query }) => {
          if (query.after !== undefined && !/^(0|[1-9][0-9]{0,14})$/.test(query.after)) {
            throw new AppError('validation_failed', 'Request failed validation', { details: [{ path: 'query/after', message: 'Not a cursor this server issued' }] })
          }
          if (query.limit !== undefined && !Number.isInteger(query.limit)) {
            throw new AppError('validation_failed', 'Request failed validation', { details: [{ path: 'query/limit', message: 'Expected a whole number' }] })
          }
          return listSecurityEvents(storage.read.security, Number(query.after ?? 0), query.limit ?? 100)
        },
        {
          query: t.Object({ after: t.Optional(t.String({ maxLength: 20 })), limit: t.Optional(t.Numeric({ minimum: 1, maximum: 500 })) }),
          response: { 200: t.Object({ events: t.Array(t.Record(t.String(), t.Unknown())), cursor: t.String() }), ...errors(OPERATOR, INVALID, STORAGE) },
          ...operatorRoute('viewer', 'Security events, oldest first after the cursor'),
        },
      )
      .get(
        '/audit',
        ({ query }) => {
          if (query.after !== undefined && !/^(0|[1-9][0-9]{0,14})$/.test(query.after)) {
            throw new AppError('validation_failed', 'Request failed validation', { details: [{ path: 'query/after', message: 'Not a cursor this server issued' }] })
          }
          if (query.limit !== undefined && !Number.isInteger(query.limit)) {
            throw new AppError('validation_failed', 'Request failed validation', { details: [{ path: 'query/limit', message: 'Expected a whole number' }] })
          }
          return options.audit.page(storage.read.audit, Number(query.after ?? 0), query.limit ?? 100)
        },
        {
          query: AuditQuery,
          response: { 200: AuditPage, ...errors(OPERATOR, INVALID, STORAGE) },
          ...operatorRoute('viewer', 'The operator audit log, oldest first after the cursor'),
        },
      )
      .post('/matches/:id/resolve', async ({ params, body, request }) => await tournamentOperations.resolve(params.id, body.winnerParticipantId, actorOf(request)), {
        params: IdParams,
        body: ResolveBody,
        response: { 200: t.Object({ match: Match, decision: DecisionResponse }), ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'], 409: ['match_not_running'] }, STORAGE) },
        ...operatorRoute('moderator', 'Decide a disputed (or running) match; advances the bracket'),
      })
      .post('/matches/:id/correct', async ({ params, body, request }) => await tournamentOperations.correct(params.id, body.winnerParticipantId, body.reason, actorOf(request)), {
        params: IdParams,
        body: CorrectBody,
        response: { 200: t.Object({ match: Match }), ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'], 409: ['conflict', 'correction_too_late', 'winner_disqualified'] }, STORAGE) },
        ...operatorRoute('moderator', 'Correct a decided result while the match it fed has no claim; the new winner takes the old one\'s slot'),
      })
      .use(options.devMailbox ? devMailbox(storage) : new Elysia({ name: 'arena/admin-dev-mail-off' }))
      // Users: search, one user in full, bans, deletion (contract §8). Added to
      // this instance (a function plugin), so the token check above guards them.
      .use(adminUserRoutes(options))
      // Queues and matches without a tournament (contract §16).
      .use(adminMatchmakingRoutes(options.matchmaking, options.evidence))
      .use(adminEvidenceRoutes(options.evidence))
      // Game servers and their keys (contract §17).
      .use(adminGameServerRoutes(options.gameServers))
      // Payouts held for review by integrity signals (contract §17).
      .use(adminPayoutRoutes(options.payouts))
      // Webhook endpoints and their deliveries (contract §18).
      .use(adminWebhookRoutes(options.webhooks))
      // Sign-out and operator accounts (contract §11).
      .use(adminOperatorRoutes(options.operators, options.operatorSessions, options.operatorTotp))
  )
}
