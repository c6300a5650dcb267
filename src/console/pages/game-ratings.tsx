// A game's page (/console/games/:id, viewer): its rating settings, its
// seasons, and a leaderboard (the current season's live, or a past one's
// final board, ?season=), paged. An admin schedules the next season from it:
// the form opens a confirmation page saying that every rating of the game is
// reset at the season's start (nothing is done by opening it), whose own form
// schedules it through RatingsService.createSeason, as POST
// /api/v1/admin/games/{gameId}/seasons does (role admin, audited
// `season.create`). Also the user page's "Ratings" section: the player's
// rating in each game and its latest changes. Its Matchmaking section (the
// challenge rake, a link to the queues) is ./matchmaking.tsx's.
import { t } from 'elysia'
import type { Services } from '../../services'
import { AppError } from '../../shared/errors'
import type { Leaderboard, Season } from '../../modules/ratings/model'
import { redirect } from '../http'
import { attempt, consolePage, NOTICE_FIELDS, Pager, queryOf, Time } from '../page'
import { confirmPage } from '../confirm'
import { consoleRoute, consoleSession } from '../session'
import { utcInstant } from '../tournament-form'
import { can, IdParams, type ConsoleApp } from './ops-kit'
import { queuesPath } from './matchmaking'
import { Csrf } from '../layout'
import { GameServersSection } from './game-servers'

const SECTION = '/console/games'
/** Leaderboard rows a page. */
export const BOARD_PAGE = 25
/** Rating changes the user page shows per game. */
export const USER_HISTORY_ROWS = 5

const gamePath = (id: string) => `${SECTION}/${encodeURIComponent(id)}`
/** The season form's path: its confirmation page (GET, the fields in the query) and the form that acts (POST), as every confirmation is. */
const schedulePath = (id: string) => `${gamePath(id)}/seasons`

/** What a season's reset does to each player's rating, in a sentence. */
export function resetSentence(reset: Season['reset']): string {
  return reset === 'soft'
    ? 'soft: each player is moved half-way back to 1500, with a deviation of at least 200 (volatility kept)'
    : 'hard: everyone starts again at 1500, deviation 350, volatility 0.06'
}

/** A duration in seconds, for people: "604800 s (7 days)". */
function periodText(seconds: number): string {
  const days = seconds / 86_400
  const hours = seconds / 3600
  const human = Number.isInteger(days) ? `${days} day${days === 1 ? '' : 's'}` : Number.isInteger(hours) ? `${hours} hour${hours === 1 ? '' : 's'}` : null
  return human === null ? `${seconds} s` : `${seconds} s (${human})`
}

const two = (n: number) => n.toFixed(2)

function SeasonsTable({ gameId, seasons, shown }: { gameId: string; seasons: Season[]; shown: string }) {
  return (
    <table>
      <caption class="muted">Every season of the game, newest first; a started one's board opens from its name</caption>
      <thead>
        <tr>
          <th scope="col">#</th>
          <th scope="col">Season</th>
          <th scope="col">Status</th>
          <th scope="col">Reset</th>
          <th scope="col">Starts</th>
          <th scope="col">Started</th>
          <th scope="col">Ended</th>
        </tr>
      </thead>
      <tbody>
        {seasons.map((s) => (
          <tr>
            <td class="num">{s.number}</td>
            <th scope="row">
              <span class="named">
                {s.status === 'scheduled' ? (
                  s.name
                ) : (
                  <a href={`${gamePath(gameId)}${queryOf({ season: s.id })}#leaderboard`} aria-current={s.id === shown ? 'true' : undefined}>
                    {s.name}
                  </a>
                )}
                <small class="mono id">{s.id}</small>
              </span>
            </th>
            <td>{s.status === 'current' ? <span class="ok">current</span> : s.status === 'scheduled' ? 'scheduled' : <span class="muted">ended</span>}</td>
            <td>{s.reset}</td>
            <td>
              <Time iso={s.startsAt} />
            </td>
            <td>
              <Time iso={s.startedAt} />
            </td>
            <td>
              <Time iso={s.endedAt} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

/** The game's matchmaking: its queues' page, and its rake on staked challenges (an admin changes it here). */
function MatchmakingSettings({ gameId, challengeRake, csrf }: { gameId: string; challengeRake: string; csrf: string | null }) {
  return (
    <section aria-labelledby="matchmaking">
      <h2 id="matchmaking">Matchmaking</h2>
      <p>
        <a href={queuesPath(gameId)}>Queues</a>: their settings, the tickets waiting, opening and closing them.
      </p>
      <dl class="facts">
        <dt>Challenge rake</dt>
        <dd>{`${challengeRake}: the house's share of the pot of a staked challenge accepted from now on`}</dd>
      </dl>
      {csrf === null ? (
        <p class="muted">Changing the challenge rake needs the admin role.</p>
      ) : (
        <form method="post" action={`${gamePath(gameId)}/challenge-rake`} class="row" aria-label="Change the challenge rake">
          <Csrf token={csrf} />
          <label>
            Challenge rake (0 to 0.5)
            <input name="challengeRake" inputmode="decimal" required minlength={1} maxlength={10} value={challengeRake} />
          </label>
          <button type="submit">Set the rake</button>
        </form>
      )}
    </section>
  )
}

function ScheduleForm({ gameId }: { gameId: string }) {
  // A GET form: it opens the confirmation page, which holds the real (POST, CSRF) form.
  return (
    <form method="get" action={schedulePath(gameId)} class="stack" aria-labelledby="new-season">
      <h3 id="new-season">Schedule a season</h3>
      <label>
        Name
        <input name="name" required minlength={1} maxlength={100} />
      </label>
      <label>
        Starts at (UTC)
        <input name="startsAt" type="datetime-local" required />
      </label>
      <label>
        Reset
        <select name="reset" required>
          <option value="soft">soft: half-way back to 1500, deviation at least 200</option>
          <option value="hard">hard: everyone at 1500/350/0.06</option>
        </select>
      </label>
      <button type="submit">Schedule…</button>
    </form>
  )
}

function Board({ gameId, board, after }: { gameId: string; board: Leaderboard; after: string | null }) {
  const { season, entries, cursor } = board
  const base = gamePath(gameId)
  const seasonQuery = season.status === 'current' ? {} : { season: season.id }
  return (
    <>
      <table>
        <caption class="muted">
          {season.status === 'current'
            ? `${season.name}, live: ranked by display (rating − 2 × deviation), players with a rated match this season`
            : season.status === 'ended'
              ? `${season.name}, final: the board when the next season started`
              : `${season.name} has not started: no board yet`}
        </caption>
        <thead>
          <tr>
            <th scope="col" class="num">
              Rank
            </th>
            <th scope="col">Player</th>
            <th scope="col" class="num">
              Display
            </th>
            <th scope="col" class="num">
              Rating
            </th>
            <th scope="col" class="num">
              Deviation
            </th>
            <th scope="col" class="num">
              Matches
            </th>
          </tr>
        </thead>
        <tbody>
          {entries.length === 0 && (
            <tr>
              <td colSpan={6} class="muted">
                {after === null ? 'Nobody is rated in this season yet.' : 'No more players.'}
              </td>
            </tr>
          )}
          {entries.map((e) => (
            <tr>
              <td class="num">{e.rank}</td>
              <td>
                <a href={`/console/users/${e.userId}`} title={e.userId}>
                  {e.username ?? <span class="muted">deleted account</span>}
                </a>
                {e.rating.provisional && <span class="muted"> (provisional)</span>}
              </td>
              <td class="num">{two(e.rating.display)}</td>
              <td class="num">{two(e.rating.rating)}</td>
              <td class="num">{two(e.rating.deviation)}</td>
              <td class="num">{e.rating.matches}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <Pager
        next={cursor === null ? null : `${base}${queryOf({ ...seasonQuery, after: cursor })}#leaderboard`}
        first={after === null ? null : `${base}${queryOf(seasonQuery)}#leaderboard`}
        nextLabel="Next players"
        firstLabel="Top of the board"
      />
    </>
  )
}

export function gameRatingPages(services: Services) {
  const { ratings, operations } = services
  /** The game's name, or 404 (the console's page for it). */
  const nameOf = async (gameId: string) => {
    const name = await operations.gameName(gameId)
    if (name === null) throw new AppError('not_found', 'No such game')
    return name
  }
  /** The board asked for; a cursor this server did not issue starts from the top. */
  const boardOf = async (gameId: string, season: string | undefined, after: string | undefined): Promise<{ board: Leaderboard; after: string | null }> => {
    try {
      return { board: await ratings.leaderboard(gameId, { season, after, limit: BOARD_PAGE }), after: after ?? null }
    } catch (error) {
      if (after === undefined || !(error instanceof AppError) || error.code !== 'validation_failed') throw error
      return { board: await ratings.leaderboard(gameId, { season, limit: BOARD_PAGE }), after: null }
    }
  }
  return (app: ConsoleApp) =>
    app
      .get(
        '/games/:id',
        async ({ request, params, query }) => {
          const name = await nameOf(params.id)
          const [settings, { seasons }, { board, after }, game, servers] = await Promise.all([ratings.settings(params.id), ratings.seasons(params.id), boardOf(params.id, query.season, query.after), services.games.getGame(params.id), services.gameServers.list(params.id)])
          return consolePage(request, { title: name, section: SECTION, query }, (
            <>
              <p>
                <a href={SECTION}>All games</a> · <span class="mono">{params.id}</span>
              </p>
              <section aria-labelledby="rating-settings">
                <h2 id="rating-settings">Rating settings</h2>
                <dl class="facts">
                  <dt>τ (volatility constant)</dt>
                  <dd>{settings.tau}</dd>
                  <dt>Inactivity period</dt>
                  <dd>{`${periodText(settings.inactivityPeriodS)}: each whole period without a rated match grows a player's deviation (up to 350)`}</dd>
                </dl>
                <p class="muted">
                  Changed through the admin API: <code>PATCH /api/v1/admin/games/{'{id}'}</code> (admin).
                </p>
              </section>
              <MatchmakingSettings gameId={params.id} challengeRake={game.challengeRake} csrf={can(request, 'admin') ? consoleSession(request).csrf : null} />
              <GameServersSection gameId={params.id} results={game.results} servers={servers} csrf={can(request, 'admin') ? consoleSession(request).csrf : null} />
              <section aria-labelledby="seasons">
                <h2 id="seasons">Seasons</h2>
                <SeasonsTable gameId={params.id} seasons={seasons} shown={board.season.id} />
                {can(request, 'admin') ? <ScheduleForm gameId={params.id} /> : <p class="muted">Scheduling a season needs the admin role.</p>}
              </section>
              <section aria-labelledby="leaderboard">
                <h2 id="leaderboard">{`Leaderboard: ${board.season.name}`}</h2>
                <Board gameId={params.id} board={board} after={after} />
              </section>
            </>
          ))
        },
        {
          params: IdParams,
          query: t.Object({ season: t.Optional(t.String({ maxLength: 64 })), after: t.Optional(t.String({ maxLength: 256 })), ...NOTICE_FIELDS }),
          ...consoleRoute('viewer'),
        },
      )
      // The confirmation step: what scheduling does, the real form with the fields carried over. Changes nothing.
      .get(
        '/games/:id/seasons',
        async ({ request, params, query }) => {
          const name = await nameOf(params.id)
          const startsAt = new Date(utcInstant(query.startsAt.trim()))
          if (Number.isNaN(startsAt.getTime())) throw new AppError('validation_failed', 'Request failed validation', { details: [{ path: 'query/startsAt', message: 'Expected a date and time (UTC), e.g. 2026-12-01T18:00' }] })
          const when = startsAt.toISOString()
          const players = (await ratings.leaderboard(params.id, { limit: 1 })).entries.length > 0
          return confirmPage(request, {
            title: `Schedule ${query.name} for ${name}?`,
            section: SECTION,
            query,
            consequences: [
              `At ${when.slice(0, 10)} ${when.slice(11, 19)} UTC every rating of ${name} is reset, ${resetSentence(query.reset)}. Players keep their history; each gets a season_reset change.`,
              `The current season ends then: its final leaderboard${players ? '' : ' (nobody is on it yet)'} is kept and stays readable.`,
              'A season cannot be taken back once scheduled: it starts by itself at that time.',
            ],
            action: schedulePath(params.id),
            submit: `Schedule ${query.name}`,
            back: `${gamePath(params.id)}#seasons`,
            fields: (
              <>
                <input type="hidden" name="name" value={query.name} />
                <input type="hidden" name="startsAt" value={when} />
                <input type="hidden" name="reset" value={query.reset} />
              </>
            ),
          })
        },
        {
          params: IdParams,
          query: t.Object({ name: t.String({ minLength: 1, maxLength: 100 }), startsAt: t.String({ minLength: 1, maxLength: 40 }), reset: t.Union([t.Literal('soft'), t.Literal('hard')]), ...NOTICE_FIELDS }),
          ...consoleRoute('admin'),
        },
      )
      .post(
        '/games/:id/seasons',
        ({ request, params, body }) =>
          attempt(request, `${gamePath(params.id)}#seasons`, async () => {
            await ratings.createSeason(params.id, { name: body.name.trim() || body.name, startsAt: utcInstant(body.startsAt.trim()), reset: body.reset }, consoleSession(request).actor)
            return redirect(`${gamePath(params.id)}#seasons`, 'season_scheduled')
          }),
        {
          params: IdParams,
          body: t.Object({ _csrf: t.String({ maxLength: 128 }), name: t.String({ minLength: 1, maxLength: 100 }), startsAt: t.String({ minLength: 1, maxLength: 40 }), reset: t.Union([t.Literal('soft'), t.Literal('hard')]) }),
          ...consoleRoute('admin'),
        },
      )
}

type UserRatings = Awaited<ReturnType<Services['ratings']['ofUser']>>['ratings']
type Change = Awaited<ReturnType<Services['ratings']['latestHistory']>>[number]

/** The user page's ratings: the player's rating in each game it was rated in, with its latest changes. */
export async function userRatingsOf(services: Services, userId: string): Promise<{ games: RatedGame[]; usernames: Map<string, string> }> {
  const { ratings } = await services.ratings.ofUser(userId)
  const games = await Promise.all(
    ratings.map(async (rating) => ({
      gameId: rating.gameId,
      gameName: (await services.operations.gameName(rating.gameId)) ?? rating.gameId,
      rating,
      changes: await services.ratings.latestHistory(rating.gameId, userId, USER_HISTORY_ROWS),
    })),
  )
  const opponents = games.flatMap((g) => g.changes.map((c) => c.opponentUserId).filter((id): id is string => id !== null))
  return { games, usernames: opponents.length === 0 ? new Map() : await services.operations.usernames([...new Set(opponents)]) }
}

interface RatedGame {
  gameId: string
  gameName: string
  rating: UserRatings[number]
  changes: Change[]
}

const KIND_LABEL: Record<Change['kind'], string> = { match: 'match', correction: 'correction', season_reset: 'season reset' }

export function UserRatingsSection({ games, usernames }: Awaited<ReturnType<typeof userRatingsOf>>) {
  return (
    <section aria-labelledby="ratings">
      <h2 id="ratings">Ratings</h2>
      {games.length === 0 && <p class="muted">Never rated in any game.</p>}
      {games.map(({ gameId, gameName, rating, changes }) => (
        <>
          <h3>
            <a href={`${gamePath(gameId)}#leaderboard`}>{gameName}</a>
          </h3>
          <dl class="facts">
            <dt>Rating</dt>
            <dd>{`${two(rating.rating)} ± ${two(rating.deviation)} (volatility ${rating.volatility})`}</dd>
            <dt>Display</dt>
            <dd>{two(rating.display)}</dd>
            <dt>Rated matches this season</dt>
            <dd>
              {rating.matches}
              {rating.provisional && <span class="muted"> (provisional: fewer than 10)</span>}
            </dd>
          </dl>
          <table>
            <caption class="muted">{`The latest ${USER_HISTORY_ROWS} changes, newest first`}</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Change</th>
                <th scope="col">Result</th>
                <th scope="col">Opponent</th>
                <th scope="col" class="num">
                  Rating before
                </th>
                <th scope="col" class="num">
                  Rating after
                </th>
                <th scope="col" class="num">
                  Deviation after
                </th>
              </tr>
            </thead>
            <tbody>
              {changes.map((c) => (
                <tr>
                  <td>
                    <Time iso={c.createdAt} />
                  </td>
                  <td>{KIND_LABEL[c.kind]}</td>
                  <td>{c.outcome ?? <span class="muted">—</span>}</td>
                  <td>
                    {c.opponentUserId === null ? (
                      <span class="muted">—</span>
                    ) : (
                      <a href={`/console/users/${c.opponentUserId}`} title={c.opponentUserId}>
                        {usernames.get(c.opponentUserId) ?? <span class="mono">{c.opponentUserId}</span>}
                      </a>
                    )}
                  </td>
                  <td class="num">{two(c.before.rating)}</td>
                  <td class="num">{two(c.after.rating)}</td>
                  <td class="num">{two(c.after.deviation)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ))}
    </section>
  )
}
