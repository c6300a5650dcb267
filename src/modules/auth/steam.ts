// Steam sign-in (contract §13). Steam is not OAuth: the game asks the Steam
// client for a session ticket (Steamworks' GetAuthTicketForWebApi, with the
// identity string ARENA_STEAM_IDENTITY), sends it here as hex, and arena asks
// the Steam Web API who it proves (ISteamUserAuth/AuthenticateUserTicket, with
// the game's app id and a publisher key). The answer's `steamid` is the
// identity's subject; a VAC or publisher ban on it refuses the sign-in.
//
// The publisher key travels in the query string, because that is how Steam
// takes it: the URL of that call is never logged, never put in an error, and
// a failure is described by its outcome alone. The ticket is a credential too
// and is never logged either.
//
// This file knows Steam and nothing of accounts: `prove` answers who the
// ticket proves (or throws the error the sign-in answers), before anything is
// read or written; the sign-in and the link route take it from there.
import type { Config } from '../../config'
import { AppError } from '../../shared/errors'
import type { Logger } from '../../shared/logger'
import type { Secret } from '../../shared/secret'

/** What a Steam sign-in needs to know; undefined when the server has no Steam app configured. */
export interface SteamSettings {
  appId: string
  webApiKey: Secret
  identity: string
  apiUrl: string
  timeoutMs: number
}

/** The Steam settings of a configuration, or undefined when Steam sign-in is off (config.ts requires app id and key together). */
export function steamSettingsOf(config: Pick<Config, 'steamAppId' | 'steamWebApiKey' | 'steamIdentity' | 'steamApiUrl' | 'steamTimeoutMs'>): SteamSettings | undefined {
  if (config.steamAppId === undefined || config.steamWebApiKey === undefined) return undefined
  return { appId: config.steamAppId, webApiKey: config.steamWebApiKey, identity: config.steamIdentity, apiUrl: config.steamApiUrl, timeoutMs: config.steamTimeoutMs }
}

/**
 * How a ticket check ended, for /metrics (`arena_steam_ticket_checks_total`):
 * `ok` a player proved; `invalid_ticket` Steam refused the ticket (expired,
 * used, for another app or identity, forged); `banned` a VAC- or
 * publisher-banned player; `timeout` Steam did not answer in time;
 * `unavailable` Steam unreachable or failing (5xx, 429); `key_refused` Steam
 * refused arena's own key or app id (401/403: a configuration to fix);
 * `unexpected` an answer arena cannot read.
 */
export const STEAM_OUTCOMES = ['ok', 'invalid_ticket', 'banned', 'timeout', 'unavailable', 'key_refused', 'unexpected'] as const
export type SteamOutcome = (typeof STEAM_OUTCOMES)[number]

/** Who a Steam ticket proved the player is: a ProvenIdentity of provider `steam` (./identities.ts). */
export interface SteamIdentity {
  provider: 'steam'
  /** The SteamID64 of the player signed in to Steam (under Family Sharing, the borrower, not the owner). */
  subject: string
}

/** A SteamID64: a decimal 64-bit number. */
const STEAM_ID = /^[0-9]{1,20}$/

/** What AuthenticateUserTicket answers, as far as arena reads it. */
interface TicketAnswer {
  response?: {
    params?: { result?: unknown; steamid?: unknown; ownersteamid?: unknown; vacbanned?: unknown; publisherbanned?: unknown }
    error?: { errorcode?: unknown; errordesc?: unknown }
  }
}

export interface SteamDeps {
  settings: SteamSettings | undefined
  logger: Logger
}

export class SteamTickets {
  private readonly observers: ((outcome: SteamOutcome) => void)[] = []

  constructor(private readonly deps: SteamDeps) {}

  /** Whether this server takes Steam sign-ins (ARENA_STEAM_APP_ID and ARENA_STEAM_WEB_API_KEY set). */
  get enabled(): boolean {
    return this.deps.settings !== undefined
  }

  /** Calls `observe` with the outcome of every ticket check (for /metrics). */
  observe(observe: (outcome: SteamOutcome) => void): void {
    this.observers.push(observe)
  }

  /**
   * Who the ticket (hex, as the route's schema checks it) proves the player
   * is, asked of the Steam Web API. Throws what the sign-in answers: 404
   * not_found when Steam sign-in is not configured, 401 invalid_credentials
   * for a ticket Steam refuses, 403 platform_banned for a VAC- or
   * publisher-banned player, 503 service_unavailable when Steam cannot be
   * asked (a timeout, a failure, arena's own key refused). Reads and writes
   * nothing of arena's: call it before any unit of work.
   */
  async prove(input: { ticket: string }): Promise<SteamIdentity> {
    const settings = this.deps.settings
    if (settings === undefined) throw new AppError('not_found', 'Steam sign-in is not configured on this server')
    const { outcome, identity, error } = await this.check(settings, input.ticket)
    for (const observe of this.observers) observe(outcome)
    if (identity === undefined) throw error
    return identity
  }

  private async check(settings: SteamSettings, ticket: string): Promise<{ outcome: SteamOutcome; identity?: SteamIdentity; error?: AppError }> {
    const { logger } = this.deps
    const url = new URL('ISteamUserAuth/AuthenticateUserTicket/v1/', settings.apiUrl.endsWith('/') ? settings.apiUrl : `${settings.apiUrl}/`)
    url.search = new URLSearchParams({ key: settings.webApiKey.reveal(), appid: settings.appId, ticket, identity: settings.identity }).toString()

    let status: number
    let text: string
    try {
      // The timeout covers the body too. A redirect is not followed: nothing
      // but Steam's own answer is read, and the key goes nowhere else.
      const res = await fetch(url, { headers: { accept: 'application/json' }, redirect: 'manual', signal: AbortSignal.timeout(settings.timeoutMs) })
      status = res.status
      text = await res.text()
    } catch (error) {
      // Neither the error (Bun's connection errors carry the URL) nor the URL is logged: the outcome says enough.
      const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')
      const outcome: SteamOutcome = timedOut ? 'timeout' : 'unavailable'
      logger.warn('steam ticket check failed', { outcome, timeoutMs: settings.timeoutMs })
      return { outcome, error: unavailable(timedOut ? 'Steam did not answer in time; try again' : 'Steam cannot be reached; try again', 5) }
    }

    if (status === 401 || status === 403) {
      logger.error('steam refused arena\'s publisher key or app id: check ARENA_STEAM_WEB_API_KEY (a publisher key of the group that owns the app) and ARENA_STEAM_APP_ID', { outcome: 'key_refused', status })
      return { outcome: 'key_refused', error: unavailable('Steam sign-in is not available right now', 60) }
    }
    if (status >= 500 || status === 429) {
      logger.warn('steam ticket check failed', { outcome: 'unavailable', status })
      return { outcome: 'unavailable', error: unavailable('Steam is not available; try again', 5) }
    }

    const answer = parse(text)
    const refused = answer?.response?.error
    const params = answer?.response?.params
    if (refused !== undefined && refused !== null) {
      // Steam's own words on the ticket (invalid, expired, already used, for another app or identity): the player's problem, not the server's; its code goes to the log.
      logger.info('steam refused a ticket', { outcome: 'invalid_ticket', status, errorcode: typeof refused.errorcode === 'number' ? refused.errorcode : null })
      return { outcome: 'invalid_ticket', error: invalidTicket() }
    }
    if (status === 200 && params !== undefined && params !== null) {
      if (params.result !== 'OK') {
        logger.info('steam refused a ticket', { outcome: 'invalid_ticket', status, result: typeof params.result === 'string' ? params.result.slice(0, 64) : null })
        return { outcome: 'invalid_ticket', error: invalidTicket() }
      }
      if (typeof params.steamid === 'string' && STEAM_ID.test(params.steamid)) {
        // Either ban refuses, whoever owns the copy: under Family Sharing (ownersteamid ≠ steamid) the flags are the player's own.
        if (params.vacbanned === true || params.publisherbanned === true) {
          logger.info('steam sign-in of a banned player refused', { outcome: 'banned', vac: params.vacbanned === true, publisher: params.publisherbanned === true })
          return { outcome: 'banned', error: new AppError('platform_banned', 'This Steam account is banned from this game (VAC or publisher ban)') }
        }
        return { outcome: 'ok', identity: { provider: 'steam', subject: params.steamid } }
      }
    }
    logger.warn('steam answered something arena cannot read', { outcome: 'unexpected', status })
    return { outcome: 'unexpected', error: unavailable('Steam sign-in is not available right now', 60) }
  }
}

function parse(text: string): TicketAnswer | undefined {
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === 'object' && value !== null ? (value as TicketAnswer) : undefined
  } catch {
    return undefined
  }
}

/** Every refused ticket is the same 401, as an unknown password is: the reason is Steam's and goes to the log. */
function invalidTicket(): AppError {
  return new AppError('invalid_credentials', 'Steam did not accept this ticket')
}

function unavailable(message: string, retryAfterS: number): AppError {
  return new AppError('service_unavailable', message, { headers: { 'retry-after': String(retryAfterS) } })
}
