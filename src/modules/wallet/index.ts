// The player's wallet (contract §3) and its history (contract §10).
import { Elysia } from 'elysia'
import { TransactionsPage, TransactionsQuery, WalletResponse, WithdrawalsPage, WithdrawalsQuery } from './model'
import { authGuard } from '../../plugins/auth'
import { BEARER, BEARER_SECURITY, errors, INVALID, STORAGE } from '../../plugins/openapi'
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
