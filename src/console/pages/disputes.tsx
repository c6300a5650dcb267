// /console/disputes: every disputed match of every running tournament and
// those of a queue or a challenge (first, linked to their match page), with
// both players and what each claimed, and (for a moderator) the form that
// decides it: the same TournamentOperations.resolve the admin API calls, so the
// bracket advances exactly as after an agreed claim. Each row counts the
// evidence its players attached, linked to the match page that lists it.
import { t } from 'elysia'
import type { Services } from '../../services'
import { QUEUE_LIMIT } from '../../modules/operations/service'
import type { DisputedMatch, NamedSeat } from '../../modules/operations/store'
import type { ClaimRecord } from '../../modules/matches/store'
import { Csrf } from '../layout'
import { redirect } from '../http'
import { consoleRoute, consoleSession } from '../session'
import { matchLabel } from './bracket-svg'
import { matchPath } from './matchmaking'
import { actorOf, attempt, can, errorText, IdParams, NoticeQuery, opsPage, type ConsoleApp } from './ops-kit'

const SECTION = '/console/disputes'

function seatName(seat: NamedSeat | null): string {
  return seat === null ? '—' : `${seat.username} (seed ${seat.seed})`
}

/** What one player claimed, in words. */
function claimText(claim: ClaimRecord | undefined, dispute: DisputedMatch): string {
  if (claim === undefined) return 'no claim'
  if (claim.outcome === 'DRAW') return 'a draw'
  const winner = claim.winnerParticipantId === dispute.slot1?.participantId ? dispute.slot1 : claim.winnerParticipantId === dispute.slot2?.participantId ? dispute.slot2 : null
  return winner === null ? 'a win' : `${winner.username} won`
}

function ResolveForm({ dispute, csrf }: { dispute: DisputedMatch; csrf: string }) {
  const id = dispute.match.id
  return (
    <form method="post" action={`/console/disputes/${id}/resolve`} class="row">
      <Csrf token={csrf} />
      <fieldset>
        <legend>Winner</legend>
        {[dispute.slot1, dispute.slot2].map(
          (seat) =>
            seat && (
              <label class="choice">
                <input type="radio" name="winnerParticipantId" value={seat.participantId} required /> {seat.username}
              </label>
            ),
        )}
      </fieldset>
      <button type="submit">Resolve</button>
    </form>
  )
}

function evidenceCount(n: number): string {
  return n === 0 ? 'none: the match page' : n === 1 ? '1 file' : `${n} files`
}

function DisputesTable({ disputes, evidence, csrf, mayAct }: { disputes: DisputedMatch[]; evidence: Map<string, number>; csrf: string; mayAct: boolean }) {
  if (disputes.length === 0) return <p>No match is disputed.</p>
  return (
    <table>
      <caption class="muted">
        Matches of a queue or a challenge first, then by tournament, oldest first{disputes.length === QUEUE_LIMIT ? ` (the first ${QUEUE_LIMIT}: resolve some to see the rest)` : ''}. {mayAct ? 'Choose the winner to resolve a match: the bracket advances (or the stakes are paid) as after an agreed result.' : 'Resolving needs the moderator role.'}</caption>
      <thead>
        <tr>
          <th scope="col">Tournament</th>
          <th scope="col">Match</th>
          <th scope="col">Player 1 and their claim</th>
          <th scope="col">Player 2 and their claim</th>
          <th scope="col">Evidence</th>
          {mayAct && <th scope="col">Resolve</th>}
        </tr>
      </thead>
      <tbody>
        {disputes.map((d) => {
          const claimOf = (seat: NamedSeat | null) => d.claims.find((c) => c.participantId === seat?.participantId)
          return (
            <tr>
              <td>
                {d.tournamentId === null ? <span class="muted">{`none (a ${d.match.kind}'s match)`}</span> : <a href={`/console/tournaments/${d.tournamentId}`}>{d.tournamentName}</a>}
              </td>
              <th scope="row">
                {d.tournamentId === null ? <a href={matchPath(d.match.id)}>{`${d.match.kind} match`}</a> : matchLabel(d.match)} <span class="muted mono">{d.match.id}</span>
              </th>
              <td>
                {seatName(d.slot1)}
                <br />
                <span class="muted">claims: {claimText(claimOf(d.slot1), d)}</span>
              </td>
              <td>
                {seatName(d.slot2)}
                <br />
                <span class="muted">claims: {claimText(claimOf(d.slot2), d)}</span>
              </td>
              <td>
                <a href={matchPath(d.match.id)}>{evidenceCount(evidence.get(d.match.id) ?? 0)}</a>
              </td>
              {mayAct && (
                <td>
                  <ResolveForm dispute={d} csrf={csrf} />
                </td>
              )}
            </tr>
          )
        })}
      </tbody>
    </table>
  )
}

export function disputesPages(services: Services) {
  const table = async (request: Request) => {
    const disputes = await services.operations.disputes()
    const evidence = await services.evidence.countsOf(disputes.map((d) => d.match.id))
    return <DisputesTable disputes={disputes} evidence={evidence} csrf={consoleSession(request).csrf} mayAct={can(request, 'moderator')} />
  }
  const page = async (request: Request, notice: string | null | undefined, error?: string, status?: number) =>
    opsPage(request, { title: 'Disputes', section: SECTION, notice, error, status, children: await table(request) })
  return (app: ConsoleApp) =>
    app
      .get('/disputes', ({ request, query }) => page(request, query.notice), { query: NoticeQuery, ...consoleRoute('viewer') })
      .post(
        '/disputes/:id/resolve',
        ({ request, params, body }) =>
          attempt(
            async () => {
              await services.tournamentOperations.resolve(params.id, body.winnerParticipantId, actorOf(request))
              return redirect(SECTION, 'dispute_resolved')
            },
            (error) => page(request, null, errorText(error), error.status),
          ),
        { params: IdParams, body: t.Object({ _csrf: t.String({ maxLength: 128 }), winnerParticipantId: t.String({ minLength: 1, maxLength: 64 }) }), ...consoleRoute('moderator') },
      )
}
