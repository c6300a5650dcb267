// Matchmaking in the console (contract §16, issue 39):
// - /console/games/:id/queues (viewer): the game's queues with their settings
//   and how many tickets wait in each now; an admin opens one, changes one
//   (the same MatchmakingService.createQueue/updateQueue the admin API calls,
//   audited `queue.create`/`queue.update`) or closes one through a
//   confirmation page (its waiting tickets are cancelled: `queue.close`).
// - /console/games/:id/challenge-rake (admin, a form on the game's page): the
//   game's rake on staked challenges (GamesService.updateGame, `game.update`).
// - /console/matchmaking (viewer): open challenges of every game, and the
//   stakes held: matches of a queue or a challenge whose stakes are in escrow,
//   not yet paid or refunded, each linked to its page.
// - /console/matches/:id (viewer): any match as GET /api/v1/admin/matches/{id}
//   shows it; a moderator cancels a queue's or a challenge's match not decided
//   (both stakes refunded; a confirmation page with the reason the players
//   read), or resolves it from here when it is disputed (the disputes page's
//   form).
import { t } from 'elysia'
import type { Services } from '../../services'
import { AppError } from '../../shared/errors'
import type { Challenge, MatchView, Queue } from '../../modules/matchmaking/model'
import { checkedCreateQueue, checkedUpdateQueue } from '../../modules/matchmaking/queue-input'
import { invalid } from '../../modules/games/registration'
import { Csrf } from '../layout'
import { redirect } from '../http'
import { attempt, consolePage, NOTICE_FIELDS, Time } from '../page'
import { ConfirmButton, confirmPage } from '../confirm'
import { consoleRoute, consoleSession } from '../session'
import { can, IdParams, Reason, type ConsoleApp } from './ops-kit'
import { EvidenceList } from './evidence'

const SECTION = '/console/matchmaking'
const GAMES = '/console/games'

const gamePath = (id: string) => `${GAMES}/${encodeURIComponent(id)}`
export const queuesPath = (gameId: string) => `${gamePath(gameId)}/queues`
const queuePath = (gameId: string, name: string) => `${queuesPath(gameId)}/${encodeURIComponent(name)}`
export const matchPath = (matchId: string) => `/console/matches/${encodeURIComponent(matchId)}`

const QueueParams = t.Object({ id: t.String({ minLength: 1, maxLength: 64 }), name: t.String({ minLength: 1, maxLength: 64 }) })

/** The queue form's fields, as a browser posts them (every value a string; a checkbox absent when not ticked). */
const QueueFields = {
  _csrf: t.String({ maxLength: 128 }),
  rated: t.Optional(t.String({ maxLength: 8 })),
  stake: t.Optional(t.String({ maxLength: 40 })),
  rake: t.Optional(t.String({ maxLength: 10 })),
  windowInitial: t.String({ maxLength: 20 }),
  windowWiden: t.String({ maxLength: 20 }),
  windowMax: t.String({ maxLength: 20 }),
  readyCheckS: t.String({ maxLength: 20 }),
  matchDeadlineS: t.Optional(t.String({ maxLength: 20 })),
  rematchCooldownS: t.Optional(t.String({ maxLength: 20 })),
  draws: t.Union([t.Literal('replay'), t.Literal('result')]),
}
type QueueForm = { rated?: string; stake?: string; rake?: string; windowInitial: string; windowWiden: string; windowMax: string; readyCheckS: string; matchDeadlineS?: string; rematchCooldownS?: string; draws: 'replay' | 'result' }

/**
 * The form's fields as the admin API's body: every setting given (an empty
 * stake or deadline: none; an empty cooldown or rake: 0). What is not a
 * number, or out of the API's bounds, is refused as the route refuses it
 * (422, the field named); the rules between fields are the service's.
 */
function queueBodyOf(form: QueueForm): Record<string, unknown> {
  const number = (value: string) => (value.trim() === '' ? value : Number(value.trim()))
  const optional = (value: string | undefined) => (value === undefined || value.trim() === '' ? null : value.trim())
  const deadline = optional(form.matchDeadlineS)
  const cooldown = optional(form.rematchCooldownS)
  return {
    rated: form.rated === 'on',
    stake: optional(form.stake),
    rake: optional(form.rake) ?? '0',
    window: { initial: number(form.windowInitial), widenPerSecond: number(form.windowWiden), max: number(form.windowMax) },
    readyCheckS: number(form.readyCheckS),
    matchDeadlineS: deadline === null ? null : number(deadline),
    rematchCooldownS: cooldown === null ? 0 : number(cooldown),
    draws: form.draws,
  }
}

function seconds(s: number | null): string {
  return s === null ? '—' : `${s} s`
}

/** A queue's settings form: empty for a new queue, its values to change one. */
function QueueFormFields({ queue }: { queue: Queue | null }) {
  return (
    <>
      <label class="choice">
        <input type="checkbox" name="rated" checked={queue?.rated ?? false} /> Rated (its matches update ratings)
      </label>
      <label>
        Stake each player puts in (empty: none)
        <input name="stake" inputmode="decimal" maxlength={40} value={queue?.stake ?? ''} />
      </label>
      <label>
        Rake, the house's share of the pot (0 to 0.5; needs a stake)
        <input name="rake" inputmode="decimal" maxlength={10} value={queue?.rake ?? '0'} />
      </label>
      <label>
        Window: initial half-width (display points)
        <input name="windowInitial" inputmode="decimal" required maxlength={20} value={String(queue?.window.initial ?? 100)} />
      </label>
      <label>
        Window: widening each second waited
        <input name="windowWiden" inputmode="decimal" required maxlength={20} value={String(queue?.window.widenPerSecond ?? 5)} />
      </label>
      <label>
        Window: largest half-width
        <input name="windowMax" inputmode="decimal" required maxlength={20} value={String(queue?.window.max ?? 400)} />
      </label>
      <label>
        Ready check (seconds, 5–600)
        <input name="readyCheckS" type="number" min={5} max={600} required value={String(queue?.readyCheckS ?? 30)} />
      </label>
      <label>
        Match deadline (seconds to play once ready, 60–604800; empty: none)
        <input name="matchDeadlineS" type="number" min={60} max={604800} value={queue?.matchDeadlineS == null ? '' : String(queue.matchDeadlineS)} />
      </label>
      <label>
        Rematch cooldown (seconds before the same two are paired again)
        <input name="rematchCooldownS" type="number" min={0} max={604800} value={String(queue?.rematchCooldownS ?? 0)} />
      </label>
      <label>
        An agreed draw
        <select name="draws">
          <option value="replay" selected={(queue?.draws ?? 'replay') === 'replay'}>
            replay: played again
          </option>
          <option value="result" selected={queue?.draws === 'result'}>
            result: decides the match (stakes refunded)
          </option>
        </select>
      </label>
    </>
  )
}

function QueuesTable({ gameId, queues, open, mayAct, csrf }: { gameId: string; queues: Queue[]; open: Map<string, number>; mayAct: boolean; csrf: string }) {
  if (queues.length === 0) return <p>No queue in this game.</p>
  return (
    <table>
      <caption class="muted">The game's queues by name; "Waiting" counts the open tickets now</caption>
      <thead>
        <tr>
          <th scope="col">Queue</th>
          <th scope="col" class="num">
            Waiting
          </th>
          <th scope="col">Rated</th>
          <th scope="col">Stake</th>
          <th scope="col">Rake</th>
          <th scope="col">Window</th>
          <th scope="col">Ready check</th>
          <th scope="col">Deadline</th>
          <th scope="col">Cooldown</th>
          <th scope="col">Draws</th>
          <th scope="col">Opened</th>
          {mayAct && <th scope="col">Change</th>}
        </tr>
      </thead>
      <tbody>
        {queues.map((q) => (
          <tr>
            <th scope="row">
              <span class="named">
                {q.name}
                {q.closedAt !== null && <span class="muted"> (closed)</span>}
                <small class="mono id">{q.id}</small>
              </span>
            </th>
            <td class="num">{q.closedAt === null ? (open.get(q.id) ?? 0) : <span class="muted">—</span>}</td>
            <td>{q.rated ? 'yes' : 'no'}</td>
            <td>{q.stake ?? <span class="muted">none</span>}</td>
            <td>{q.rake}</td>
            <td>{`±${q.window.initial}, +${q.window.widenPerSecond}/s, up to ±${q.window.max}`}</td>
            <td>{seconds(q.readyCheckS)}</td>
            <td>{seconds(q.matchDeadlineS)}</td>
            <td>{seconds(q.rematchCooldownS)}</td>
            <td>{q.draws}</td>
            <td>{q.closedAt === null ? <Time iso={q.createdAt} /> : <>closed <Time iso={q.closedAt} /></>}</td>
            {mayAct && (
              <td>
                {q.closedAt === null && (
                  <>
                    <details>
                      <summary>Settings</summary>
                      <form method="post" action={queuePath(gameId, q.name)} class="stack" aria-label={`Change ${q.name}`}>
                        <Csrf token={csrf} />
                        <QueueFormFields queue={q} />
                        <button type="submit">{`Save ${q.name}`}</button>
                      </form>
                    </details>
                    <ConfirmButton href={`${queuePath(gameId, q.name)}/close`} label="Close" ariaLabel={`Close the queue ${q.name}`} />
                  </>
                )}
              </td>
            )}
          </tr>
        ))}
      </tbody>
    </table>
  )
}

function CreateQueueForm({ gameId, csrf }: { gameId: string; csrf: string }) {
  return (
    <form method="post" action={queuesPath(gameId)} class="stack" aria-labelledby="new-queue">
      <h3 id="new-queue">Open a queue</h3>
      <Csrf token={csrf} />
      <label>
        Name (letters, digits, _ . -)
        <input name="name" required minlength={1} maxlength={64} pattern="[A-Za-z0-9][A-Za-z0-9_.\-]*" />
      </label>
      <QueueFormFields queue={null} />
      <button type="submit">Open the queue</button>
    </form>
  )
}

function Players({ match }: { match: MatchView }) {
  return (
    <>
      {match.players.map((p, i) => (
        <>
          {i > 0 && ' vs '}
          <a href={`/console/users/${p.userId}`} title={p.userId}>
            {p.username}
          </a>
        </>
      ))}
    </>
  )
}

function ChallengesTable({ challenges, games }: { challenges: Challenge[]; games: Map<string, string> }) {
  if (challenges.length === 0) return <p>No challenge is open.</p>
  return (
    <table>
      <caption class="muted">Oldest first: each waits for its opponent to accept or decline until it expires</caption>
      <thead>
        <tr>
          <th scope="col">Game</th>
          <th scope="col">Challenger</th>
          <th scope="col">Opponent</th>
          <th scope="col">Stake</th>
          <th scope="col">Made</th>
          <th scope="col">Expires</th>
        </tr>
      </thead>
      <tbody>
        {challenges.map((c) => (
          <tr>
            <td>
              <a href={queuesPath(c.gameId)}>{games.get(c.gameId) ?? c.gameId}</a>
            </td>
            <th scope="row">
              <span class="named">
                <a href={`/console/users/${c.challenger.userId}`}>{c.challenger.username}</a>
                <small class="mono id">{c.id}</small>
              </span>
            </th>
            <td>
              <a href={`/console/users/${c.opponent.userId}`}>{c.opponent.username}</a>
            </td>
            <td>{c.stake ?? <span class="muted">none</span>}</td>
            <td>
              <Time iso={c.createdAt} />
            </td>
            <td>
              <Time iso={c.expiresAt} />
              {c.status !== 'open' && <span class="muted"> ({c.status})</span>}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

function StakesTable({ matches, games, mayAct }: { matches: MatchView[]; games: Map<string, string>; mayAct: boolean }) {
  if (matches.length === 0) return <p>No stake is held: every staked match is paid or refunded.</p>
  return (
    <table>
      <caption class="muted">Oldest first: matches of a queue or a challenge whose stakes are in escrow, not yet paid or refunded</caption>
      <thead>
        <tr>
          <th scope="col">Match</th>
          <th scope="col">Game</th>
          <th scope="col">Players</th>
          <th scope="col">Status</th>
          <th scope="col">Stake each</th>
          <th scope="col">Rake</th>
          <th scope="col">Made</th>
          {mayAct && <th scope="col">Cancel</th>}
        </tr>
      </thead>
      <tbody>
        {matches.map((m) => (
          <tr>
            <th scope="row">
              <span class="named">
                <a href={matchPath(m.id)}>{m.kind === 'queue' ? `queue ${m.queue ?? ''}` : 'challenge'}</a>
                <small class="mono id">{m.id}</small>
              </span>
            </th>
            <td>{games.get(m.gameId) ?? m.gameId}</td>
            <td>
              <Players match={m} />
            </td>
            <td>{m.status}</td>
            <td>{m.stake}</td>
            <td>{m.rake}</td>
            <td>
              <Time iso={m.createdAt} />
            </td>
            {mayAct && (
              <td>
                <ConfirmButton href={`${matchPath(m.id)}/cancel`} label="Cancel" ariaLabel={`Cancel the match ${m.id}`} />
              </td>
            )}
          </tr>
        ))}
      </tbody>
    </table>
  )
}

const cancellable = (m: MatchView) => m.tournamentId === null && m.status !== 'decided' && m.status !== 'cancelled'

export function matchmakingPages(services: Services) {
  const { matchmaking, challenges, operations, games, storage } = services
  const nameOf = async (gameId: string) => {
    const name = await operations.gameName(gameId)
    if (name === null) throw new AppError('not_found', 'No such game')
    return name
  }
  const gameNames = async (ids: Iterable<string>) => {
    const names = new Map<string, string>()
    for (const id of new Set(ids)) names.set(id, (await operations.gameName(id)) ?? id)
    return names
  }
  return (app: ConsoleApp) =>
    app
      .get(
        '/games/:id/queues',
        async ({ request, params, query }) => {
          const name = await nameOf(params.id)
          const [{ queues }, counts] = await Promise.all([matchmaking.queues(params.id, query.closed === 'include'), storage.read.matchmaking.countOpenTickets()])
          const open = new Map(counts.map((c) => [c.queueId, c.open]))
          const mayAct = can(request, 'admin')
          const csrf = consoleSession(request).csrf
          return consolePage(request, { title: `Queues of ${name}`, section: GAMES, query }, (
            <>
              <p>
                <a href={gamePath(params.id)}>{name}</a> · <a href={SECTION}>Open challenges and stakes held</a> ·{' '}
                {query.closed === 'include' ? <a href={queuesPath(params.id)}>Open queues only</a> : <a href={`${queuesPath(params.id)}?closed=include`}>With closed queues</a>}
              </p>
              <section aria-labelledby="queues">
                <h2 id="queues">Queues</h2>
                <QueuesTable gameId={params.id} queues={queues} open={open} mayAct={mayAct} csrf={csrf} />
                {mayAct ? <CreateQueueForm gameId={params.id} csrf={csrf} /> : <p class="muted">Opening, changing and closing queues needs the admin role.</p>}
              </section>
            </>
          ))
        },
        { params: IdParams, query: t.Object({ closed: t.Optional(t.Literal('include')), ...NOTICE_FIELDS }), ...consoleRoute('viewer') },
      )
      .post(
        '/games/:id/queues',
        ({ request, params, body }) =>
          attempt(request, `${queuesPath(params.id)}#new-queue`, async () => {
            await matchmaking.createQueue(params.id, checkedCreateQueue({ name: body.name.trim(), ...queueBodyOf(body) }), consoleSession(request).actor)
            return redirect(`${queuesPath(params.id)}#queues`, 'queue_created')
          }),
        { params: IdParams, body: t.Object({ name: t.String({ minLength: 1, maxLength: 64 }), ...QueueFields }), ...consoleRoute('admin') },
      )
      .post(
        '/games/:id/queues/:name',
        ({ request, params, body }) =>
          attempt(request, `${queuesPath(params.id)}#queues`, async () => {
            await matchmaking.updateQueue(params.id, params.name, checkedUpdateQueue(queueBodyOf(body)), consoleSession(request).actor)
            return redirect(`${queuesPath(params.id)}#queues`, 'queue_updated')
          }),
        { params: QueueParams, body: t.Object(QueueFields), ...consoleRoute('admin') },
      )
      // The confirmation step of closing a queue: how many tickets it cancels now. Changes nothing.
      .get(
        '/games/:id/queues/:name/close',
        async ({ request, params, query }) => {
          const game = await nameOf(params.id)
          const queue = (await matchmaking.queues(params.id, false)).queues.find((q) => q.name === params.name)
          if (queue === undefined) throw new AppError('not_found', 'No such queue')
          const waiting = (await storage.read.matchmaking.countOpenTickets()).find((c) => c.queueId === queue.id)?.open ?? 0
          return confirmPage(request, {
            title: `Close the queue ${queue.name} of ${game}?`,
            section: GAMES,
            query,
            consequences: [
              `It takes no more tickets. ${waiting === 1 ? 'The 1 ticket waiting in it is' : `The ${waiting} tickets waiting in it are`} cancelled; each player is told (ticket.cancelled, queue_closed).`,
              'Matches it already made go on, with their stakes and terms.',
              'A closed queue is not opened again: open a new one (the name is free once this one is closed).',
            ],
            action: `${queuePath(params.id, queue.name)}/close`,
            submit: `Close ${queue.name}`,
            back: `${queuesPath(params.id)}#queues`,
          })
        },
        { params: QueueParams, query: t.Object(NOTICE_FIELDS), ...consoleRoute('admin') },
      )
      .post(
        '/games/:id/queues/:name/close',
        ({ request, params }) =>
          attempt(request, `${queuesPath(params.id)}#queues`, async () => {
            await matchmaking.closeQueue(params.id, params.name, consoleSession(request).actor)
            return redirect(`${queuesPath(params.id)}#queues`, 'queue_closed')
          }),
        { params: QueueParams, body: t.Object({ _csrf: t.String({ maxLength: 128 }) }), ...consoleRoute('admin') },
      )
      .post(
        '/games/:id/challenge-rake',
        ({ request, params, body }) =>
          attempt(request, `${gamePath(params.id)}#matchmaking`, async () => {
            await games.updateGame(params.id, { challengeRake: body.challengeRake.trim() }, consoleSession(request).actor)
            return redirect(`${gamePath(params.id)}#matchmaking`, 'challenge_rake_set')
          }),
        { params: IdParams, body: t.Object({ _csrf: t.String({ maxLength: 128 }), challengeRake: t.String({ minLength: 1, maxLength: 10 }) }), ...consoleRoute('admin') },
      )
      .get(
        '/matchmaking',
        async ({ request, query }) => {
          const [open, held] = await Promise.all([challenges.open(), matchmaking.stakesHeld()])
          const names = await gameNames([...open.map((c) => c.gameId), ...held.map((m) => m.gameId)])
          return consolePage(request, { title: 'Matchmaking', section: SECTION, query }, (
            <>
              <p class="muted">A game's queues are on its page (Games &amp; keys, then the game, then Queues).</p>
              <section aria-labelledby="stakes-held">
                <h2 id="stakes-held">Stakes held</h2>
                <StakesTable matches={held} games={names} mayAct={can(request, 'moderator')} />
              </section>
              <section aria-labelledby="open-challenges">
                <h2 id="open-challenges">Open challenges</h2>
                <ChallengesTable challenges={open} games={names} />
              </section>
            </>
          ))
        },
        { query: t.Object(NOTICE_FIELDS), ...consoleRoute('viewer') },
      )
      .get(
        '/matches/:id',
        async ({ request, params, query }) => {
          const { match } = await matchmaking.match(params.id, null)
          const game = (await operations.gameName(match.gameId)) ?? match.gameId
          const evidence = await services.evidence.ofMatch(match.id)
          const csrf = consoleSession(request).csrf
          const seat = (participantId: string | null) => match.players.find((p) => p.participantId === participantId)?.username ?? '—'
          return consolePage(request, { title: `A ${match.kind} match of ${game}`, section: SECTION, query }, (
            <>
              <p>
                <span class="mono">{match.id}</span>
                {match.tournamentId !== null && (
                  <>
                    {' · '}
                    <a href={`/console/tournaments/${match.tournamentId}`}>its tournament</a>
                  </>
                )}
              </p>
              <dl class="facts">
                <dt>Kind</dt>
                <dd>{match.kind === 'queue' ? `queue ${match.queue ?? ''}` : match.kind === 'challenge' ? `challenge ${match.challengeId ?? ''}` : 'tournament'}</dd>
                <dt>Game</dt>
                <dd>
                  <a href={match.tournamentId === null ? queuesPath(match.gameId) : gamePath(match.gameId)}>{game}</a>
                </dd>
                <dt>Status</dt>
                <dd>{match.status}</dd>
                <dt>Players</dt>
                <dd>
                  {match.players.map((p, i) => (
                    <>
                      {i > 0 && ', '}
                      <a href={`/console/users/${p.userId}`} title={p.userId}>
                        {p.username}
                      </a>
                      {match.status === 'waiting' && <span class="muted">{p.ready ? ' (ready)' : ' (not ready yet)'}</span>}
                    </>
                  ))}
                </dd>
                <dt>Rated</dt>
                <dd>{match.rated ? 'yes' : 'no'}</dd>
                <dt>Stake each</dt>
                <dd>{match.stake ?? 'none'}</dd>
                <dt>Rake</dt>
                <dd>{match.rake}</dd>
                <dt>Made</dt>
                <dd>
                  <Time iso={match.createdAt} />
                </dd>
                <dt>Ready check ends</dt>
                <dd>
                  <Time iso={match.readyBy} />
                </dd>
                <dt>Deadline</dt>
                <dd>
                  <Time iso={match.deadline} />
                </dd>
                <dt>Decision</dt>
                <dd>
                  {match.decision === null ? (
                    <span class="muted">—</span>
                  ) : match.decision.outcome === 'DRAW' ? (
                    <>a draw</>
                  ) : (
                    <>
                      {`${seat(match.decision.winnerParticipantId)} won (${match.decision.decidedBy}) at `}
                      <Time iso={match.decision.decidedAt} />
                    </>
                  )}
                </dd>
              </dl>
              {can(request, 'moderator') && match.status === 'disputed' && (
                <form method="post" action={`/console/disputes/${encodeURIComponent(match.id)}/resolve`} class="row" aria-label="Resolve the dispute">
                  <Csrf token={csrf} />
                  <fieldset>
                    <legend>Winner</legend>
                    {match.players.map((p) => (
                      <label class="choice">
                        <input type="radio" name="winnerParticipantId" value={p.participantId} required /> {p.username}
                      </label>
                    ))}
                  </fieldset>
                  <button type="submit">Resolve</button>
                </form>
              )}
              {can(request, 'moderator') && cancellable(match) && <ConfirmButton href={`${matchPath(match.id)}/cancel`} label="Cancel the match" />}
              <section aria-labelledby="evidence">
                <h2 id="evidence">Evidence</h2>
                <EvidenceList evidence={evidence} players={match.players} />
              </section>
            </>
          ))
        },
        { params: IdParams, query: t.Object(NOTICE_FIELDS), ...consoleRoute('viewer') },
      )
      // The confirmation step of cancelling a match: who gets what back. Changes nothing.
      .get(
        '/matches/:id/cancel',
        async ({ request, params, query }) => {
          const { match } = await matchmaking.match(params.id, null)
          if (!cancellable(match)) throw new AppError('conflict', match.tournamentId !== null ? "A tournament's match is not cancelled alone: cancel the tournament" : `Match is ${match.status}`)
          const names = match.players.map((p) => p.username).join(' and ')
          return confirmPage(request, {
            title: `Cancel the ${match.kind} match of ${names}?`,
            section: SECTION,
            query,
            consequences: [
              match.stake === null ? 'The match has no stake: nothing is refunded.' : `Each player's stake of ${match.stake} goes back to their wallet from the match's escrow.`,
              `The match ends without a result (status cancelled); ${names} are told (match.cancelled), with the reason below.`,
              'A cancelled match cannot be played again.',
            ],
            action: `${matchPath(match.id)}/cancel`,
            submit: 'Cancel the match',
            back: matchPath(match.id),
            fields: (
              <label>
                Reason (the players read it)
                <textarea name="reason" required minlength={1} maxlength={500} />
              </label>
            ),
          })
        },
        { params: IdParams, query: t.Object(NOTICE_FIELDS), ...consoleRoute('moderator') },
      )
      .post(
        '/matches/:id/cancel',
        ({ request, params, body }) =>
          attempt(request, matchPath(params.id), async () => {
            const reason = body.reason.trim()
            if (reason === '') throw invalid([{ path: 'body/reason', message: 'Say why: the players read it' }])
            await matchmaking.cancel(params.id, reason, consoleSession(request).actor)
            return redirect(`${SECTION}#stakes-held`, 'match_cancelled')
          }),
        { params: IdParams, body: t.Object({ _csrf: t.String({ maxLength: 128 }), reason: Reason }), ...consoleRoute('moderator') },
      )
}
