// Operator routes of webhooks (contract §18): endpoints created (the secret
// answered once), listed, changed, deleted, their secrets rotated; an
// endpoint's deliveries with their attempts, and a delivery resent. All need
// the admin role. Added to the operator module's own instance (a function
// plugin, src/modules/admin/index.ts), so its credential check guards them.
// The service: ./service.ts.
import { Elysia, t } from 'elysia'
import { errors, INVALID, JSON_BODY, STORAGE } from '../../plugins/openapi'
import { actorOf, OPERATOR, operatorRoute } from '../admin/operator'
import { CreateWebhookBody, DeliveriesPage, DeliveriesQuery, DeliveryResponse, UpdateWebhookBody, WebhookResponse, WebhooksResponse, WebhookWithSecret } from './model'
import type { WebhooksService } from './service'

const IdParams = t.Object({ id: t.String({ minLength: 1, maxLength: 64 }) })

export function adminWebhookRoutes(webhooks: WebhooksService) {
  return (app: Elysia<'/api/v1/admin'>) =>
    app
      .post(
        '/webhooks',
        async ({ body, set, request }) => {
          set.status = 201
          return await webhooks.create(body, actorOf(request))
        },
        {
          body: CreateWebhookBody,
          response: { 201: WebhookWithSecret, ...errors(JSON_BODY, OPERATOR, { 409: ['webhook_limit'], 422: ['destination_not_allowed'] }, STORAGE) },
          ...operatorRoute('admin', 'Add a webhook endpoint: its URL and the types sent to it; answers its signing secret, this once (at most 20 endpoints)'),
        },
      )
      .get('/webhooks', async () => ({ webhooks: await webhooks.list() }), {
        response: { 200: WebhooksResponse, ...errors(OPERATOR, STORAGE) },
        ...operatorRoute('admin', 'The webhook endpoints, oldest first (never their secrets)'),
      })
      .patch('/webhooks/:id', async ({ params, body, request }) => ({ webhook: await webhooks.update(params.id, body, actorOf(request)) }), {
        params: IdParams,
        body: UpdateWebhookBody,
        response: { 200: WebhookResponse, ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'], 422: ['destination_not_allowed'] }, STORAGE) },
        ...operatorRoute('admin', 'Change a webhook endpoint: its URL, types, description; enable or disable it'),
      })
      .delete(
        '/webhooks/:id',
        async ({ params, set, request }) => {
          await webhooks.delete(params.id, actorOf(request))
          set.status = 204
        },
        {
          params: IdParams,
          response: { 204: t.Void({ description: 'deleted, with its deliveries and their attempts; no body' }), ...errors(OPERATOR, INVALID, { 404: ['not_found'] }, STORAGE) },
          ...operatorRoute('admin', 'Delete a webhook endpoint with its deliveries and their attempts'),
        },
      )
      .post('/webhooks/:id/rotate-secret', async ({ params, request }) => await webhooks.rotateSecret(params.id, actorOf(request)), {
        params: IdParams,
        response: { 200: WebhookWithSecret, ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'] }, STORAGE) },
        ...operatorRoute('admin', 'A new signing secret for a webhook endpoint, answered this once; the old one keeps signing beside it for 24 h'),
      })
      .get('/webhooks/:id/deliveries', async ({ params, query }) => await webhooks.deliveries(params.id, query), {
        params: IdParams,
        query: DeliveriesQuery,
        response: { 200: DeliveriesPage, ...errors(OPERATOR, INVALID, { 404: ['not_found'] }, STORAGE) },
        ...operatorRoute('admin', 'A webhook endpoint\'s deliveries with their attempts, newest first, paged by `before`'),
      })
      .post('/webhook-deliveries/:id/resend', async ({ params, request }) => ({ delivery: await webhooks.resend(params.id, actorOf(request)) }), {
        params: IdParams,
        response: { 200: DeliveryResponse, ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'], 409: ['webhook_disabled'] }, STORAGE) },
        ...operatorRoute('admin', 'Send a delivery again, now (its attempts kept, the same webhook-id); refused while its endpoint is disabled'),
      })
}
