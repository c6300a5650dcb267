// Tournaments players sign up for: list them, register,
// leave before the start, check in within the check-in window. Refusals are
// ApiError with the server's code: 409 `registration_closed`,
// `tournament_full`, `already_registered`, `not_registered`,
// `check_in_closed`; 403 `account_banned`; 422 `insufficient_funds` (a
// register short of the tournament's `entryFee`).
import type { Auth } from './auth.js'
import { readJson } from './transport.js'
import type { RegistrationView, Tournament, TournamentStatus, TournamentsPage } from './types.js'

export interface ListTournamentsOptions {
  /** Only tournaments in this status: `registration` for the ones players may join. */
  status?: TournamentStatus
  /** The `cursor` of the previous page. */
  after?: string
  /** 1 to 100; default 50. */
  limit?: number
}

export class TournamentsClient {
  constructor(private readonly auth: Auth) {}

  /** One page of tournaments, oldest first; pass its `cursor` as `after` for the next (null at the end). */
  async list(options: ListTournamentsOptions = {}): Promise<TournamentsPage> {
    const query = { status: options.status, after: options.after, limit: options.limit === undefined ? undefined : String(options.limit) }
    return readJson<TournamentsPage>(await this.auth.send({ method: 'GET', path: '/api/v1/tournaments', query }))
  }

  /** The tournaments open for registration, every page. */
  async open(): Promise<TournamentsPage['tournaments']> {
    const all: TournamentsPage['tournaments'] = []
    let after: string | undefined
    do {
      const page = await this.list({ status: 'registration', limit: 100, ...(after ? { after } : {}) })
      all.push(...page.tournaments)
      after = page.cursor ?? undefined
    } while (after !== undefined)
    return all
  }

  /** A tournament with its participants and bracket. */
  async get(id: string): Promise<Tournament> {
    return (await readJson<{ tournament: Tournament }>(await this.auth.send({ method: 'GET', path: this.path(id) }))).tournament
  }

  /** Joins a tournament in registration. */
  async register(id: string): Promise<RegistrationView> {
    return (await readJson<{ registration: RegistrationView }>(await this.auth.send({ method: 'POST', path: `${this.path(id)}/registration` }))).registration
  }

  /** Leaves a tournament before it starts. */
  async leave(id: string): Promise<void> {
    await readJson<{ left: true }>(await this.auth.send({ method: 'DELETE', path: `${this.path(id)}/registration` }))
  }

  /** Checks in, within the tournament's check-in window; again answers the same. */
  async checkIn(id: string): Promise<RegistrationView> {
    return (await readJson<{ registration: RegistrationView }>(await this.auth.send({ method: 'POST', path: `${this.path(id)}/check-in` }))).registration
  }

  private path(id: string): string {
    return `/api/v1/tournaments/${encodeURIComponent(id)}`
  }
}
