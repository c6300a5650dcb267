// /console/tournaments: the list (by status), the form that creates one of
// any format, and each tournament's page with what a moderator (start,
// cancel, disqualify, correct a result) or a finance operator (fund the prize
// pool) may do to it. Every action is the GamesService or TournamentOperations
// method the admin API calls.
import { t } from 'elysia'
import type { Services } from '../../services'
import type { Tournament } from '../../modules/games/model'
import { engineOf } from '../../modules/games/formats/engines'
import { TournamentStatus } from '../../modules/games/model'
import type { ErrorDetail } from '../../shared/errors'
import { redirect } from '../http'
import type { NoticeCode } from '../notices'
import { consoleRoute, consoleSession } from '../session'
import { readTournamentForm, TournamentFormFields } from '../tournament-form'
import type { Seat } from './bracket-svg'
import { CreateTournamentForm } from './tournament-create'
import { formatName, OVER, TournamentDetail } from './tournament-detail'
import { actorOf, attempt, can, errorText, IdParams, opsPage, Reason, When, type ConsoleApp } from './ops-kit'
import { confirmPage } from '../confirm'
import { matchLabel } from './bracket-svg'

const SECTION = '/console/tournaments'
const PAGE = 50
const STATUSES = ['draft', 'registration', 'running', 'finalizing', 'completed', 'cancelled'] as const

const ListQuery = t.Object({
  status: t.Optional(t.Union([TournamentStatus, t.Literal('')])),
  after: t.Optional(t.String({ maxLength: 64 })),
  notice: t.Optional(t.String({ maxLength: 200 })),
})

const CsrfOnly = t.Object({ _csrf: t.String({ maxLength: 128 }) })
const ParticipantParams = t.Object({ id: t.String({ minLength: 1, maxLength: 64 }), participantId: t.String({ minLength: 1, maxLength: 64 }) })
/** A match still to be decided (cancelling cancels it; disqualifying makes it a walkover). */
const UNDECIDED = new Set(['waiting', 'running', 'disputed'])

/** The reason field of a confirmation page (what every affected player reads). */
function ReasonField({ label }: { label: string }) {
  return (
    <label>
      {label}
      <input name="reason" required maxlength={500} />
    </label>
  )
}

/** What a disqualification does to this participant, in this format, now (docs/tournaments.md, "Disqualification"). */
function disqualifyConsequences(tournament: Tournament, seats: Map<string, Seat>, participantId: string): string[] {
  const name = seats.get(participantId)?.name ?? participantId
  const theirs = tournament.matches.filter((m) => UNDECIDED.has(m.status) && (m.slot1ParticipantId === participantId || m.slot2ParticipantId === participantId))
  const current = theirs.find((m) => m.status !== 'waiting' && m.slot1ParticipantId !== null && m.slot2ParticipantId !== null)
  const opponentOf = (m: (typeof theirs)[number]) => {
    const other = m.slot1ParticipantId === participantId ? m.slot2ParticipantId : m.slot1ParticipantId
    return other === null ? 'the opponent still to come' : (seats.get(other)?.name ?? other)
  }
  const now = current ? `Their current match, ${matchLabel(current)} against ${opponentOf(current)}, is decided for ${opponentOf(current)} now.` : 'They have no match being played now.'
  // As the format plays (formats/engine.ts, `plays`): a bracket with a losers bracket gives a second life, one without none.
  const engine = engineOf(tournament.format)
  const byFormat = {
    bracket: engine.brackets.includes('losers')
      ? `${now} From the winners bracket they drop into the losers bracket, where their match is a walkover too as soon as it fills: out either way.`
      : `${now} ${name} is out of the tournament.`,
    'all-pairs': `Every match of theirs not yet decided (${theirs.length}${theirs.length > 0 ? `: against ${theirs.map(opponentOf).join(', ')}` : ''}) is decided for the opponent now.`,
    'paired-rounds': `${now} They are not paired in any later round (a bye goes to someone else if the count becomes odd).`,
  }
  return [
    byFormat[engine.plays],
    // Where every match exists from the start, nothing later fills.
    engine.plays === 'all-pairs' ? 'Results already decided stand.' : 'Every later match they would enter is decided for the opponent the moment it fills. Results already decided stand.',
    `${name} gets a tournament.disqualified event with your reason; both players of each walkover get match.decided.`,
    ...(tournament.prizes.length > 0 ? ['A rank they end on pays no prize (ranks do not move up).'] : []),
    'It cannot be undone: no correction makes a disqualified player the winner again.',
  ]
}

/** What cancelling this tournament does, with its numbers (docs/tournaments.md, "Cancellation", "Entry fees and prizes"). */
function cancelConsequences(tournament: Tournament): string[] {
  const undecided = tournament.matches.filter((m) => UNDECIDED.has(m.status)).length
  const players = tournament.participants.length
  return [
    tournament.matches.length === 0
      ? 'No match has been made yet: none will be.'
      : `Every match not yet decided (${undecided} of ${tournament.matches.length}) is cancelled, and the game sessions issued for them stop working. Decided results stay; no standings are kept.`,
    `${players === 1 ? 'The participant gets' : `All ${players} participants get`} a tournament.cancelled event with your reason.`,
    ...(tournament.entryFee !== null ? [`Every entry fee paid (${tournament.entryFee} each) comes back to its player.`] : []),
    ...(tournament.prizes.length > 0 ? [`No prize is paid (${tournament.prizes.join(', ')}): the funding in the prize escrow returns to the funding account.`] : []),
    'It cannot be undone: a cancelled tournament is never started or resumed.',
  ]
}

export function tournamentsPages(services: Services) {
  const { games, tournamentOperations, operations } = services

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
      .get(
        '/tournaments/:id/cancel',
        async ({ request, params }) => {
          const tournament = await games.getTournament(params.id)
          if (OVER.has(tournament.status)) return detailPage(request, params.id, { error: `${tournament.name} is ${tournament.status}: there is nothing to cancel`, status: 409 })
          return confirmPage(request, {
            title: `Cancel ${tournament.name}?`,
            section: SECTION,
            consequences: cancelConsequences(tournament),
            action: `${SECTION}/${tournament.id}/cancel`,
            submit: 'Cancel the tournament',
            back: `${SECTION}/${tournament.id}`,
            fields: <ReasonField label="Reason for cancelling (every participant reads it)" />,
          })
        },
        { params: IdParams, ...consoleRoute('moderator') },
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
      .get(
        '/tournaments/:id/participants/:participantId/disqualify',
        async ({ request, params }) => {
          const tournament = await games.getTournament(params.id)
          const participant = tournament.participants.find((p) => p.id === params.participantId)
          const seats = await seatsOf(tournament)
          const name = participant ? (seats.get(participant.id)?.name ?? participant.userId) : null
          const refusal =
            participant === undefined ? `${params.participantId} is no participant of ${tournament.name}` : participant.disqualifiedAt !== null ? `${name} is disqualified already` : tournament.status !== 'running' ? `${tournament.name} is ${tournament.status}: only a running tournament's players are disqualified` : null
          if (refusal !== null || participant === undefined) return detailPage(request, params.id, { error: refusal ?? undefined, status: participant === undefined ? 404 : 409 })
          return confirmPage(request, {
            title: `Disqualify ${name} from ${tournament.name}?`,
            section: SECTION,
            consequences: disqualifyConsequences(tournament, seats, participant.id),
            action: `${SECTION}/${tournament.id}/participants/${participant.id}/disqualify`,
            submit: `Disqualify ${name}`,
            back: `${SECTION}/${tournament.id}#participants`,
            fields: <ReasonField label={`Reason for disqualifying ${name} (they read it)`} />,
          })
        },
        { params: ParticipantParams, ...consoleRoute('moderator') },
      )
      .post(
        '/tournaments/:id/participants/:participantId/disqualify',
        ({ request, params, body }) =>
          act(request, params.id, async () => {
            await tournamentOperations.disqualify(params.id, params.participantId, body.reason, actorOf(request))
            return 'participant_disqualified'
          }),
        {
          params: ParticipantParams,
          body: t.Object({ _csrf: t.String({ maxLength: 128 }), reason: Reason }),
          ...consoleRoute('moderator'),
        },
      )
      .post(
        '/tournaments/:id/matches/:matchId/correct',
        ({ request, params, body }) =>
          act(request, params.id, async () => {
            await tournamentOperations.correct(params.matchId, body.winnerParticipantId, body.reason, actorOf(request))
            return 'match_corrected'
          }),
        {
          params: t.Object({ id: t.String({ minLength: 1, maxLength: 64 }), matchId: t.String({ minLength: 1, maxLength: 64 }) }),
          body: t.Object({ _csrf: t.String({ maxLength: 128 }), winnerParticipantId: t.String({ minLength: 1, maxLength: 64 }), reason: Reason }),
          ...consoleRoute('moderator'),
        },
      )
}

