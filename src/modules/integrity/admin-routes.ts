// Operator routes of the payouts held for review (contract §17,
// docs/integrity.md): list and read them (viewer), release or void one
// (finance). Added to the operator module's own instance (a function
// plugin), so its token check guards them.
import { Elysia, t } from 'elysia'
import { errors, INVALID, JSON_BODY, STORAGE } from '../../plugins/openapi'
import { actorOf, OPERATOR, operatorRoute } from '../admin/operator'
import { PayoutDecisionBody, PayoutResponse, PayoutsPage, PayoutsQuery } from './model'
import type { PayoutService } from './service'

const HoldParams = t.Object({ id: t.String({ minLength: 1, maxLength: 64 }) })

export function adminPayoutRoutes(payouts: PayoutService) {
  return (app: Elysia<'/api/v1/admin'>) =>
    app
      .get('/payouts', ({ query }) => payouts.list(query), {
        query: PayoutsQuery,
        response: { 200: PayoutsPage, ...errors(OPERATOR, INVALID, STORAGE) },
        ...operatorRoute('viewer', 'Payouts held for review by integrity signals, by status (default held), oldest first, paged'),
      })
      .get('/payouts/:id', async ({ params }) => ({ payout: await payouts.get(params.id) }), {
        params: HoldParams,
        response: { 200: PayoutResponse, ...errors(OPERATOR, INVALID, { 404: ['not_found'] }, STORAGE) },
        ...operatorRoute('viewer', 'A held payout: its winner, amount, the signals that held it, and its decision'),
      })
      .post('/payouts/:id/release', async ({ params, body, request }) => ({ payout: await payouts.release(params.id, body.reason, actorOf(request)) }), {
        params: HoldParams,
        body: PayoutDecisionBody,
        response: { 200: PayoutResponse, ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'], 409: ['payout_not_held'] }, STORAGE) },
        ...operatorRoute('finance', 'Release a held payout: paid as decided (stake winnings less the rake, or the prize), once; audited with a reason'),
      })
      .post('/payouts/:id/void', async ({ params, body, request }) => ({ payout: await payouts.void(params.id, body.reason, actorOf(request)) }), {
        params: HoldParams,
        body: PayoutDecisionBody,
        response: { 200: PayoutResponse, ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'], 409: ['payout_not_held'] }, STORAGE) },
        ...operatorRoute('finance', 'Void a held payout: a staked match\'s stakes back to both players, a prize to the house; audited with a reason'),
      })
}
