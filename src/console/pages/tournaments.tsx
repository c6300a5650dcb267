// /console/tournaments: the list (by status), the form that creates one of
// any format, and each tournament's page with what a moderator (start,
// cancel, disqualify, correct a result) or a finance operator (fund the prize
// pool) may do to it. Every action is the GamesService or MatchesService
// method the admin API calls.
import { t } from 'elysia'
import type { Services } from '../../services'
import type { Tournament } from '../../modules/games/model'
import { TournamentStatus } from '../../modules/games/model'
import type { ErrorDetail } from '../../shared/errors'
import { redirect } from '../http'
import type { NoticeCode } from '../notices'
import { consoleRoute, consoleSession } from '../session'
import { readTournamentForm, TournamentFormFields } from '../tournament-form'
import type { Seat } from './bracket-svg'
import { CreateTournamentForm } from './tournament-create'
import { formatName, TournamentDetail } from './tournament-detail'
import { actorOf, attempt, can, errorText, IdParams, opsPage, Reason, When, type ConsoleApp } from './ops-kit'

const SECTION = '/console/tournaments'
const PAGE = 50
const STATUSES = ['draft', 'registration', 'running', 'finalizing', 'completed', 'cancelled'] as const

const ListQuery = t.Object({
  status: t.Optional(t.Union([TournamentStatus, t.Literal('')])),
  after: t.Optional(t.String({ maxLength: 64 })),
  notice: t.Optional(t.String({ maxLength: 200 })),
})

const CsrfOnly = t.Object({ _csrf: t.String({ maxLength: 128 }) })

export function tournamentsPages(services: Services) {
  const { games, matches, operations } = services

  async function seatsOf(tournament: Tournament): Promise<Map<string, Seat>> {
    const names = await operations.usernames(tournament.participants.map((p) => p.userId))
    return new Map(tournament.participants.map((p) => [p.id, { name: names.get(p.userId) ?? p.userId, seed: p.seed }]))
  }

  async function detailPage(request: Request, id: string, options: { notice?: string | null; error?: string; status?: number } = {}) {
    const tournament = await games.getTournament(id)
    return opsPage(request, {
      title: tournament.name,
      section: SECTION,
      notice: options.notice,
      error: options.error,
      status: options.status,
      children: (
        <>
          <p>
            <a href={SECTION}>All tournaments</a>
          </p>
          <TournamentDetail tournament={tournament} seats={await seatsOf(tournament)} gameName={await operations.gameName(tournament.gameId)} csrf={consoleSession(request).csrf} may={{ moderate: can(request, 'moderator'), fund: can(request, 'finance') }} />
        </>
      ),
    })
  }

  async function createPage(request: Request, values: Partial<TournamentFormFields> = {}, errors: ErrorDetail[] = [], status = 200, error?: string) {
    const list = await operations.games()
    return opsPage(request, {
      title: 'New tournament',
      section: SECTION,
      error: error ?? (errors.length > 0 ? 'The tournament was not created: see the fields marked below.' : undefined),
      status,
      children: list.length === 0 ? <p>Create a game first: <a href="/console/games">Games & keys</a>.</p> : <CreateTournamentForm csrf={consoleSession(request).csrf} games={list} values={values} errors={errors} />,
    })
  }

  /** A tournament action: on success back to its page with a notice; refused, its page again saying why. */
  const act = (request: Request, id: string, action: () => Promise<NoticeCode>) =>
    attempt(
      async () => redirect(`${SECTION}/${id}`, await action()),
      (error) => detailPage(request, id, { error: errorText(error), status: error.status }),
    )

  return (app: ConsoleApp) =>
    app
      .get(
        '/tournaments',
        async ({ request, query }) => {
          const status = query.status === '' ? undefined : query.status
          const page = await games.listTournaments({ status, after: query.after, limit: PAGE })
          return opsPage(request, {
            title: 'Tournaments',
            section: SECTION,
            notice: query.notice,
            children: (
              <>
                <form method="get" action={SECTION} class="row">
                  <label>
                    Status
                    <select name="status">
                      <option value="">any</option>
                      {STATUSES.map((s) => (
                        <option value={s} selected={s === status}>
                          {s}
                        </option>
                      ))}
                    </select>
                  </label>
                  <button type="submit" class="secondary">
                    Show
                  </button>
                </form>
                {can(request, 'moderator') && (
                  <p>
                    <a href={`${SECTION}/new`}>New tournament</a>
                  </p>
                )}
                {page.tournaments.length === 0 ? (
                  <p>No tournament{status ? ` is ${status}` : ''}.</p>
                ) : (
                  <table>
                    <caption class="muted">Oldest first.</caption>
                    <thead>
                      <tr>
                        <th scope="col">Tournament</th>
                        <th scope="col">Format</th>
                        <th scope="col">Status</th>
                        <th scope="col" class="num">
                          Players
                        </th>
                        <th scope="col">Created</th>
                        <th scope="col">Started</th>
                      </tr>
                    </thead>
                    <tbody>
                      {page.tournaments.map((row) => (
                        <tr>
                          <th scope="row">
                            <a href={`${SECTION}/${row.id}`}>{row.name}</a>
                          </th>
                          <td>{formatName(row.format)}</td>
                          <td>{row.status}</td>
                          <td class="num">{row.participantCount}</td>
                          <td>
                            <When at={row.createdAt} />
                          </td>
                          <td>
                            <When at={row.startedAt} />
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                )}
                {page.cursor && (
                  <p>
                    <a href={`${SECTION}?${new URLSearchParams({ ...(status ? { status } : {}), after: page.cursor })}`}>Next page</a>
                  </p>
                )}
              </>
            ),
          })
        },
        { query: ListQuery, ...consoleRoute('viewer') },
      )
      .get('/tournaments/new', ({ request }) => createPage(request), { ...consoleRoute('moderator') })
      .post(
        '/tournaments',
        async ({ request, body }) => {
          const read = readTournamentForm(body)
          if (!read.ok) return createPage(request, body, read.errors, 422)
          return attempt(
            async () => {
              const tournament = await games.createTournament(read.body, actorOf(request))
              return redirect(`${SECTION}/${tournament.id}`, 'tournament_created')
            },
            (error) => createPage(request, body, (error.details ?? []).map((d) => ({ path: d.path.replace(/^body\//, '').replaceAll('/', '.'), message: d.message })), error.status, errorText(error)),
          )
        },
        { body: TournamentFormFields, ...consoleRoute('moderator') },
      )
      .get('/tournaments/:id', ({ request, params, query }) => detailPage(request, params.id, { notice: query.notice }), {
        params: IdParams,
        query: t.Object({ notice: t.Optional(t.String({ maxLength: 200 })) }),
        ...consoleRoute('viewer'),
      })
      .post(
        '/tournaments/:id/start',
        ({ request, params }) =>
          act(request, params.id, async () => {
            await games.startTournament(params.id, actorOf(request))
            return 'tournament_started'
          }),
        { params: IdParams, body: CsrfOnly, ...consoleRoute('moderator') },
      )
      .post(
        '/tournaments/:id/cancel',
        ({ request, params, body }) =>
          act(request, params.id, async () => {
            await games.cancelTournament(params.id, body.reason, actorOf(request))
            return 'tournament_cancelled'
          }),
        { params: IdParams, body: t.Object({ _csrf: t.String({ maxLength: 128 }), reason: Reason }), ...consoleRoute('moderator') },
      )
      .post(
        '/tournaments/:id/fund',
        ({ request, params, body }) =>
          act(request, params.id, async () => {
            await games.fund(params.id, { amount: body.amount.trim(), reference: body.reference.trim() }, actorOf(request))
            return 'tournament_funded'
          }),
        {
          params: IdParams,
          body: t.Object({ _csrf: t.String({ maxLength: 128 }), amount: t.String({ minLength: 1, maxLength: 64 }), reference: t.String({ minLength: 1, maxLength: 128 }) }),
          ...consoleRoute('finance'),
        },
      )
      .post(
        '/tournaments/:id/participants/:participantId/disqualify',
        ({ request, params, body }) =>
          act(request, params.id, async () => {
            await matches.disqualify(params.id, params.participantId, body.reason, actorOf(request))
            return 'participant_disqualified'
          }),
        {
          params: t.Object({ id: t.String({ minLength: 1, maxLength: 64 }), participantId: t.String({ minLength: 1, maxLength: 64 }) }),
          body: t.Object({ _csrf: t.String({ maxLength: 128 }), reason: Reason }),
          ...consoleRoute('moderator'),
        },
      )
      .post(
        '/tournaments/:id/matches/:matchId/correct',
        ({ request, params, body }) =>
          act(request, params.id, async () => {
            await matches.correct(params.matchId, body.winnerParticipantId, body.reason, actorOf(request))
            return 'match_corrected'
          }),
        {
          params: t.Object({ id: t.String({ minLength: 1, maxLength: 64 }), matchId: t.String({ minLength: 1, maxLength: 64 }) }),
          body: t.Object({ _csrf: t.String({ maxLength: 128 }), winnerParticipantId: t.String({ minLength: 1, maxLength: 64 }), reason: Reason }),
          ...consoleRoute('moderator'),
        },
      )
}

