// A game's servers on its console page (contract §17): who reports the game's
// results (its `results` setting), the servers whose Ed25519 keys sign them,
// and an admin's forms: set the results, add a server, rotate its key,
// disable it (after a confirmation: it is for good). The same GameServers and
// GamesService methods the admin API calls, audited as `console`.
import { t } from 'elysia'
import type { Services } from '../../services'
import { AppError } from '../../shared/errors'
import type { GameServer } from '../../modules/games/model'
import { Csrf } from '../layout'
import { redirect } from '../http'
import { attempt, Time } from '../page'
import { ConfirmButton, confirmPage } from '../confirm'
import { consoleRoute, consoleSession } from '../session'
import { IdParams, type ConsoleApp } from './ops-kit'

const SECTION = '/console/games'
const gamePath = (id: string) => `${SECTION}/${encodeURIComponent(id)}`
const serverPath = (gameId: string, serverId: string) => `${gamePath(gameId)}/servers/${encodeURIComponent(serverId)}`
const ServerParams = t.Object({ id: t.String({ minLength: 1, maxLength: 64 }), serverId: t.String({ minLength: 1, maxLength: 64 }) })
const CsrfField = { _csrf: t.String({ maxLength: 128 }) }
const PublicKey = t.String({ minLength: 1, maxLength: 100 })

const RESULT_MODES = [
  ['claims', "its players' claims only (the default)"],
  ['server', 'its game servers only: player claims are refused'],
  ['either', 'both: whichever decides first'],
] as const

/** The game's results setting and its servers; `csrf` null: the operator is no admin (read only). */
export function GameServersSection({ gameId, results, servers, csrf }: { gameId: string; results: string; servers: GameServer[]; csrf: string | null }) {
  return (
    <section aria-labelledby="game-servers">
      <h2 id="game-servers">Results and game servers</h2>
      <dl class="facts">
        <dt>Results</dt>
        <dd>{`${results}: ${RESULT_MODES.find(([mode]) => mode === results)?.[1] ?? ''}`}</dd>
      </dl>
      {csrf !== null && (
        <form method="post" action={`${gamePath(gameId)}/results`} class="row" aria-label="Set who reports results">
          <Csrf token={csrf} />
          <label>
            Who reports results
            <select name="results">
              {RESULT_MODES.map(([mode, what]) => (
                <option value={mode} selected={mode === results}>{`${mode}: ${what}`}</option>
              ))}
            </select>
          </label>
          <button type="submit">Set</button>
        </form>
      )}
      {servers.length === 0 ? (
        <p class="muted">No game server: results come from the players' claims.</p>
      ) : (
        <table aria-label="Game servers">
          <thead>
            <tr>
              <th>Name</th>
              <th>Status</th>
              <th>Public key (Ed25519)</th>
              <th>Added</th>
              <th>Key rotated</th>
              {csrf !== null && <th>Actions</th>}
            </tr>
          </thead>
          <tbody>
            {servers.map((s) => (
              <tr>
                <td>
                  {s.name} <span class="mono muted">{s.id}</span>
                </td>
                <td>{s.status}</td>
                <td class="mono">{s.publicKey}</td>
                <td>
                  <Time iso={s.createdAt} />
                </td>
                <td>
                  <Time iso={s.rotatedAt} />
                </td>
                {csrf !== null && (
                  <td>
                    {s.status === 'active' && (
                      <>
                        <form method="post" action={`${serverPath(gameId, s.id)}/rotate`} class="row" aria-label={`Rotate the key of ${s.name}`}>
                          <Csrf token={csrf} />
                          <label>
                            New public key
                            <input name="publicKey" required minlength={1} maxlength={100} class="mono" />
                          </label>
                          <button type="submit" class="secondary">Rotate</button>
                        </form>
                        <ConfirmButton href={`${serverPath(gameId, s.id)}/disable`} label="Disable" ariaLabel={`Disable ${s.name}`} />
                      </>
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {csrf === null ? (
        <p class="muted">Adding, rotating and disabling game servers, and setting who reports results, need the admin role.</p>
      ) : (
        <form method="post" action={`${gamePath(gameId)}/servers`} class="row" aria-label="Add a game server">
          <Csrf token={csrf} />
          <label>
            Label (eu-1, say)
            <input name="name" required minlength={1} maxlength={64} />
          </label>
          <label>
            Public key (Ed25519, raw 32 bytes as base64url)
            <input name="publicKey" required minlength={1} maxlength={100} class="mono" />
          </label>
          <button type="submit">Add the server</button>
        </form>
      )}
    </section>
  )
}

export function gameServerPages(services: Services) {
  const { gameServers, games } = services
  const back = (gameId: string) => `${gamePath(gameId)}#game-servers`
  return (app: ConsoleApp) =>
    app
      .post(
        '/games/:id/results',
        ({ request, params, body }) =>
          attempt(request, back(params.id), async () => {
            if (body.results !== 'claims' && body.results !== 'server' && body.results !== 'either') {
              throw new AppError('validation_failed', 'Request failed validation', { details: [{ path: 'body/results', message: 'claims, server or either' }] })
            }
            await games.updateGame(params.id, { results: body.results }, consoleSession(request).actor)
            return redirect(back(params.id), 'game_results_set')
          }),
        { params: IdParams, body: t.Object({ ...CsrfField, results: t.String({ maxLength: 16 }) }), ...consoleRoute('admin') },
      )
      .post(
        '/games/:id/servers',
        ({ request, params, body }) =>
          attempt(request, back(params.id), async () => {
            await gameServers.create(params.id, { name: body.name.trim() || body.name, publicKey: body.publicKey.trim() }, consoleSession(request).actor)
            return redirect(back(params.id), 'game_server_added')
          }),
        { params: IdParams, body: t.Object({ ...CsrfField, name: t.String({ minLength: 1, maxLength: 64 }), publicKey: PublicKey }), ...consoleRoute('admin') },
      )
      .post(
        '/games/:id/servers/:serverId/rotate',
        ({ request, params, body }) =>
          attempt(request, back(params.id), async () => {
            await gameServers.rotate(params.serverId, body.publicKey.trim(), consoleSession(request).actor)
            return redirect(back(params.id), 'game_server_rotated')
          }),
        { params: ServerParams, body: t.Object({ ...CsrfField, publicKey: PublicKey }), ...consoleRoute('admin') },
      )
      // The confirmation step: what disabling does. Changes nothing.
      .get(
        '/games/:id/servers/:serverId/disable',
        async ({ request, params }) => {
          const server = (await gameServers.list(params.id)).find((s) => s.id === params.serverId)
          if (!server) throw new AppError('not_found', 'No such game server in this game')
          return confirmPage(request, {
            title: `Disable the game server ${server.name}?`,
            section: SECTION,
            consequences: [
              `Results signed by ${server.name} are refused (401 invalid_signature) from its next request, whatever its key.`,
              'A disabled server is not enabled again: add a new one (with a new key) instead.',
            ],
            action: `${serverPath(params.id, server.id)}/disable`,
            submit: `Disable ${server.name}`,
            back: back(params.id),
          })
        },
        { params: ServerParams, ...consoleRoute('admin') },
      )
      .post(
        '/games/:id/servers/:serverId/disable',
        ({ request, params }) =>
          attempt(request, back(params.id), async () => {
            await gameServers.disable(params.serverId, consoleSession(request).actor)
            return redirect(back(params.id), 'game_server_disabled')
          }),
        { params: ServerParams, body: t.Object(CsrfField), ...consoleRoute('admin') },
      )
}
