// /console/games: the games and their keys. An admin creates a game or
// rotates its key; the key is on the page that answers that form, once: it is
// never stored (only its hash), never put in a redirect's URL, and the page
// is not cached (no-store), so leaving it loses the key for good.
import { t } from 'elysia'
import type { Services } from '../../services'
import { AppError } from '../../shared/errors'
import type { GameListing } from '../../modules/operations/store'
import { Csrf } from '../layout'
import { ConfirmButton, confirmPage } from '../confirm'
import { consoleRoute, consoleSession } from '../session'
import { actorOf, attempt, can, errorText, IdParams, NoticeQuery, opsPage, When, type ConsoleApp } from './ops-kit'

const SECTION = '/console/games'

/** The key, shown once, with what to do with it. */
function FreshKey({ gameName, gameKey }: { gameName: string; gameKey: string }) {
  return (
    <section aria-labelledby="fresh-key" class="fresh-key">
      <h2 id="fresh-key">{`The key of ${gameName}`}</h2>
      <p>
        Copy it now into the game's server configuration: it is shown this once and cannot be shown again (arena keeps only its hash). The previous key, if any, no longer works.
      </p>
      <p class="secret">
        <code class="mono" id="game-key">
          {gameKey}
        </code>
      </p>
    </section>
  )
}

function GamesTable({ games, mayAct }: { games: GameListing[]; mayAct: boolean }) {
  if (games.length === 0) return <p>No game yet.</p>
  return (
    <table>
      <thead>
        <tr>
          <th scope="col">Game</th>
          <th scope="col">Id</th>
          <th scope="col">Created</th>
          <th scope="col">Key issued</th>
          {mayAct && <th scope="col">Key</th>}
        </tr>
      </thead>
      <tbody>
        {games.map((game) => (
          <tr>
            <th scope="row">
              <a href={`/console/games/${game.id}`}>{game.name}</a>
            </th>
            <td class="mono">{game.id}</td>
            <td>
              <When at={game.createdAt} />
            </td>
            <td>
              <When at={game.keyRotatedAt} />
            </td>
            {mayAct && (
              <td>
                <ConfirmButton href={`/console/games/${game.id}/rotate-key`} label="Rotate key" ariaLabel={`Rotate the key of ${game.name}`} kind="secondary" />
              </td>
            )}
          </tr>
        ))}
      </tbody>
    </table>
  )
}

function CreateGameForm({ csrf }: { csrf: string }) {
  return (
    <form method="post" action="/console/games" class="stack" aria-labelledby="new-game">
      <h2 id="new-game">New game</h2>
      <Csrf token={csrf} />
      <label>
        Name
        <input name="name" required minlength={1} maxlength={100} />
      </label>
      <button type="submit">Create game</button>
    </form>
  )
}

export function gamesPages(services: Services) {
  const page = async (request: Request, options: { notice?: string | null; error?: string; status?: number; fresh?: { gameName: string; gameKey: string } }) => {
    const mayAct = can(request, 'admin')
    const csrf = consoleSession(request).csrf
    return opsPage(request, {
      title: 'Games & keys',
      section: SECTION,
      notice: options.notice,
      error: options.error,
      status: options.status,
      children: (
        <>
          {options.fresh && <FreshKey {...options.fresh} />}
          <GamesTable games={await services.operations.games()} mayAct={mayAct} />
          {mayAct ? <CreateGameForm csrf={csrf} /> : <p class="muted">Creating games and rotating keys needs the admin role.</p>}
        </>
      ),
    })
  }
  return (app: ConsoleApp) =>
    app
      .get('/games', ({ request, query }) => page(request, { notice: query.notice }), { query: NoticeQuery, ...consoleRoute('viewer') })
      .post(
        '/games',
        ({ request, body }) =>
          attempt(
            async () => {
              const { game, gameKey } = await services.games.createGame(body.name.trim() || body.name, actorOf(request))
              return page(request, { notice: 'game_created', status: 201, fresh: { gameName: game.name, gameKey } })
            },
            (error) => page(request, { error: errorText(error), status: error.status }),
          ),
        { body: t.Object({ _csrf: t.String({ maxLength: 128 }), name: t.String({ minLength: 1, maxLength: 100 }) }), ...consoleRoute('admin') },
      )
      .get(
        '/games/:id/rotate-key',
        async ({ request, params }) => {
          const name = await services.operations.gameName(params.id)
          if (name === null) throw new AppError('not_found', 'No such game')
          return confirmPage(request, {
            title: `Rotate the key of ${name}?`,
            section: SECTION,
            consequences: [
              `The current key of ${name} stops working at once: every game server still using it is refused (403 invalid_game_key) at its next request, until its configuration has the new key.`,
              'The new key is shown once, on the next page: copy it into the game servers before leaving that page.',
            ],
            action: `${SECTION}/${params.id}/rotate-key`,
            submit: `Rotate the key of ${name}`,
            back: SECTION,
          })
        },
        { params: IdParams, ...consoleRoute('admin') },
      )
      .post(
        '/games/:id/rotate-key',
        ({ request, params }) =>
          attempt(
            async () => {
              const { gameKey } = await services.games.rotateKey(params.id, actorOf(request))
              const name = (await services.operations.gameName(params.id)) ?? params.id
              return page(request, { notice: 'game_key_rotated', fresh: { gameName: name, gameKey } })
            },
            (error) => page(request, { error: errorText(error), status: error.status }),
          ),
        { params: IdParams, body: t.Object({ _csrf: t.String({ maxLength: 128 }) }), ...consoleRoute('admin') },
      )
}
