// The player's wallet (contract §3) and its history (contract §10), and the
// PIN verify that makes a withdrawal.
import { Elysia, t } from 'elysia'
import { PinVerifyResponse, TransactionsPage, TransactionsQuery, VerifyBody, WalletResponse, WithdrawalsPage, WithdrawalsQuery } from './model'
import { authGuard } from '../../plugins/auth'
import { BEARER, BEARER_SECURITY, errors, INVALID, JSON_BODY, routeHeaders, STORAGE } from '../../plugins/openapi'
import type { AuthService } from '../auth/service'
import type { WalletService } from './service'
import type { WithdrawalService } from './withdrawals'

export function walletModule(auth: AuthService, wallet: WalletService, withdrawals: WithdrawalService) {
  return new Elysia({ name: 'arena/wallet', prefix: '/api/v1' })
    .use(authGuard(auth))
    .get('/wallet', ({ auth: { user } }) => wallet.wallet(user.id), {
      auth: true,
      // 503 also while custody cannot create the wallet (Retry-After: 5).
      response: { 200: WalletResponse, ...errors(BEARER, STORAGE) },
      detail: { tags: ['wallet'], summary: 'Balance and custody address (created on first use)', security: BEARER_SECURITY },
    })
    .get('/wallet/transactions', ({ auth: { user }, query }) => wallet.transactions(user.id, query), {
      auth: true,
      query: TransactionsQuery,
      response: { 200: TransactionsPage, ...errors(BEARER, INVALID, STORAGE) },
      detail: { tags: ['wallet'], summary: 'Every movement of the wallet, oldest first, with the balance after each', security: BEARER_SECURITY },
    })
    .get('/wallet/withdrawals', ({ auth: { user }, query }) => withdrawals.page(user.id, query), {
      auth: true,
      query: WithdrawalsQuery,
      response: { 200: WithdrawalsPage, ...errors(BEARER, INVALID, STORAGE) },
      detail: { tags: ['wallet'], summary: 'The caller\'s withdrawals, oldest first', security: BEARER_SECURITY },
    })
}

// Required, but a missing one is the service's 401, not a validation 422: see routeHeaders.
const VerifyHeaders = routeHeaders('x-secure-session')

/**
 * POST /security/pin-session/{id}/verify: the PIN session minted under
 * /security spent on one withdrawal. The withdrawal's route, so the
 * wallet's; its own instance under the security prefix, mounted after the
 * security module's, so that the API's paths (and the OpenAPI document)
 * stay where they were.
 */
export function pinVerifyModule(auth: AuthService, withdrawals: WithdrawalService) {
  return new Elysia({ name: 'arena/wallet/pin-verify', prefix: '/api/v1/security' })
    .use(authGuard(auth))
    .post(
      '/pin-session/:id/verify',
      ({ params, body, request, auth: { user } }) =>
        withdrawals.verify({
          userId: user.id,
          emailVerified: user.emailVerified,
          sessionId: params.id,
          sessionToken: request.headers.get('x-secure-session'),
          ...body,
        }),
      {
        auth: true,
        params: t.Object({ id: t.String({ minLength: 1, maxLength: 64 }) }),
        headers: VerifyHeaders.schema,
        body: VerifyBody,
        // 503 also when the hash gate is full or custody cannot create the wallet.
        response: {
          200: PinVerifyResponse,
          ...errors(
            JSON_BODY,
            BEARER,
            { 403: ['email_not_verified', 'account_banned'], 409: ['idempotency_key_reused'], 410: ['session_expired'], 422: ['invalid_destination', 'insufficient_funds', 'withdrawal_limit'], 429: ['pin_locked'] },
            STORAGE,
          ),
        },
        detail: {
          tags: ['security'],
          summary: 'Verify the PIN once and authorize one withdrawal (never retry)',
          security: BEARER_SECURITY,
          operationId: 'verifyPin',
          parameters: VerifyHeaders.parameters,
        },
      },
    )
}
