// The game side (the /api/v1/game-sdk routes): a single-use match session per
// player, then one result claim that consumes it.
import type { Auth } from './auth.js'
import { readJson } from './transport.js'
import type { SessionBody } from './requests.js'
import type { Claim, Decision, GameSession } from './types.js'

export class GameClient {
  constructor(
    private readonly auth: Auth,
    readonly gameId: string,
    private readonly gameKey: string,
  ) {}

  /** Issues a single-use session for the signed-in player in `matchId`. */
  async openSession(matchId: string): Promise<GameSession> {
    const response = await this.auth.send({ method: 'POST', path: this.path('sessions'), headers: { 'x-game-key': this.gameKey }, body: { matchId } satisfies SessionBody })
    return readJson<GameSession>(response)
  }

  /**
   * Claims a result with the session's token, which this consumes whatever the
   * decision. Not retried on a network error: the claim may have counted, and
   * a claim with a new session then answers 409 `already_claimed`.
   */
  async submitResult(session: GameSession | string, claim: Claim): Promise<Decision> {
    const token = typeof session === 'string' ? session : session.token
    const response = await this.auth.send({
      method: 'POST',
      path: this.path('results'),
      headers: { 'x-game-key': this.gameKey, 'x-session-token': token },
      body: claim,
    })
    return readJson<Decision>(response)
  }

  private path(leaf: 'sessions' | 'results'): string {
    return `/api/v1/game-sdk/${encodeURIComponent(this.gameId)}/${leaf}`
  }
}
