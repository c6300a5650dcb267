// The operator API's own accounts (contract §11): signing in for an API
// session, signing out, and managing operators (admin). Thin over
// OperatorService, OperatorSessions and OperatorTotp, which the console and
// `arena operator …` call too.
//
// Signing in is the one route under /api/v1/admin that takes no credential:
// it is how a credential is obtained. It is mounted as a plugin of its own
// BEFORE the module's credential check (a hook applies to the routes added
// after it), so the check has no list of exceptions to keep right.
import { Elysia, t } from 'elysia'
import { errors, JSON_BODY, STORAGE } from '../../plugins/openapi'
import { AppError } from '../../shared/errors'
import { Operator, OperatorRoleModel as Role } from '../operators/model'
import type { OperatorTotp } from '../operators/second-factor'
import type { OperatorService } from '../operators/service'
import type { OperatorSessions } from '../operators/sessions'
import { DEVICE_HEADER } from '../auth/known-places'
import { actorOf, OPERATOR, operatorRoute } from './operator'

const OperatorIdParams = t.Object({ id: t.String({ minLength: 1, maxLength: 64 }) })

const OperatorSignInBody = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 64 }),
    password: t.String({ minLength: 1, maxLength: 1024 }),
    newPassword: t.Optional(t.String({ minLength: 8, maxLength: 128, description: 'required when the password is one-time: it replaces it' })),
    totp: t.Optional(t.String({ maxLength: 16, description: 'the authenticator code, once TOTP is enabled' })),
  },
  { $id: 'OperatorSignInBody' },
)
const CreateOperatorBody = t.Object(
  { name: t.String({ minLength: 1, maxLength: 64, description: '2 to 32 letters, digits, dots, dashes or underscores; unique in any case' }), role: Role },
  { $id: 'CreateOperatorBody' },
)
const OperatorRoleBody = t.Object({ role: Role }, { $id: 'OperatorRoleBody' })
const OperatorWithPassword = t.Object({ operator: Operator, password: t.String({ description: 'one-time: shown once, replaced at the first sign-in' }) })

/** The path of the sign-in route, under the module's prefix. */
export const SIGN_IN_PATH = '/sessions'

/** The client's address as the throttles see it (from src/modules/auth). */
export type AddressOf = (request: Request, server: { requestIP(request: Request): { address: string } | null } | null) => string

/** POST /admin/sessions: a name, a password (and TOTP code) for an API session. Mounted before the credential check. */
export function adminSignInRoute(operators: OperatorService, sessions: OperatorSessions, addressOf: AddressOf) {
  return new Elysia({ name: 'arena/admin-sign-in', prefix: '/api/v1/admin' }).post(
    SIGN_IN_PATH,
    async ({ body, request, server, set }) => {
      const signedIn = await sessions.signIn({
        name: body.name,
        password: body.password,
        newPassword: body.newPassword,
        totp: body.totp,
        kind: 'api',
        userAgent: request.headers.get('user-agent'),
        ip: addressOf(request, server),
        deviceToken: request.headers.get(DEVICE_HEADER),
      })
      set.status = 201
      // As a player's login: a device token to send back on the next sign-in (../auth/known-places.ts).
      set.headers[DEVICE_HEADER] = signedIn.deviceToken
      return { token: signedIn.token, operator: await operators.byId(signedIn.session.operatorId), expiresAt: signedIn.session.expiresAt.toISOString() }
    },
    {
      body: OperatorSignInBody,
      response: {
        201: t.Object({
          token: t.String({ description: 'send as `Authorization: Bearer <token>` to /api/v1/admin' }),
          operator: Operator,
          expiresAt: t.String({ description: 'ARENA_OPERATOR_SESSION_TTL_S after sign-in' }),
        }),
        ...errors(JSON_BODY, { 401: ['invalid_credentials', 'totp_required', 'invalid_totp'], 403: ['password_change_required'], 429: ['rate_limited'] }, STORAGE),
      },
      detail: {
        tags: ['admin'],
        summary: 'Sign in as a named operator: an API session for `Authorization: Bearer` (no credential needed; throttled like player logins)',
        description: 'Answers an `x-arena-device` header to send back on later sign-ins: from a device or address that signed in before, failures on the name elsewhere do not block it.',
      },
    },
  )
}

/**
 * Sign-out and operator management, added to the operator module's own
 * instance (a function plugin), behind its credential check.
 */
export function adminOperatorRoutes(operators: OperatorService, sessions: OperatorSessions, totp: OperatorTotp) {
  return (app: Elysia<'/api/v1/admin'>) =>
    app
      .post(
        '/sessions/current/revoke',
        async ({ request }) => {
          const token = /^Bearer +(\S+)$/i.exec(request.headers.get('authorization') ?? '')?.[1]
          // The admin token is no session: nothing to end (rotate ARENA_ADMIN_TOKEN instead).
          if (actorOf(request).operator.id === null || token === undefined) throw new AppError('conflict', 'Only an operator session can be signed out; the admin token is not one')
          await sessions.signOut(token)
          return { revoked: true as const }
        },
        {
          response: { 200: t.Object({ revoked: t.Literal(true) }), ...errors(JSON_BODY, OPERATOR, { 409: ['conflict'] }, STORAGE) },
          ...operatorRoute('viewer', 'Sign out: end the operator session sent as the bearer'),
        },
      )
      .get('/operators', async () => ({ operators: await operators.list() }), {
        response: { 200: t.Object({ operators: t.Array(Operator) }), ...errors(OPERATOR, STORAGE) },
        ...operatorRoute('admin', 'Every operator, in creation order'),
      })
      .post(
        '/operators',
        async ({ body, request, set }) => {
          const created = await operators.create({ name: body.name, role: body.role }, actorOf(request))
          set.status = 201
          return created
        },
        {
          body: CreateOperatorBody,
          response: { 201: OperatorWithPassword, ...errors(JSON_BODY, OPERATOR, { 409: ['conflict'] }, STORAGE) },
          ...operatorRoute('admin', 'Create an operator; its one-time password is answered once'),
        },
      )
      .post('/operators/:id/disable', async ({ params, request }) => ({ operator: await operators.disable(params.id, actorOf(request)) }), {
        params: OperatorIdParams,
        response: { 200: t.Object({ operator: Operator }), ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'], 409: ['conflict', 'last_admin'] }, STORAGE) },
        ...operatorRoute('admin', 'Disable an operator: it cannot sign in, its sessions end at once (never the last enabled admin)'),
      })
      .post('/operators/:id/enable', async ({ params, request }) => ({ operator: await operators.enable(params.id, actorOf(request)) }), {
        params: OperatorIdParams,
        response: { 200: t.Object({ operator: Operator }), ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'], 409: ['conflict'] }, STORAGE) },
        ...operatorRoute('admin', 'Enable a disabled operator: it may sign in again'),
      })
      .post('/operators/:id/role', async ({ params, body, request }) => ({ operator: await operators.setRole(params.id, body.role, actorOf(request)) }), {
        params: OperatorIdParams,
        body: OperatorRoleBody,
        response: { 200: t.Object({ operator: Operator }), ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'], 409: ['conflict', 'last_admin'] }, STORAGE) },
        ...operatorRoute('admin', 'Give an operator another role, in force at its next request (never the last enabled admin\'s)'),
      })
      .post('/operators/:id/totp/disable', async ({ params, request }) => ({ operator: await totp.disableTotp(params.id, actorOf(request)) }), {
        params: OperatorIdParams,
        response: { 200: t.Object({ operator: Operator }), ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'], 409: ['conflict'] }, STORAGE) },
        ...operatorRoute('admin', 'Turn an operator\'s TOTP off (a lost authenticator): it signs in with its password alone until it enrols again'),
      })
      .post('/operators/:id/reset-password', async ({ params, request }) => await operators.resetPassword(params.id, actorOf(request)), {
        params: OperatorIdParams,
        response: { 200: OperatorWithPassword, ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'] }, STORAGE) },
        ...operatorRoute('admin', 'A new one-time password for an operator, answered once; its sessions end'),
      })
}

