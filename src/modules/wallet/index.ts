// The player's wallet (contract §3).
import { Elysia } from 'elysia'
import { WalletResponse } from './model'
import { authGuard } from '../../plugins/auth'
import { BEARER, BEARER_SECURITY, errors, STORAGE } from '../../plugins/openapi'
import type { AuthService } from '../auth/service'
import type { WalletService } from './service'

export function walletModule(auth: AuthService, wallet: WalletService) {
  return new Elysia({ name: 'arena/wallet', prefix: '/api/v1' })
    .use(authGuard(auth))
    .get('/wallet', ({ auth: { user } }) => wallet.wallet(user.id), {
      auth: true,
      // 503 also while custody cannot create the wallet (Retry-After: 5).
      response: { 200: WalletResponse, ...errors(BEARER, STORAGE) },
      detail: { tags: ['wallet'], summary: 'Balance and custody address (created on first use)', security: BEARER_SECURITY },
    })
}
