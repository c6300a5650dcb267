// The SDK's wire types are written out in packages/sdk (so that the package
// needs nothing of the server), and must stay the server's TypeBox models
// field for field. This is the runtime half of that check, for `bun test`
// alone: it reads the SDK's type declarations with the TypeScript parser and
// the models as the JSON Schema they are, and compares fields, optionality,
// nesting and literal values; the bodies it sends also against the OpenAPI
// document the server serves (what other clients are generated from).
// wire-types.check.ts is the exact, compile-time half that `tsc --noEmit` runs.
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'
import type { TSchema } from '@sinclair/typebox'
import * as AuthModel from '../../src/modules/auth/model'
import * as OidcModel from '../../src/modules/auth/oidc/model'
import * as GamesModel from '../../src/modules/games/model'
import * as MatchesModel from '../../src/modules/matches/model'
import * as SecurityModel from '../../src/modules/security/model'
import * as WalletModel from '../../src/modules/wallet/model'
import * as EventsModel from '../../src/modules/events/model'
import * as RatingsModel from '../../src/modules/ratings/model'
import { MyRatingResponse } from '../../src/modules/ratings/index'
import * as MatchmakingModel from '../../src/modules/matchmaking/model'
import * as EvidenceModel from '../../src/modules/evidence/model'
import * as Realtime from '../../src/modules/realtime/protocol'
import * as SharedModels from '../../src/shared/models'
import { EVENT_TOPICS } from '../../src/db/schema/events'
import { ROOT } from '../helpers/process'
import { declarations, differences, fromSchema, fromType, literals, type Json, type Shape } from '../helpers/wire-shapes'
import { SOCKET_CLOSE_CODES } from '@arena/sdk'
import { req } from '../helpers/app'
import { createArenaApp } from '../helpers/arena'

interface OpenApi {
  paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: { $ref?: string } }> } }>>
  components: { schemas: Record<string, Json> }
}

/** SDK type name → the server's model of it. */
const ANSWERS: Record<string, TSchema> = {
  User: AuthModel.User,
  TokenResponse: AuthModel.TokenResponse,
  LogoutResult: AuthModel.LogoutResponse,
  Accepted: AuthModel.AcceptedResponse,
  SessionsEnded: AuthModel.SessionsEndedResponse,
  Session: AuthModel.SessionView,
  RevokeReason: AuthModel.RevokeReason,
  AccountDeleted: AuthModel.DeleteAccountResponse,
  AccountExport: AuthModel.AccountExport,
  SignInResponse: AuthModel.SignInResponse,
  Identity: AuthModel.IdentityView,
  DeviceCode: AuthModel.DeviceCodeResponse,
  Match: GamesModel.Match,
  Tournament: GamesModel.Tournament,
  TournamentStatus: GamesModel.TournamentStatus,
  FormatName: GamesModel.FormatName,
  BracketKind: GamesModel.BracketKind,
  TournamentOptions: GamesModel.TournamentOptions,
  Standing: GamesModel.Standing,
  Registration: GamesModel.Registration,
  TournamentSummary: GamesModel.TournamentSummary,
  TournamentsPage: GamesModel.TournamentsPage,
  RegistrationView: GamesModel.RegistrationView,
  MyMatch: MatchesModel.MyMatch,
  GameSession: MatchesModel.GameSessionResponse,
  Decision: MatchesModel.DecisionResponse,
  Claim: MatchesModel.ClaimBody,
  IntegrityLevel: SecurityModel.IntegrityLevel,
  Withdrawal: WalletModel.Withdrawal,
  PinSessionResponse: SecurityModel.PinSessionResponse,
  PinVerifyResponse: WalletModel.PinVerifyResponse,
  Wallet: WalletModel.WalletResponse,
  TransactionKind: WalletModel.TransactionKind,
  WalletTransaction: WalletModel.WalletTransaction,
  TransactionsPage: WalletModel.TransactionsPage,
  WithdrawalsPage: WalletModel.WithdrawalsPage,
  RatingView: RatingsModel.RatingView,
  Season: RatingsModel.Season,
  LeaderboardEntry: RatingsModel.LeaderboardEntry,
  Leaderboard: RatingsModel.Leaderboard,
  RatingChange: RatingsModel.RatingChange,
  RatingHistoryPage: RatingsModel.RatingHistoryPage,
  MyRating: MyRatingResponse,
  QueueWindow: MatchmakingModel.QueueWindowSchema,
  DrawRule: MatchmakingModel.DrawRuleSchema,
  Queue: MatchmakingModel.Queue,
  TicketCloseReason: MatchmakingModel.QueueCloseReason,
  Ticket: MatchmakingModel.Ticket,
  MatchPlayer: MatchmakingModel.MatchPlayer,
  MatchView: MatchmakingModel.MatchView,
  Evidence: EvidenceModel.Evidence,
  Challenge: MatchmakingModel.Challenge,
  PlaneEvent: EventsModel.PlaneEvent,
  EventsPage: EventsModel.EventsPage,
  SocketTicketResponse: Realtime.SocketTicketResponse,
  ErrorEnvelope: SharedModels.ErrorResponse,
}

const REQUESTS: Record<string, TSchema> = {
  LoginBody: AuthModel.LoginBody,
  RefreshBody: AuthModel.RefreshBody,
  LogoutBody: AuthModel.LogoutBody,
  VerifyEmailBody: AuthModel.VerifyEmailBody,
  ChangePasswordBody: AuthModel.ChangePasswordBody,
  ForgotPasswordBody: AuthModel.ForgotPasswordBody,
  ResetPasswordBody: AuthModel.ResetPasswordBody,
  DeleteAccountBody: AuthModel.DeleteAccountBody,
  DeviceLoginBody: AuthModel.DeviceLoginBody,
  UpdateProfileBody: AuthModel.UpdateProfileBody,
  LinkIdentityBody: AuthModel.LinkIdentityBody,
  SteamLoginBody: AuthModel.SteamLoginBody,
  IdTokenLoginBody: OidcModel.IdTokenLoginBody,
  ExchangeBody: OidcModel.ExchangeBody,
  DeviceTokenBody: AuthModel.DeviceTokenBody,
  SessionBody: MatchesModel.SessionBody,
  CreateChallengeBody: MatchmakingModel.CreateChallengeBody,
  VerifyBody: WalletModel.VerifyBody,
  SetPinBody: SecurityModel.SetPinBody,
  SecurityEventBody: SecurityModel.SecurityEventBody,
  SecurityEventAccepted: SecurityModel.SecurityEventAccepted,
  // Sent on the event socket, not to a route.
  SubscribeMessage: Realtime.SubscribeMessage,
}

/**
 * The bodies the SDK sends, by the route it sends each to. The OpenAPI
 * document names each route's body by its model (the SDK's name for it, but
 * the claim, which the SDK types as a union).
 */
const SENT: Record<string, { route: string; component: string }> = {
  LoginBody: { route: 'POST /api/v1/user/login', component: 'LoginBody' },
  RefreshBody: { route: 'POST /api/v1/auth/validate', component: 'RefreshBody' },
  LogoutBody: { route: 'POST /api/v1/user/s/logout', component: 'LogoutBody' },
  VerifyEmailBody: { route: 'POST /api/v1/user/email/verify', component: 'VerifyEmailBody' },
  ChangePasswordBody: { route: 'POST /api/v1/user/password/change', component: 'ChangePasswordBody' },
  ForgotPasswordBody: { route: 'POST /api/v1/user/password/forgot', component: 'ForgotPasswordBody' },
  ResetPasswordBody: { route: 'POST /api/v1/user/password/reset', component: 'ResetPasswordBody' },
  DeleteAccountBody: { route: 'POST /api/v1/me/delete', component: 'DeleteAccountBody' },
  DeviceLoginBody: { route: 'POST /api/v1/user/login/device', component: 'DeviceLoginBody' },
  UpdateProfileBody: { route: 'PATCH /api/v1/me', component: 'UpdateProfileBody' },
  LinkIdentityBody: { route: 'POST /api/v1/me/identities/{provider}', component: 'LinkIdentityBody' },
  SteamLoginBody: { route: 'POST /api/v1/user/login/steam', component: 'SteamLoginBody' },
  IdTokenLoginBody: { route: 'POST /api/v1/user/login/oidc/{provider}', component: 'IdTokenLoginBody' },
  ExchangeBody: { route: 'POST /api/v1/user/login/exchange', component: 'ExchangeBody' },
  DeviceTokenBody: { route: 'POST /api/v1/auth/device-code/token', component: 'DeviceTokenBody' },
  SessionBody: { route: 'POST /api/v1/game-sdk/{gameId}/sessions', component: 'SessionBody' },
  CreateChallengeBody: { route: 'POST /api/v1/games/{gameId}/challenges', component: 'CreateChallengeBody' },
  Claim: { route: 'POST /api/v1/game-sdk/{gameId}/results', component: 'ClaimBody' },
  VerifyBody: { route: 'POST /api/v1/security/pin-session/{id}/verify', component: 'VerifyBody' },
  SetPinBody: { route: 'PUT /api/v1/security/pin', component: 'SetPinBody' },
  SecurityEventBody: { route: 'POST /api/v1/security/events', component: 'SecurityEventBody' },
}

const SDK_SRC = join(ROOT, 'packages', 'sdk', 'src')
const declared = declarations(join(SDK_SRC, 'types.ts'), join(SDK_SRC, 'requests.ts'))

/**
 * The SDK's types that are no answer and no body, so no model to compare:
 * the client's own settings and state.
 */
const CLIENT_ONLY = ['Environment', 'Tokens', 'FetchLike', 'SignInResult', 'GuestSignIn']
/** Compared with the server's event catalogue by event-types.test.ts and event-types.check.ts. */
const EVENT_CATALOGUE = ['EventCatalogue', 'EventType', 'EventData', 'KnownEvent']

/** The SDK's types a declaration names (a field's type, an array's element), and theirs, transitively. */
function reached(names: string[]): Set<string> {
  const seen = new Set<string>()
  const visit = (node: ts.Node): void => {
    if (ts.isTypeReferenceNode(node)) {
      const name = node.typeName.getText()
      const target = declared.get(name)
      if (target && !seen.has(name)) {
        seen.add(name)
        visit(target)
      }
    }
    ts.forEachChild(node, visit)
  }
  for (const name of names) {
    seen.add(name)
    const node = declared.get(name)
    if (node) visit(node)
  }
  return seen
}

/**
 * A union of frames by its `type` literal, each member's shape (the server's
 * frames are a TypeScript union in src/modules/realtime/protocol.ts; the
 * PlaneEvent they carry is its TypeBox model there, compared with the SDK's
 * above, so it is read as the SDK's here).
 */
function frames(file: string, name: string, declaredIn: Map<string, ts.Node>): Record<string, Shape> {
  const node = declaredIn.get(name)
  if (!node || !ts.isUnionTypeNode(node)) throw new Error(`${file}: ${name} is not a union`)
  const byType: Record<string, Shape> = {}
  for (const member of node.types) {
    const shape = fromType(member, declaredIn)
    const type = shape.kind === 'object' ? shape.fields.type?.shape : undefined
    if (type?.kind !== 'literals' || type.values.length !== 1) throw new Error(`${file}: a member of ${name} without one \`type\` literal`)
    byType[String(type.values[0])] = shape
  }
  return byType
}

function frameDrift(server: Record<string, Shape>, sdk: Record<string, Shape>): string[] {
  return [...new Set([...Object.keys(server), ...Object.keys(sdk)])].flatMap((type) => {
    if (!sdk[type]) return [`ServerFrame ${type}: on the server, not in the SDK`]
    if (!server[type]) return [`ServerFrame ${type}: in the SDK, not on the server`]
    return differences(server[type]!, sdk[type]!, `ServerFrame ${type}`)
  })
}

const PROTOCOL = join(ROOT, 'src', 'modules', 'realtime', 'protocol.ts')

function drift(models: Record<string, TSchema>): string[] {
  return Object.entries(models).flatMap(([name, model]) => {
    const sdk = declared.get(name)
    if (!sdk) return [`${name}: the SDK declares no such type`]
    return differences(fromSchema(model as unknown as Json), fromType(sdk, declared), name)
  })
}

describe('SDK wire types against the server models', () => {
  test('every answer the SDK reads has the fields, optionality and literals of its model', () => {
    expect(drift(ANSWERS)).toEqual([])
  })

  test('every body the SDK sends has the fields of the model the route validates it with', () => {
    expect(drift(REQUESTS)).toEqual([])
  })

  test('the event topics are the server’s', () => {
    expect(fromType(declared.get('EventTopic')!, declared)).toEqual(literals(EVENT_TOPICS.map((t) => ({ kind: 'literals', values: [t] }))))
  })

  test('the event socket: every frame the server sends, by type, and the close codes the SDK acts on', () => {
    const server = frames(PROTOCOL, 'ServerFrame', new Map([...declarations(PROTOCOL), ['PlaneEvent', declared.get('PlaneEvent')!]]))
    const sdk = frames('types.ts', 'ServerFrame', declared)
    expect(Object.keys(server).sort()).toEqual(['error', 'events', 'ping'])
    expect(frameDrift(server, sdk)).toEqual([])
    // The comparison sees a frame missing, and a field changed in one.
    const { ping, ...withoutPing } = sdk
    expect(frameDrift(server, withoutPing)).toEqual(['ServerFrame ping: on the server, not in the SDK'])
    const events = sdk.events as Extract<Shape, { kind: 'object' }>
    const { cursor, ...withoutCursor } = events.fields
    expect(cursor).toBeDefined()
    expect(frameDrift(server, { ...sdk, events: { kind: 'object', fields: withoutCursor } })).toEqual(['ServerFrame events.cursor: on the server, not in the SDK'])
    expect(ping).toBeDefined()
    const codes = Realtime.CLOSE_CODES as Record<string, number>
    expect(Object.entries(SOCKET_CLOSE_CODES).filter(([name, code]) => codes[name] !== code)).toEqual([])
  })

  test('every body the SDK sends is the body the OpenAPI document describes for its route', async () => {
    // The OpenID Connect routes are served (and described) only with a provider configured; nothing is fetched from it here.
    const ctx = await createArenaApp({ ARENA_OIDC_PROVIDERS: JSON.stringify([{ name: 'example', issuer: 'https://idp.example.invalid', clientId: 'arena' }]) })
    try {
      const doc = (await (await ctx.handle(req('/openapi/json'))).json()) as OpenApi
      const problems = Object.entries(SENT).flatMap(([name, { route, component }]) => {
        const [method, path] = route.split(' ') as [string, string]
        const ref = doc.paths[path]?.[method.toLowerCase()]?.requestBody?.content?.['application/json']?.schema?.$ref
        if (ref !== `#/components/schemas/${component}`) return [`${route}: its body is ${ref ?? 'not described'}, not ${component}`]
        return differences(fromSchema(doc.components.schemas[component]!, doc.components.schemas), fromType(declared.get(name)!, declared), name)
      })
      expect(problems).toEqual([])
      // Every body model the SDK's drift check compares is one of those.
      expect(Object.keys(REQUESTS).filter((name) => name.endsWith('Body')).every((name) => name in SENT)).toBe(true)
    } finally {
      await ctx.close()
    }
  })

  test('every type the SDK declares is compared with the server: a model, a part of one, the event catalogue, or the client’s own', () => {
    const compared = reached([...Object.keys(ANSWERS), ...Object.keys(REQUESTS), 'EventTopic', 'ServerFrame'])
    const unchecked = [...declared.keys()].filter((name) => !compared.has(name) && !CLIENT_ONLY.includes(name) && !EVENT_CATALOGUE.includes(name))
    expect(unchecked).toEqual([])
    // The lists above name only what the SDK declares.
    expect([...CLIENT_ONLY, ...EVENT_CATALOGUE].filter((name) => !declared.has(name))).toEqual([])
  })

  test('the compile-time half compares every type this runtime half compares', () => {
    const check = readFileSync(join(ROOT, 'test', 'sdk', 'wire-types.check.ts'), 'utf8')
    const named = new Set([...check.matchAll(/\b(?:Sdk|SdkRequests)\.(\w+)/g)].map((m) => m[1]!))
    expect([...Object.keys(ANSWERS), ...Object.keys(REQUESTS), 'EventTopic', 'ServerFrame'].filter((name) => !named.has(name))).toEqual([])
  })

  test('the comparison sees a difference: a field added, renamed, or made optional', () => {
    const model = fromSchema(WalletModel.Withdrawal as unknown as Json)
    if (model.kind !== 'object') throw new Error('Withdrawal is an object')
    const { signature, ...withoutSignature } = model.fields
    expect(differences({ ...model, fields: { ...model.fields, fee: { optional: true, shape: { kind: 'string' } } } }, model, 'W')).toEqual(['W.fee: on the server, not in the SDK'])
    expect(differences(model, { ...model, fields: { ...withoutSignature, sig: signature! } }, 'W')).toEqual(['W.signature: on the server, not in the SDK', 'W.sig: in the SDK, not on the server'])
    expect(differences(model, { ...model, fields: { ...model.fields, amount: { optional: true, shape: { kind: 'string' } } } }, 'W')).toEqual(['W.amount: required on the server, optional in the SDK'])
  })
})
