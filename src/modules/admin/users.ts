// The operator's user routes (contract §8): search users, read one in full,
// ban and unban, delete, lift a PIN lock, unlink an identity (§13). Thin over the same services the player's own routes
// use (src/modules/auth/bans.ts, user-directory.ts, account-deletion.ts, identities.ts).
import { Elysia, t } from 'elysia'
import { errors, INVALID, JSON_BODY, STORAGE } from '../../plugins/openapi'
import { AppError } from '../../shared/errors'
import { isId } from '../../shared/ids'
import type { AccountDeletion } from '../auth/account-deletion'
import type { BanService } from '../auth/bans'
import type { Identities } from '../auth/identities'
import { DeleteAccountResponse, IdentitiesResponse } from '../auth/model'
import { USERS_PAGE_DEFAULT, type UserDirectory } from '../auth/user-directory'
import type { PinService } from '../security/pin-service'
import { AdminUserDetail, AdminUserResponse, BanBody, DeleteUserBody, PinStateModel, PinUnlockBody, UnlinkIdentityBody, UserIdentityParams, UserRefParams, UsersPage, UsersQuery } from './model'
import { actorOf, OPERATOR, operatorRoute } from './operator'

export interface AdminUserServices {
  bans: BanService
  users: UserDirectory
  deletion: AccountDeletion
  pins: PinService
  identities: Identities
}

function invalid(path: string, message: string): AppError {
  return new AppError('validation_failed', 'Request failed validation', { details: [{ path, message }] })
}

/** `until` as a time; the schema has checked its form already, this catches what the form allows and a date cannot be (Feb 30). */
function untilOf(until: string | undefined): Date | null {
  if (until === undefined) return null
  const date = new Date(until)
  if (Number.isNaN(date.getTime())) throw invalid('body/until', 'Expected an ISO-8601 date-time')
  return date
}

/**
 * The routes, added to the operator module's own instance (a function
 * plugin, not a separate Elysia): its token check, which runs before
 * anything else, guards them exactly as it guards the rest.
 */
export function adminUserRoutes({ bans, users, deletion, pins, identities }: AdminUserServices) {
  return (app: Elysia<'/api/v1/admin'>) =>
    app
      .get(
        '/users',
        ({ query }) => {
          if (query.after !== undefined && !isId('user', query.after)) throw invalid('query/after', 'Not a cursor this server issued')
          if (query.limit !== undefined && !Number.isInteger(query.limit)) throw invalid('query/limit', 'Expected a whole number')
          const text = query.query?.trim() ?? ''
          return users.search({ query: text === '' ? null : text, after: query.after ?? null, limit: query.limit ?? USERS_PAGE_DEFAULT })
        },
        {
          query: UsersQuery,
          response: { 200: UsersPage, ...errors(OPERATOR, INVALID, STORAGE) },
          ...operatorRoute('viewer', 'Users in creation order, deleted ones included; search by id, or part of a username or email'),
        },
      )
      .get('/users/:id', async ({ params }) => users.detail(await users.idOf(params.id)), {
        params: UserRefParams,
        response: { 200: AdminUserDetail, ...errors(OPERATOR, INVALID, { 404: ['not_found'] }, STORAGE) },
        ...operatorRoute('viewer', 'One user: the account, every session, the wallet, the ban, the identities'),
      })
      .post('/users/:id/ban', async ({ params, body, request }) => ({ user: users.view(await bans.ban(await users.idOf(params.id), { reason: body.reason, until: untilOf(body.until) }, actorOf(request))) }), {
        params: UserRefParams,
        body: BanBody,
        response: { 200: AdminUserResponse, ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'], 409: ['conflict'] }, STORAGE) },
        ...operatorRoute('moderator', 'Ban a user until a time or until lifted: every session ends at once; a ban in force is replaced'),
      })
      .post('/users/:id/unban', async ({ params, request }) => ({ user: users.view(await bans.unban(await users.idOf(params.id), actorOf(request))) }), {
        params: UserRefParams,
        response: { 200: AdminUserResponse, ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'], 409: ['conflict'] }, STORAGE) },
        ...operatorRoute('moderator', 'Lift the ban; the user may log in again'),
      })
      .post('/users/:id/delete', async ({ params, body, request }) => ({ deleted: true as const, ...(await deletion.deleteByOperator(await users.idOf(params.id), body.reason, actorOf(request))) }), {
        params: UserRefParams,
        body: DeleteUserBody,
        response: { 200: DeleteAccountResponse, ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'], 409: ['conflict', 'balance_not_empty'] }, STORAGE) },
        ...operatorRoute('admin', 'Delete an account: personal data erased, the ledger kept (needs an empty wallet)'),
      })
      .get('/users/:id/pin', async ({ params }) => ({ pin: await pins.state(await users.idOf(params.id)) }), {
        params: UserRefParams,
        response: { 200: t.Object({ pin: PinStateModel }), ...errors(OPERATOR, INVALID, { 404: ['not_found'] }, STORAGE) },
        ...operatorRoute('viewer', 'The user\'s PIN: set or not, the lock in force, the failures and locks counted'),
      })
      .post('/users/:id/pin/unlock', async ({ params, body, request }) => pins.unlock(await users.idOf(params.id), body.reason, actorOf(request)), {
        params: UserRefParams,
        body: PinUnlockBody,
        response: { 200: t.Object({ pin: PinStateModel, lifted: t.Boolean({ description: 'false: there was nothing to lift, and nothing was written' }) }), ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'], 409: ['conflict'] }, STORAGE) },
        ...operatorRoute('finance', 'Lift the user\'s PIN lock and forget its failures and doubling (audited, with a reason)'),
      })
      // A moderator's, as a ban is: it takes a way to sign in away from the player (contract §13).
      .post(
        '/users/:id/identities/:provider/unlink',
        async ({ params, body, request }) => ({ identities: await identities.unlink(await users.idOf(params.id), params.provider, { actor: actorOf(request), reason: body.reason }) }),
        {
          params: UserIdentityParams,
          body: UnlinkIdentityBody,
          response: { 200: IdentitiesResponse, ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'], 409: ['last_identity'] }, STORAGE) },
          ...operatorRoute('moderator', 'Unlink one of the user\'s identities (audited, with a reason); 409 last_identity when it is the only way left to sign in'),
        },
      )
}
