// Operator routes of game servers (contract §17): register a game's server
// (its Ed25519 public key), list them, disable one, rotate its key. Added to
// the operator module's own instance (a function plugin), so its token check
// guards them. The services: src/modules/games/game-servers.ts.
import { Elysia, t } from 'elysia'
import { errors, INVALID, JSON_BODY, STORAGE } from '../../plugins/openapi'
import type { GameServers } from '../games/game-servers'
import { CreateGameServerBody, GameServerResponse, GameServersResponse, RotateGameServerBody } from '../games/model'
import { actorOf, OPERATOR, operatorRoute } from './operator'

const IdParams = t.Object({ id: t.String({ minLength: 1, maxLength: 64 }) })

export function adminGameServerRoutes(servers: GameServers) {
  return (app: Elysia<'/api/v1/admin'>) =>
    app
      .post(
        '/games/:id/servers',
        async ({ params, body, set, request }) => {
          set.status = 201
          return { server: await servers.create(params.id, body, actorOf(request)) }
        },
        {
          params: IdParams,
          body: CreateGameServerBody,
          response: { 201: GameServerResponse, ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'], 409: ['server_limit'] }, STORAGE) },
          ...operatorRoute('admin', 'Register a game server: its Ed25519 public key (raw 32 bytes, base64url); its signed results decide matches (at most 20 per game)'),
        },
      )
      .get('/games/:id/servers', async ({ params }) => ({ servers: await servers.list(params.id) }), {
        params: IdParams,
        response: { 200: GameServersResponse, ...errors(OPERATOR, INVALID, { 404: ['not_found'] }, STORAGE) },
        ...operatorRoute('viewer', 'A game\'s servers, oldest first, active and disabled'),
      })
      .post('/game-servers/:id/disable', async ({ params, request }) => ({ server: await servers.disable(params.id, actorOf(request)) }), {
        params: IdParams,
        response: { 200: GameServerResponse, ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'] }, STORAGE) },
        ...operatorRoute('admin', 'Disable a game server for good: its signatures are refused from the next request (idempotent)'),
      })
      .post('/game-servers/:id/rotate', async ({ params, body, request }) => ({ server: await servers.rotate(params.id, body.publicKey, actorOf(request)) }), {
        params: IdParams,
        body: RotateGameServerBody,
        response: { 200: GameServerResponse, ...errors(JSON_BODY, OPERATOR, { 404: ['not_found'], 409: ['conflict'] }, STORAGE) },
        ...operatorRoute('admin', 'Replace a game server\'s public key: signatures by the old key are refused from the next request; a disabled server is not rotated'),
      })
}
