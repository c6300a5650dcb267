// A tournament in play, through its format engine (formats/engine.ts). The
// engine is pure and names matches by key (bracket, round, position); this
// file is where keys meet stored rows: it reads a tournament's state, turns the
// engine's answers (a bracket to start, a Step after a decision, a
// disqualification or a correction) into store writes and the status events
// they cause, inside the caller's unit of work, so a half-moved bracket never
// exists.
import type { Transaction } from '../../db/storage'
import { JOB_KINDS } from '../../jobs/queue'
import { newId } from '../../shared/ids'
import { deadlineFrom, scheduleSettle } from './deadlines'
import { emptyStep } from './formats/engine'
import { engineOf, matchKey, type BracketKind, type EngineMatch, type FormatContext, type FormatEngine, type StandingRow, type Step } from './formats/engines'
import { announceDecided, notifyReady } from './match-events'
import type { GamesStore, MatchRecord, Participant, TournamentRecord } from './store'

/** Everything an engine call needs, read in one unit of work. */
export interface TournamentState {
  tournament: TournamentRecord
  engine: FormatEngine
  ctx: FormatContext
  participants: Participant[]
  /** The stored matches by key: all of them, or only those around a decision (`partial`). */
  rows: Map<string, MatchRecord>
  /** Only the matches around one decision were read (advanceAfter): no standings from this. */
  partial?: boolean
}

export function keyOf(row: Pick<MatchRecord, 'bracket' | 'round' | 'position'>): string {
  return matchKey(row.bracket, row.round, row.position)
}

/**
 * The engine's context: participants in seed order, the creation options as
 * the format fits them to the players there are (a registration may fill less
 * than `maxPlayers`: its `fitOptions`), the disqualified.
 */
export function contextOf(tournament: TournamentRecord, participants: readonly Participant[]): FormatContext {
  const stored = { ...(tournament.options ?? {}) }
  const fit = engineOf(tournament.format).fitOptions
  const options = fit ? fit(stored, participants.length) : stored
  return {
    participants: participants.map((p) => p.id),
    options,
    disqualified: participants.filter((p) => p.disqualifiedAt !== null).map((p) => p.id),
  }
}

export async function loadState(games: GamesStore, tournament: TournamentRecord): Promise<TournamentState> {
  const participants = await games.participantsOf(tournament.id)
  const rows = new Map((await games.bracketOf(tournament.id)).map((row) => [keyOf(row), row]))
  return { tournament, engine: engineOf(tournament.format), ctx: contextOf(tournament, participants), participants, rows }
}

/** The stored matches as the engine sees them (a disputed match is running; a cancelled one, never seen by an engine, too). */
export function engineMatches(state: TournamentState): EngineMatch[] {
  const keyById = new Map([...state.rows.values()].map((row) => [row.id, keyOf(row)]))
  // A partial state's rows may point at matches it did not read: named by id, never followed (advanceAfter).
  const ref = (id: string | null, slot: number | null) => (id === null ? null : { key: keyById.get(id) ?? `unread:${id}`, slot: (slot === 2 ? 2 : 1) as 1 | 2 })
  return [...state.rows.values()].map((row) => {
    const decided = row.status === 'decided'
    return {
      key: keyOf(row),
      bracket: row.bracket,
      round: row.round,
      position: row.position,
      slot1: row.slot1ParticipantId,
      slot2: row.slot2ParticipantId,
      status: decided ? 'decided' : row.status === 'waiting' ? 'waiting' : 'running',
      winner: row.winnerParticipantId,
      // Rows decided before the formats issue carry no outcome: every one was a win, a bye when a slot was empty.
      outcome: decided ? (row.outcome ?? 'WIN') : null,
      decidedBy: decided ? (row.decidedBy ?? (row.slot1ParticipantId === null || row.slot2ParticipantId === null ? 'bye' : 'played')) : null,
      next: ref(row.nextMatchId, row.nextSlot),
      loserNext: ref(row.loserNextMatchId, row.loserNextSlot),
    }
  })
}

/** The standings of a tournament (contract §9): as its engine gives them (live where results only feed the table, for a bracket once finished). */
export function standingsOf(state: TournamentState): StandingRow[] {
  if (state.partial) throw new Error('standings need every match')
  return state.engine.standings(state.ctx, engineMatches(state))
}

/**
 * What follows the decision of `match` (already stored), applied: the
 * format engine's `afterDecision` over what it needs, which on most
 * decisions is not the whole bracket, since every decision of a claim reads
 * it (a 256-player single elimination is 255 matches and 256 participants),
 * as the format says (its `afterDecisionNeeds`):
 * - `all-decided`: nothing follows while a match of the tournament is
 *   undecided (a round robin's and a Swiss's matches feed nothing; a Swiss
 *   round is paired once the one before is complete): one count;
 * - `neighbours`, with nobody disqualified: the match, where its winner and
 *   loser go, and the matches that feed nothing (what `isFinished` and the
 *   grand-final reset look at); a disqualified player anywhere can make
 *   walkovers cascade further, so then everything.
 * Anything else, and the standings once finished, read the whole tournament.
 * The tournament row is read locked first: the decisions of one tournament
 * take turns, each seeing the ones before. Answers the step and the
 * tournament as read (the rating of the decision needs its game and options).
 */
export async function advanceAfter(tx: Transaction, match: MatchRecord, now: Date): Promise<{ step: Step; tournament: TournamentRecord }> {
  if (match.tournamentId === null) throw new Error(`match ${match.id} has no tournament to advance`)
  const tournament = (await tx.games.tournament(match.tournamentId))!
  const key = keyOf(match)
  let state: TournamentState
  const engine = engineOf(tournament.format)
  if (engine.afterDecisionNeeds === 'all-decided') {
    if ((await tx.games.countUndecided(tournament.id)) > 0) return { step: emptyStep(), tournament }
    state = await loadState(tx.games, tournament)
  } else if (!(await tx.games.hasDisqualified(tournament.id))) {
    const around = [match.id, match.nextMatchId, match.loserNextMatchId].filter((id): id is string => id !== null)
    const rows = new Map((await tx.games.matchesAround(tournament.id, around)).map((row) => [keyOf(row), row]))
    state = { tournament, engine, ctx: contextOf(tournament, []), participants: [], rows, partial: true }
  } else {
    state = await loadState(tx.games, tournament)
  }
  const step = state.engine.afterDecision(state.ctx, engineMatches(state), key)
  await applyStep(tx, state, step, now)
  return { step, tournament }
}

/** Rows for new engine matches: ids drawn, keys resolved against the stored rows and each other, running ones given `deadline`. */
function rowsFor(state: TournamentState, created: readonly EngineMatch[], now: Date, deadline: Date | null): MatchRecord[] {
  const idOf = new Map([...state.rows.entries()].map(([key, row]) => [key, row.id]))
  for (const m of created) idOf.set(m.key, newId('match'))
  return created.map((m) => ({
    id: idOf.get(m.key)!,
    tournamentId: state.tournament.id,
    gameId: state.tournament.gameId,
    kind: 'tournament',
    createdAt: now,
    // One of its engine's own `brackets`, which BracketKind lists.
    bracket: m.bracket as BracketKind,
    round: m.round,
    position: m.position,
    status: m.status,
    slot1ParticipantId: m.slot1,
    slot2ParticipantId: m.slot2,
    winnerParticipantId: m.winner,
    outcome: m.outcome,
    decidedBy: m.decidedBy,
    nextMatchId: m.next ? idOf.get(m.next.key)! : null,
    nextSlot: m.next?.slot ?? null,
    loserNextMatchId: m.loserNext ? idOf.get(m.loserNext.key)! : null,
    loserNextSlot: m.loserNext?.slot ?? null,
    claimRound: 1,
    decidedAt: m.status === 'decided' ? now : null,
    deadline: m.status === 'running' ? deadline : null,
  }))
}

/** Stores new matches and tells their players: `match.ready` for a running one (with its settle job), `match.decided` (bye) to a bye's winner. */
async function insertMatches(tx: Transaction, state: TournamentState, created: readonly EngineMatch[], now: Date): Promise<MatchRecord[]> {
  if (created.length === 0) return []
  const deadline = deadlineFrom(now, state.tournament.options?.matchDeadlineS)
  const rows = rowsFor(state, created, now, deadline)
  await tx.games.insertBracket(rows)
  for (const row of rows) {
    state.rows.set(keyOf(row), row)
    if (row.status === 'running') {
      await notifyReady(tx, now, row)
      await scheduleSettle(tx, row.id, deadline, now)
    } else if (row.status === 'decided' && row.winnerParticipantId !== null) {
      await announceDecided(tx, now, row, { winnerParticipantId: row.winnerParticipantId, outcome: 'WIN', reason: 'bye' })
    }
  }
  return rows
}

/** Plans and stores the bracket of a tournament starting now (the engine's `start`). */
export async function insertStartingBracket(tx: Transaction, state: TournamentState, now: Date): Promise<void> {
  await insertMatches(tx, state, state.engine.start(state.ctx), now)
}

/**
 * Applies an engine Step to the stored rows, in the order the engine built it
 * (removed, created, fills, decided, opened), with the events each change
 * causes; once nothing is left to play, the tournament goes to finalization
 * with the standings' first as its winner. `state.rows` follows along.
 */
export async function applyStep(tx: Transaction, state: TournamentState, step: Step, now: Date): Promise<void> {
  const row = (key: string) => state.rows.get(key)!
  if (step.removed.length > 0) {
    await tx.matches.deleteMatches(step.removed.map((key) => row(key).id))
    for (const key of step.removed) state.rows.delete(key)
  }
  await insertMatches(tx, state, step.created, now)
  const deadline = deadlineFrom(now, state.tournament.options?.matchDeadlineS)
  for (const fill of step.fills) {
    const match = row(fill.key)
    await tx.matches.fillSlot(match.id, fill.slot, fill.participantId)
    const filled = { ...match, [fill.slot === 1 ? 'slot1ParticipantId' : 'slot2ParticipantId']: fill.participantId }
    state.rows.set(fill.key, filled)
    if (match.status === 'running' || match.status === 'disputed') {
      // A correction seated another player in a match already running (or
      // disputed for want of claims by its deadline): a new round of claims
      // (sessions issued to the one replaced stop working), running again
      // with its deadline restarted, both told it is ready again.
      await tx.matches.setClaimRound(match.id, match.claimRound + 1)
      if (match.status === 'disputed') await tx.matches.openMatch(match.id, deadline)
      else await tx.matches.setDeadline(match.id, deadline)
      state.rows.set(fill.key, { ...filled, status: 'running', claimRound: match.claimRound + 1, deadline })
      await notifyReady(tx, now, filled)
      await scheduleSettle(tx, match.id, deadline, now)
    }
  }
  for (const d of step.decided) {
    const match = row(d.key)
    await tx.matches.markDecided(match.id, { winnerParticipantId: d.winner, outcome: 'WIN', decidedBy: d.decidedBy }, now)
    state.rows.set(d.key, { ...match, status: 'decided', winnerParticipantId: d.winner, outcome: 'WIN', decidedBy: d.decidedBy, decidedAt: now })
    // A walkover is a disqualified opponent's (a no-show is decided by the deadline job itself, not in a step).
    await announceDecided(tx, now, match, { winnerParticipantId: d.winner, outcome: 'WIN', reason: d.decidedBy === 'bye' ? 'bye' : 'disqualified' })
  }
  for (const key of step.opened) {
    const opened = await tx.matches.openMatch(row(key).id, deadline)
    if (!opened) continue
    state.rows.set(key, opened)
    await notifyReady(tx, now, opened)
    await scheduleSettle(tx, opened.id, deadline, now)
  }
  if (step.finished && state.tournament.status === 'running') await markFinished(tx, state, now)
}

/** Nothing is left to play: finalizing, with the standings' first as winner, the finalize job queued, every participant told. */
async function markFinished(tx: Transaction, state: TournamentState, now: Date): Promise<void> {
  const id = state.tournament.id
  // The standings need every match (and every participant): read them all, now that the step is stored.
  const full = state.partial ? await loadState(tx.games, state.tournament) : state
  const winner = standingsOf(full)[0]?.participantId
  if (winner === undefined) throw new Error(`tournament ${id} finished without standings`)
  await tx.games.markFinalizing(id, winner)
  state.tournament = { ...state.tournament, status: 'finalizing', winnerParticipantId: winner }
  await tx.jobs.enqueue(JOB_KINDS.finalizeTournament, { tournamentId: id }, now)
  for (const userId of await tx.games.participantUserIds(id)) {
    await tx.events.append({ userId, topic: 'status', type: 'tournament.finalizing', data: { tournamentId: id, winnerParticipantId: winner } }, now)
  }
}
