// PIN and one-time PIN sessions over HTTP (public-api.md "PIN session",
// "Verify request", contract §3).
import { Elysia, t } from 'elysia'
import { authGuard } from '../../plugins/auth'
import { BEARER_SECURITY } from '../../plugins/openapi'
import { ErrorResponse } from '../../shared/models'
import type { AuthService } from '../auth/service'
import type { WithdrawalService } from '../wallet/withdrawals'
import type { PinService } from './pin-service'

const Withdrawal = t.Object(
  {
    id: t.String(),
    status: t.Union([t.Literal('pending_signature'), t.Literal('signed'), t.Literal('failed')]),
    amount: t.String(),
    asset: t.String(),
    destinationAddress: t.String(),
    idempotencyKey: t.String(),
    signature: t.Optional(t.String({ description: 'base58 Ed25519 signature over the canonical withdrawal message' })),
    createdAt: t.String(),
  },
  { $id: 'Withdrawal' },
)

const PinVerifyResponse = t.Object(
  {
    valid: t.Boolean(),
    locked: t.Boolean(),
    attempt: t.Integer({ description: 'consecutive failures; 0 after a valid PIN' }),
    withdrawal: t.Optional(Withdrawal),
  },
  { $id: 'PinVerifyResponse' },
)

export function securityModule(auth: AuthService, pins: PinService, withdrawals: WithdrawalService) {
  return new Elysia({ name: 'arena/security', prefix: '/api/v1/security' })
    .use(authGuard(auth))
    .put(
      '/pin',
      async ({ body, auth: { user } }) => {
        await pins.setPin(user.id, body.pin, body.password)
        return { ok: true as const }
      },
      {
        auth: true,
        body: t.Object({
          pin: t.String({ pattern: '^[0-9]{4,8}$', description: '4 to 8 digits, not a common PIN' }),
          password: t.String({ minLength: 1, maxLength: 1024, description: 'the account password, to re-authenticate' }),
        }),
        response: { 200: t.Object({ ok: t.Literal(true) }), 401: ErrorResponse, 403: ErrorResponse, 422: ErrorResponse },
        detail: { tags: ['security'], summary: 'Set or change the PIN', security: BEARER_SECURITY },
      },
    )
    .post(
      '/pin-session',
      ({ auth: { user }, set }) => {
        set.status = 201
        return pins.mint(user.id)
      },
      {
        auth: true,
        transform(context) {
          if (context.body === null || context.body === undefined) context.body = {}
        },
        body: t.Object({}),
        response: {
          201: t.Object({ sessionId: t.String(), sessionToken: t.String(), expiresAt: t.String(), maxAttempts: t.Integer() }),
          401: ErrorResponse,
          409: ErrorResponse,
          429: ErrorResponse,
        },
        detail: { tags: ['security'], summary: 'Mint a one-time PIN session', security: BEARER_SECURITY },
      },
    )
    .post(
      '/pin-session/:id/verify',
      ({ params, body, request, auth: { user } }) =>
        withdrawals.verify({
          userId: user.id,
          sessionId: params.id,
          sessionToken: request.headers.get('x-secure-session'),
          ...body,
        }),
      {
        auth: true,
        params: t.Object({ id: t.String({ minLength: 1, maxLength: 64 }) }),
        headers: t.Object({ 'x-secure-session': t.Optional(t.String({ description: 'sessionToken from mint' })) }),
        body: t.Object({
          pin: t.String({ minLength: 1, maxLength: 16 }),
          amount: t.String({ maxLength: 64, description: 'decimal string' }),
          destinationAddress: t.String({ minLength: 1, maxLength: 64 }),
          idempotencyKey: t.String({ minLength: 1, maxLength: 128 }),
        }),
        response: { 200: PinVerifyResponse, 401: ErrorResponse, 409: ErrorResponse, 410: ErrorResponse, 422: ErrorResponse, 429: ErrorResponse },
        detail: { tags: ['security'], summary: 'Verify the PIN once and authorize one withdrawal (never retry)', security: BEARER_SECURITY, operationId: 'verifyPin' },
      },
    )
}
