// A stand-in for the Steam Web API, the one boundary of Steam sign-in arena
// does not own: a real HTTP server on loopback (port 0) answering
// ISteamUserAuth/AuthenticateUserTicket/v1 as Steam does. A test mints a
// ticket for the answer it wants (a player, a banned player, Steam's refusal,
// a 5xx, a hang) and sends that ticket to arena; the stub also checks arena's
// configuration as Steam would (a wrong key is Steam's 403, a wrong app id or
// identity refuses the ticket), and keeps every request it got.
import { randomBytes } from 'node:crypto'

/** What the stub answers for one ticket. */
export type SteamAnswer =
  | { kind: 'player'; steamid: string; ownersteamid?: string; vacbanned?: boolean; publisherbanned?: boolean }
  | { kind: 'refused'; errorcode: number; errordesc: string }
  | { kind: 'status'; status: number; body?: string }
  /** Never answers (until the stub closes): arena's timeout must end the wait. */
  | { kind: 'hang' }

/** A request the stub received: its path and query parameters (the key among them). */
export interface SteamRequest {
  path: string
  params: Record<string, string>
}

export interface SteamStubOptions {
  appId?: string
  key?: string
  identity?: string
}

export interface SteamStub {
  /** The base URL, for ARENA_STEAM_API_URL. */
  url: string
  appId: string
  key: string
  identity: string
  /** ARENA_STEAM_* pointing an app at this stub with its app id, key and identity. */
  env(extra?: Record<string, string>): Record<string, string>
  /** A fresh ticket (hex, as a game sends it) that the stub answers with `answer`. */
  ticket(answer: SteamAnswer): string
  /** A fresh ticket proving the player `steamid` (a random SteamID64 when left out). */
  player(steamid?: string, flags?: { vacbanned?: boolean; publisherbanned?: boolean; ownersteamid?: string }): { ticket: string; steamid: string }
  /** Every request received, oldest first. */
  readonly requests: SteamRequest[]
  close(): Promise<void>
}

export const STEAM_PATH = '/ISteamUserAuth/AuthenticateUserTicket/v1/'

/** A SteamID64 of an individual account in the public universe (76561197960265728 + account number). */
export function randomSteamId(): string {
  return (76561197960265728n + BigInt(1 + Math.floor(Math.random() * 2 ** 31))).toString()
}

/** A ticket-shaped hex string: GetAuthTicketForWebApi's are a few hundred bytes, in upper case from most engines. */
export function randomTicketHex(bytes = 234): string {
  return randomBytes(bytes).toString('hex').toUpperCase()
}

export function startSteamStub(options: SteamStubOptions = {}): SteamStub {
  const appId = options.appId ?? '480'
  const key = options.key ?? randomBytes(16).toString('hex').toUpperCase()
  const identity = options.identity ?? 'arena'
  const answers = new Map<string, SteamAnswer>()
  const requests: SteamRequest[] = []
  const hanging = new Set<() => void>()

  const json = (body: unknown, status = 200) => Response.json(body, { status })
  const refused = (errorcode: number, errordesc: string) => json({ response: { error: { errorcode, errordesc } } })

  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const url = new URL(request.url)
      const params = Object.fromEntries(url.searchParams)
      requests.push({ path: url.pathname, params })
      if (request.method !== 'GET' || url.pathname !== STEAM_PATH) return new Response('<html><body>Not Found</body></html>', { status: 404 })
      // Steam's own order: the key first (an HTML 403), then the parameters.
      if (params.key !== key) return new Response('<html><head><title>Forbidden</title></head><body><h1>Forbidden</h1>Access is denied. Retrying will not help. Please verify your <pre>key=</pre> parameter.</body></html>', { status: 403, headers: { 'content-type': 'text/html' } })
      if (!params.appid || !params.ticket) return refused(3, 'Invalid parameter')
      const answer = answers.get(params.ticket.toUpperCase())
      if (answer === undefined) return refused(101, 'Invalid ticket')
      // A ticket is made for one app and one identity: any other is refused.
      if (params.appid !== appId) return refused(101, 'Invalid ticket')
      if (params.identity !== identity) return refused(101, 'Invalid ticket')
      switch (answer.kind) {
        case 'player':
          return json({
            response: {
              params: {
                result: 'OK',
                steamid: answer.steamid,
                ownersteamid: answer.ownersteamid ?? answer.steamid,
                vacbanned: answer.vacbanned ?? false,
                publisherbanned: answer.publisherbanned ?? false,
              },
            },
          })
        case 'refused':
          return refused(answer.errorcode, answer.errordesc)
        case 'status':
          return new Response(answer.body ?? '<html><body>Internal Server Error</body></html>', { status: answer.status })
        case 'hang':
          await new Promise<void>((resolve) => hanging.add(resolve))
          return new Response('stub closed', { status: 503 })
      }
    },
  })

  const url = `http://127.0.0.1:${server.port}`
  return {
    url,
    appId,
    key,
    identity,
    requests,
    env: (extra = {}) => ({ ARENA_STEAM_APP_ID: appId, ARENA_STEAM_WEB_API_KEY: key, ARENA_STEAM_IDENTITY: identity, ARENA_STEAM_API_URL: url, ...extra }),
    ticket(answer) {
      const ticket = randomTicketHex()
      answers.set(ticket, answer)
      return ticket
    },
    player(steamid = randomSteamId(), flags = {}) {
      return { ticket: this.ticket({ kind: 'player', steamid, ...flags }), steamid }
    },
    async close() {
      for (const release of hanging) release()
      hanging.clear()
      await server.stop(true)
    },
  }
}
