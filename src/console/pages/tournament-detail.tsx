// One tournament in the console: what it is, what may be done to it (by
// role), its bracket as a picture (elimination formats), its standings
// (round robin and Swiss, and every format once over), its participants and
// every match as a table (what the picture shows, as text).
import type { Match, Tournament } from '../../modules/games/model'
import { isDrawable } from '../bracket-layout'
import { Csrf } from '../layout'
import { BracketPicture, matchLabel, type Seat } from './bracket-svg'
import { engineOf, labelOf } from '../../modules/games/formats/engines'
import { When } from './ops-kit'
import { ConfirmButton } from '../confirm'

export interface DetailProps {
  tournament: Tournament
  /** participantId → name and seed. */
  seats: Map<string, Seat>
  /** The game's name (null: the game is gone). */
  gameName: string | null
  csrf: string
  may: { moderate: boolean; fund: boolean }
}

/** A tournament in one of these has its winner or is over: nothing to cancel or fund. */
export const OVER = new Set(['finalizing', 'completed', 'cancelled'])

function nameOf(seats: Map<string, Seat>, participantId: string | null): string {
  if (participantId === null) return '—'
  const seat = seats.get(participantId)
  return seat ? `${seat.name} (${seat.seed})` : participantId
}

export function formatName(format: string): string {
  return labelOf(format)
}

function Facts({ tournament, seats, gameName }: { tournament: Tournament; seats: Map<string, Seat>; gameName: string | null }) {
  const o = tournament.options
  const options = [
    o.thirdPlaceMatch ? 'third-place match' : null,
    o.grandFinal ? `grand final: ${o.grandFinal}` : null,
    o.rounds !== undefined ? `${o.rounds} rounds` : null,
    o.matchDeadlineS !== undefined ? `match deadline ${o.matchDeadlineS} s` : null,
    o.rated === false ? 'unrated' : null,
  ].filter((x) => x !== null)
  const r = tournament.registration
  return (
    <dl class="facts">
      <dt>Status</dt>
      <dd>{tournament.status}</dd>
      <dt>Format</dt>
      <dd>{formatName(tournament.format)}</dd>
      <dt>Game</dt>
      <dd>
        {gameName ?? 'unknown'} <span class="muted mono">{tournament.gameId}</span>
      </dd>
      <dt>Options</dt>
      <dd>{options.length > 0 ? options.join(', ') : 'none'}</dd>
      <dt>Players</dt>
      <dd>{tournament.participants.length}</dd>
      {r && (
        <>
          <dt>Registration</dt>
          <dd>
            closes <When at={r.closesAt} />, at most {r.maxPlayers} players, starts <When at={r.startsAt} />, seeding {r.seeding}
            {r.checkIn && (
              <>
                ; check-in from <When at={r.checkIn.opensAt} /> to <When at={r.checkIn.closesAt} />
              </>
            )}
          </dd>
        </>
      )}
      <dt>Entry fee</dt>
      <dd>{tournament.entryFee ?? 'free'}</dd>
      <dt>Prizes</dt>
      <dd>{tournament.prizes.length > 0 ? tournament.prizes.map((p, i) => `${i + 1}: ${p}`).join(', ') : 'none'}</dd>
      {tournament.winnerParticipantId && (
        <>
          <dt>Winner</dt>
          <dd>{nameOf(seats, tournament.winnerParticipantId)}</dd>
        </>
      )}
    </dl>
  )
}

function Actions({ tournament, csrf, may }: Pick<DetailProps, 'tournament' | 'csrf' | 'may'>) {
  const id = tournament.id
  const startable = tournament.status === 'draft' || tournament.status === 'registration'
  const cancellable = !OVER.has(tournament.status)
  if (!may.moderate && !may.fund) return <p class="muted">Acting on a tournament needs the moderator role (start, cancel, disqualify, correct) or the finance role (fund).</p>
  return (
    <section aria-labelledby="actions">
      <h2 id="actions">Actions</h2>
      <div class="actions">
        {may.moderate && startable && (
          <form method="post" action={`/console/tournaments/${id}/start`} class="inline">
            <Csrf token={csrf} />
            <button type="submit">Start now</button>
          </form>
        )}
        {may.moderate && cancellable && <ConfirmButton href={`/console/tournaments/${id}/cancel`} label="Cancel tournament" />}
        {may.fund && !OVER.has(tournament.status) && (
          <form method="post" action={`/console/tournaments/${id}/fund`} class="row">
            <Csrf token={csrf} />
            <label>
              Fund the prize pool with
              <input name="amount" required inputMode="decimal" placeholder="100.00" />
            </label>
            <label>
              Reference (funds once)
              <input name="reference" required maxlength={128} value={`console-${crypto.randomUUID().slice(0, 8)}`} />
            </label>
            <button type="submit">Fund</button>
          </form>
        )}
      </div>
    </section>
  )
}

function Standings({ tournament, seats }: { tournament: Tournament; seats: Map<string, Seat> }) {
  if (tournament.standings.length === 0) return null
  return (
    <section aria-labelledby="standings">
      <h2 id="standings">Standings</h2>
      <table>
        <thead>
          <tr>
            <th scope="col" class="num">
              Rank
            </th>
            <th scope="col">Player</th>
            <th scope="col" class="num">
              Wins
            </th>
            <th scope="col" class="num">
              Draws
            </th>
            <th scope="col" class="num">
              Losses
            </th>
            <th scope="col" class="num">
              Points
            </th>
          </tr>
        </thead>
        <tbody>
          {tournament.standings.map((s) => (
            <tr>
              <td class="num">{s.rank}</td>
              <th scope="row">{nameOf(seats, s.participantId)}</th>
              <td class="num">{s.wins}</td>
              <td class="num">{s.draws}</td>
              <td class="num">{s.losses}</td>
              <td class="num">{s.points}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  )
}

function Participants({ tournament, seats, csrf, may }: DetailProps) {
  const running = tournament.status === 'running'
  return (
    <section aria-labelledby="participants">
      <h2 id="participants">Participants</h2>
      {tournament.participants.length === 0 ? (
        <p>Nobody yet.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col" class="num">
                Seed
              </th>
              <th scope="col">Player</th>
              <th scope="col">Registered</th>
              <th scope="col">Checked in</th>
              <th scope="col">Disqualified</th>
              {may.moderate && running && <th scope="col">Disqualify</th>}
            </tr>
          </thead>
          <tbody>
            {tournament.participants.map((p) => (
              <tr>
                <td class="num">{p.seed}</td>
                <th scope="row">
                  <a href={`/console/users/${p.userId}`}>{seats.get(p.id)?.name ?? p.userId}</a>
                </th>
                <td>{p.registeredAt ? <When at={p.registeredAt} /> : <span class="muted">listed</span>}</td>
                <td>
                  <When at={p.checkedInAt} />
                </td>
                <td>
                  <When at={p.disqualifiedAt} />
                </td>
                {may.moderate && running && (
                  <td>
                    {p.disqualifiedAt === null && <ConfirmButton href={`/console/tournaments/${tournament.id}/participants/${p.id}/disqualify`} label="Disqualify" ariaLabel={`Disqualify ${seats.get(p.id)?.name ?? p.userId}`} />}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}

/** A decided match's result: its winner (`won` said where the column is a result, not a winner), a draw, or a bye. */
function outcomeText(match: Match, seats: Map<string, Seat>, asResult = false): string {
  if (match.status !== 'decided') return '—'
  if (match.outcome === 'DRAW') return 'draw'
  if (match.slot1ParticipantId === null || match.slot2ParticipantId === null) return `${nameOf(seats, match.winnerParticipantId)} (bye)`
  return asResult ? `${nameOf(seats, match.winnerParticipantId)} won` : nameOf(seats, match.winnerParticipantId)
}

function CorrectForm({ match, seats, csrf, tournamentId, disqualified }: { match: Match; seats: Map<string, Seat>; csrf: string; tournamentId: string; disqualified: Set<string> }) {
  // The other player (or either after a draw) is who may be made the winner; never a disqualified one (the service refuses it).
  const candidates = [match.slot1ParticipantId, match.slot2ParticipantId].filter((p): p is string => p !== null && p !== match.winnerParticipantId && !disqualified.has(p))
  if (candidates.length === 0) return <span class="muted">the other player is disqualified</span>
  return (
    <form method="post" action={`/console/tournaments/${tournamentId}/matches/${match.id}/correct`} class="row">
      <Csrf token={csrf} />
      <label>
        New winner <span class="sr-only">{`of ${matchLabel(match)}`}</span>
        <select name="winnerParticipantId">
          {candidates.map((p) => (
            <option value={p}>{nameOf(seats, p)}</option>
          ))}
        </select>
      </label>
      <label>
        Reason <span class="sr-only">{`for correcting ${matchLabel(match)}`}</span>
        <input name="reason" required maxlength={500} />
      </label>
      <button type="submit" class="secondary" aria-label={`Correct ${matchLabel(match)}`}>
        Correct
      </button>
    </form>
  )
}

/** Whether the format feeds results into later matches (a bracket: winner and loser go somewhere), or only into the standings (round robin, Swiss). */
function isBracket(format: Tournament['format']): boolean {
  return engineOf(format).plays === 'bracket'
}

/**
 * Whether a correction of `m` can still be taken (docs/tournaments.md,
 * "Corrections"), as far as the page can tell: a decided match with two
 * players; in a bracket, while the matches it fed are undecided; in Swiss,
 * while no later round has a played result; in round robin, always. (A claim
 * already made in a fed match also makes it too late: the service says so.)
 */
function correctable(tournament: Tournament, m: Match): boolean {
  if (m.status !== 'decided' || m.slot1ParticipantId === null || m.slot2ParticipantId === null) return false
  const byId = new Map(tournament.matches.map((x) => [x.id, x]))
  switch (engineOf(tournament.format).plays) {
    case 'all-pairs':
      return true
    case 'paired-rounds':
      return !tournament.matches.some((x) => x.round > m.round && x.status === 'decided' && x.slot1ParticipantId !== null && x.slot2ParticipantId !== null)
    case 'bracket':
      return [m.nextMatchId, m.loserNextMatchId].every((id) => id === null || byId.get(id)?.status !== 'decided')
  }
}

function Matches({ tournament, seats, csrf, may }: DetailProps) {
  if (tournament.matches.length === 0) return <p>No matches yet: the bracket is built at the start.</p>
  const label = new Map(tournament.matches.map((m) => [m.id, matchLabel(m)]))
  const bracket = isBracket(tournament.format)
  // Columns only where they say something: where a winner and a loser go exists in brackets alone (a loser goes on only in double elimination or to a third-place match).
  const winnerGoes = bracket
  const loserGoes = bracket && tournament.matches.some((m) => m.loserNextMatchId !== null)
  const open = may.moderate && (tournament.status === 'running' || tournament.status === 'finalizing')
  const canCorrect = new Set(open ? tournament.matches.filter((m) => correctable(tournament, m)).map((m) => m.id) : [])
  const disqualified = new Set(tournament.participants.filter((p) => p.disqualifiedAt !== null).map((p) => p.id))
  return (
    <section aria-labelledby="matches">
      <h2 id="matches">Matches</h2>
      <table>
        {!bracket && (
          <caption class="muted">
            By round (Round 2 #1: round 2, first match). Each result counts in the <a href="#standings">standings</a>; nothing else follows from it.
          </caption>
        )}
        <thead>
          <tr>
            <th scope="col">Match</th>
            <th scope="col">Status</th>
            <th scope="col">Player 1</th>
            <th scope="col">Player 2</th>
            <th scope="col">{bracket ? 'Winner' : 'Result'}</th>
            {winnerGoes && <th scope="col">Winner goes to</th>}
            {loserGoes && <th scope="col">Loser goes to</th>}
            {canCorrect.size > 0 && <th scope="col">Correct the result</th>}
          </tr>
        </thead>
        <tbody>
          {tournament.matches.map((m) => (
            <tr>
              <th scope="row">{matchLabel(m)}</th>
              <td>{m.status === 'disputed' ? <a href="/console/disputes">disputed</a> : m.status}</td>
              <td>{nameOf(seats, m.slot1ParticipantId)}</td>
              <td>{nameOf(seats, m.slot2ParticipantId)}</td>
              <td>{outcomeText(m, seats, !bracket)}</td>
              {winnerGoes && <td>{m.nextMatchId ? label.get(m.nextMatchId) : '—'}</td>}
              {loserGoes && <td>{m.loserNextMatchId ? label.get(m.loserNextMatchId) : '—'}</td>}
              {canCorrect.size > 0 && <td>{canCorrect.has(m.id) && <CorrectForm match={m} seats={seats} csrf={csrf} tournamentId={tournament.id} disqualified={disqualified} />}</td>}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  )
}

export function TournamentDetail(props: DetailProps) {
  const { tournament, seats } = props
  return (
    <>
      <Facts tournament={tournament} seats={seats} gameName={props.gameName} />
      <Actions tournament={tournament} csrf={props.csrf} may={props.may} />
      {isDrawable(tournament.matches) && (
        <section aria-labelledby="bracket">
          <h2 id="bracket">Bracket</h2>
          <BracketPicture title={`Bracket of ${tournament.name} (${formatName(tournament.format)})`} matches={tournament.matches} seats={seats} />
        </section>
      )}
      <Standings tournament={tournament} seats={seats} />
      <Participants {...props} />
      <Matches {...props} />
    </>
  )
}
