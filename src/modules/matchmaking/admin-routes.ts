// Operator routes of matchmaking (contract §16): a game's queues, a match's
// view and its cancellation. Added to the operator module's own instance (a
// function plugin), so its token check guards them.
import { Elysia, t } from 'elysia'
import { errors, INVALID, JSON_BODY, STORAGE } from '../../plugins/openapi'
import { actorOf, OPERATOR, operatorRoute } from '../admin/operator'
import type { MatchmakingService } from './service'
import type { EvidenceService } from '../evidence/service'
import { AdminMatchViewResponse } from '../evidence/model'
import { CancelMatchBody, CreateQueueBody, MatchView, Queue, UpdateQueueBody } from './model'
import { QueuesResponse } from './index'

const GameParams = t.Object({ id: t.String({ minLength: 1, maxLength: 64 }) })
const QueueParams = t.Object({ id: t.String({ minLength: 1, maxLength: 64 }), name: t.String({ minLength: 1, maxLength: 64 }) })
const QueueResponse = t.Object({ queue: Queue })

export function adminMatchmakingRoutes(matchmaking: MatchmakingService, evidence: EvidenceService) {
  return (app: Elysia<'/api/v1/admin'>) =>
    app
      .post(
        '/games/:id/queues',
        async ({ params, body, set, request }) => {
          set.status = 201
          return await matchmaking.createQueue(params.id, body, actorOf(request))
        },
        {
          params: GameParams,
          body: CreateQueueBody,
          response: { 201: QueueResponse, ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'], 409: ['queue_exists', 'conflict'] }, STORAGE) },
          ...operatorRoute('admin', 'Open a queue in a game: its rating window, ready check, stake and rake, rematch cooldown'),
        },
      )
      .get('/games/:id/queues', async ({ params, query }) => await matchmaking.queues(params.id, query.closed === 'include'), {
        params: GameParams,
        query: t.Object({ closed: t.Optional(t.Union([t.Literal('include'), t.Literal('exclude')], { description: '`include` lists closed queues too' })) }),
        response: { 200: QueuesResponse, ...errors(OPERATOR, INVALID, { 404: ['not_found'] }, STORAGE) },
        ...operatorRoute('viewer', 'A game\'s queues, by name'),
      })
      .patch('/games/:id/queues/:name', async ({ params, body, request }) => await matchmaking.updateQueue(params.id, params.name, body, actorOf(request)), {
        params: QueueParams,
        body: UpdateQueueBody,
        response: { 200: QueueResponse, ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'] }, STORAGE) },
        ...operatorRoute('admin', 'Change an open queue\'s settings: tickets waiting keep their place, matches made keep their terms'),
      })
      .delete('/games/:id/queues/:name', async ({ params, request }) => await matchmaking.closeQueue(params.id, params.name, actorOf(request)), {
        params: QueueParams,
        response: { 200: QueueResponse, ...errors(OPERATOR, INVALID, { 404: ['not_found'] }, STORAGE) },
        ...operatorRoute('admin', 'Close a queue: its waiting tickets are cancelled (players told); its matches go on'),
      })
      .get('/matches/:id', async ({ params }) => ({ ...(await matchmaking.match(params.id, null)), evidence: await evidence.ofMatch(params.id) }), {
        params: t.Object({ id: t.String({ minLength: 1, maxLength: 64 }) }),
        response: { 200: AdminMatchViewResponse, ...errors(OPERATOR, INVALID, { 404: ['not_found'] }, STORAGE) },
        ...operatorRoute('viewer', 'Any match: its kind, stake, players, status and decision, and the evidence its players attached (contract §17)'),
      })
      .post('/matches/:id/cancel', async ({ params, body, request }) => await matchmaking.cancel(params.id, body.reason, actorOf(request)), {
        params: t.Object({ id: t.String({ minLength: 1, maxLength: 64 }) }),
        body: CancelMatchBody,
        response: { 200: t.Object({ match: MatchView }), ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'], 409: ['conflict'] }, STORAGE) },
        ...operatorRoute('moderator', 'Cancel a queue\'s or a challenge\'s match not decided yet: both stakes refunded, both players told'),
      })
}
