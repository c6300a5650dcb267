// A first hour with arena, written only against the types a third-party
// generator makes of GET /openapi/json: openapi-typescript writes them to
// ./api.d.ts (openapi-client.test.ts generates it beside a copy of this file)
// and openapi-fetch sends the requests. No cast and no `any`: what compiles
// here under `tsc --strict` is what the document lets a studio write, and the
// test then runs it against a live server.
//
// An operator creates a game and a two-player tournament; two players
// register, log in and refresh; they play their match through the game SDK
// routes; the winner is credited, sets a PIN, mints a PIN session and
// withdraws; then reads its events.
import createClient from 'openapi-fetch'
import type { components, paths } from './api'

export interface JourneyInput {
  baseUrl: string
  adminToken: string
  /** A valid destination (base58 of an Ed25519 public key). */
  destinationAddress: string
  /** Makes the usernames, emails and references of one run unique. */
  tag: string
}

export interface JourneyResult {
  decision: string
  withdrawal: components['schemas']['Withdrawal']
  eventTypes: string[]
  refreshed: boolean
}

const PASSWORD = 'correct horse battery'
const PIN = '482916'

/** The answer's body, or an error naming the call and the server's envelope. */
function must<T>(call: string, result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data === undefined) throw new Error(`${call}: ${result.response.status} ${JSON.stringify(result.error)}`)
  return result.data
}

export async function journey({ baseUrl, adminToken, destinationAddress, tag }: JourneyInput): Promise<JourneyResult> {
  const anonymous = createClient<paths>({ baseUrl })
  const operator = { header: { 'x-admin-token': adminToken } }

  const { game, gameKey } = must(
    'create game',
    await anonymous.POST('/api/v1/admin/games', { params: operator, body: { name: `Duel ${tag}` } }),
  )

  async function player(name: string) {
    const username = `${name}_${tag}`
    const { user } = must(
      'register',
      await anonymous.POST('/api/v1/user/register', {
        body: { email: `${username}@example.com`, username, password: PASSWORD, country: 'DE', accept_terms: true },
      }),
    )
    const first = must('login', await anonymous.POST('/api/v1/user/login', { body: { identifier: username, password: PASSWORD } }))
    // A refresh: a new pair for the same session; the player goes on with it.
    const tokens = must(
      'refresh',
      await anonymous.POST('/api/v1/auth/validate', {
        headers: { authorization: `Bearer ${first.accessToken}` },
        body: { refreshToken: first.refreshToken },
      }),
    )
    const client = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${tokens.accessToken}` } })
    return { user, client, refreshed: tokens.refreshToken !== first.refreshToken }
  }
  const alice = await player('alice')
  const bob = await player('bob')

  const { tournament } = must(
    'create tournament',
    await anonymous.POST('/api/v1/admin/tournaments', {
      params: operator,
      body: { gameId: game.id, name: `Cup ${tag}`, format: 'single_elimination', participants: [alice.user.id, bob.user.id] },
    }),
  )
  must('start', await anonymous.POST('/api/v1/admin/tournaments/{id}/start', { params: { ...operator, path: { id: tournament.id } } }))

  const { matches } = must('my matches', await alice.client.GET('/api/v1/me/matches'))
  const match = matches.find((m) => m.tournamentId === tournament.id)
  if (!match) throw new Error('alice has no match in the tournament')

  // Both players claim that alice won, each with a game session of their own.
  let decision = ''
  for (const seat of [alice, bob]) {
    const session = must(
      'game session',
      await seat.client.POST('/api/v1/game-sdk/{gameId}/sessions', {
        params: { path: { gameId: game.id }, header: { 'x-game-key': gameKey } },
        body: { matchId: match.matchId },
      }),
    )
    const claimed = must(
      'claim',
      await seat.client.POST('/api/v1/game-sdk/{gameId}/results', {
        params: { path: { gameId: game.id }, header: { 'x-game-key': gameKey, 'x-session-token': session.token } },
        body: { outcome: 'WIN', winnerParticipantId: match.participantId },
      }),
    )
    decision = claimed.decision
  }

  must(
    'credit',
    await anonymous.POST('/api/v1/admin/wallets/{userId}/credit', {
      params: { ...operator, path: { userId: alice.user.id } },
      body: { amount: '100', reference: `prize-${tag}` },
    }),
  )
  must('set pin', await alice.client.PUT('/api/v1/security/pin', { body: { pin: PIN, password: PASSWORD } }))
  const pinSession = must('pin session', await alice.client.POST('/api/v1/security/pin-session', { body: {} }))
  const verified = must(
    'verify',
    await alice.client.POST('/api/v1/security/pin-session/{id}/verify', {
      params: { path: { id: pinSession.sessionId }, header: { 'x-secure-session': pinSession.sessionToken } },
      body: { pin: PIN, amount: '25', destinationAddress, idempotencyKey: `withdraw-${tag}` },
    }),
  )
  if (!verified.valid || !verified.withdrawal) throw new Error(`verify: ${JSON.stringify(verified)}`)

  const { events } = must('events', await alice.client.GET('/api/v1/events', { params: { query: { wait: 0 } } }))

  return { decision, withdrawal: verified.withdrawal, eventTypes: events.map((e) => e.type), refreshed: alice.refreshed && bob.refreshed }
}
