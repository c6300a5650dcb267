// The format engine (issue 19): every tournament format as pure functions over
// the tournament's match records. No storage, no clock, no ids: a match is
// named by its `key` (bracket, round and position: unique in a tournament), so
// the services map keys to stored match ids and back. The services drive it:
// - `start` gives the matches known when the tournament starts;
// - once they have stored a decision, `afterDecision` tells them what follows
//   (slots to fill, matches that open, matches decided without play, matches to
//   create, whether the tournament is finished);
// - `disqualify` and `correct` do the same for an operator's action;
// - `standings` reads the table off the matches (contract §9).
// Every answer is a `Step`; `applyStep` applies one to a list of matches the
// way the services must apply it to the stored rows (tests drive the engine
// through it).
//
// The services drive it through src/modules/games/progress.ts, which maps keys
// to stored rows and a Step to store writes and events.

import type { TProperties } from '@sinclair/typebox'

// The names of the formats and of their brackets are the engines' own: the
// registry (engines.ts) derives FormatName and BracketKind from them, and
// every list outside this folder (the API's schemas, the database's, the
// CLI's and the console's) derives from the registry.
export type { BracketKind, FormatName } from './engines'

export interface FormatOptions {
  /** Single elimination: the semi-final losers play for third place (needs 4 or more players). */
  thirdPlaceMatch?: boolean
  /** Double elimination: `reset` (default) plays a second grand final when the losers-bracket champion wins the first. */
  grandFinal?: 'simple' | 'reset'
  /** Swiss: how many rounds; default ⌈log2 n⌉, at most n − 1. */
  rounds?: number
}

/** The tournament an engine call is about: the participants in seed order (top seed first) and the options. */
export interface FormatContext {
  participants: readonly string[]
  options: FormatOptions
  /** Participants disqualified so far: every later match of theirs is a walkover to the opponent. */
  disqualified?: readonly string[]
}

/** A slot of a match: where a winner (or a loser) goes. */
export interface SlotRef {
  key: string
  slot: 1 | 2
}

/**
 * How a decided match was decided: `played` (a result of the players or the
 * operator), `bye` (one participant, nobody to play), `walkover` (the opponent
 * is disqualified).
 */
export type DecidedBy = 'played' | 'bye' | 'walkover'

export interface EngineMatch {
  /** `${bracket}:${round}:${position}`; see matchKey. */
  key: string
  /** One of its engine's `brackets`. */
  bracket: string
  round: number
  position: number
  slot1: string | null
  slot2: string | null
  /** The services' `disputed` is `running` here: not decided. */
  status: 'waiting' | 'running' | 'decided'
  /** Null when waiting or running, and for a draw. */
  winner: string | null
  /** `DRAW` only in round robin and Swiss; `WIN` for any other decided match. */
  outcome: 'WIN' | 'DRAW' | null
  decidedBy: DecidedBy | null
  /** Where the winner goes. */
  next: SlotRef | null
  /** Where the loser goes (double elimination's drop to the losers bracket, single elimination's semi-final to third place). */
  loserNext: SlotRef | null
}

/** What follows from a decision or an operator action, in the order the services apply it. */
export interface Step {
  /** Matches no longer wanted (a correction in Swiss re-pairs the next round). Applied first. */
  removed: string[]
  /** New matches (a Swiss round, the grand-final reset), as they are to be stored. */
  created: EngineMatch[]
  /** Participants placed into slots of existing matches (a correction may replace one: `participantId` is the new occupant). */
  fills: { key: string; slot: 1 | 2; participantId: string | null }[]
  /** Matches decided without play, in order: walkovers (and a disqualified player's current match). */
  decided: { key: string; winner: string; decidedBy: DecidedBy }[]
  /** Waiting matches whose two players are now known: they become `running`. */
  opened: string[]
  /** The tournament has nothing left to play. */
  finished: boolean
}

export interface StandingRow {
  participantId: string
  /** 1..n, distinct: a total order (tie-breaks per format, docs/decisions.md). */
  rank: number
  wins: number
  draws: number
  losses: number
  points: number
}

/** A problem with a field of a tournament's creation body: `path` as the service reports it (`body/options/rounds`). */
export interface OptionProblem {
  path: string
  message: string
}

/**
 * A format: what the rest of the code asks of it (declared here, so no file
 * outside this folder names a format), then the engine functions.
 */
export interface FormatEngine<Name extends string = string, Brackets extends readonly string[] = readonly string[], Options extends TProperties = TProperties> {
  /** The name a tournament stores and the API speaks. */
  readonly name: Name
  /** What operators read (the console's list). */
  readonly label: string
  /** The brackets its matches belong to, in the order they are played (and listed). */
  readonly brackets: Brackets
  /**
   * How its matches come about: `bracket`, a result feeds later matches (the
   * winner, maybe the loser, goes on); `all-pairs`, every match is known from
   * the start and results feed only the standings; `paired-rounds`, each
   * round is paired from the results so far, so a player whose matches are
   * all decided may still be in.
   */
  readonly plays: 'bracket' | 'all-pairs' | 'paired-rounds'
  /** Whether an agreed draw is a result (contract §9); where it is not, the match is played again. */
  readonly drawsAreResults: boolean
  /**
   * What a decision's `afterDecision` must be given: `neighbours`, the match,
   * where its winner and loser go and the matches that feed nothing (every
   * match when someone is disqualified: walkovers may cascade); `all-decided`,
   * nothing follows while a match is undecided, then every match.
   */
  readonly afterDecisionNeeds: 'neighbours' | 'all-decided'
  /** At most this many players (below every format's 1024), with the problem a larger tournament is told. */
  readonly maxPlayers?: { readonly limit: number; readonly problem: string }
  /** Its own creation options, as TypeBox properties of the API's TournamentOptions (their descriptions say whose they are). */
  readonly options: Options
  /**
   * Problems with the values of its own options for `players` participants
   * (the listed ones, or at most `maxPlayers` of a registration). Called
   * whenever one of its options is given, whatever the format.
   */
  optionProblems?(options: FormatOptions, players: number): OptionProblem[]
  /** The options it plays with once `players` are known (a registration may fill less than asked for); the stored options otherwise. */
  fitOptions?(options: FormatOptions, players: number): FormatOptions
  /** The matches known at the start: byes decided, matches with both players `running`, the rest `waiting`. */
  start(ctx: FormatContext): EngineMatch[]
  /** What follows once `decidedKey` is decided in `matches` (which already holds the decision). */
  afterDecision(ctx: FormatContext, matches: readonly EngineMatch[], decidedKey: string): Step
  /**
   * `participantId` forfeits: the undecided match they sit in with an opponent
   * goes to the opponent (`walkover`), every later one too. `ctx.disqualified`
   * must already name them.
   */
  disqualify(ctx: FormatContext, matches: readonly EngineMatch[], participantId: string): Step
  /**
   * Changes the winner of decided match `key` (`winner` null: a draw, round
   * robin and Swiss only) while nothing it fed has been played; throws a
   * CorrectionTooLate otherwise. `matches` holds the old result.
   */
  correct(ctx: FormatContext, matches: readonly EngineMatch[], key: string, winner: string | null): Step
  /** True when nothing is left to play. */
  isFinished(ctx: FormatContext, matches: readonly EngineMatch[]): boolean
  /** The table: live for round robin and Swiss, empty for elimination formats until finished. */
  standings(ctx: FormatContext, matches: readonly EngineMatch[]): StandingRow[]
}

export class CorrectionTooLate extends Error {
  constructor(readonly key: string, readonly playedKey: string) {
    super(`match ${key} fed ${playedKey}, which is already played`)
  }
}

export const POINTS = { win: 3, draw: 1, loss: 0 } as const

/** Every format takes 2..1024 distinct participants; a RangeError otherwise. */
export function checkParticipants(ctx: FormatContext): void {
  const n = ctx.participants.length
  if (n < 2 || n > 1024) throw new RangeError(`a tournament takes 2 to 1024 participants, got ${n}`)
  if (new Set(ctx.participants).size !== n) throw new RangeError('a participant is listed twice')
}

export function matchKey(bracket: string, round: number, position: number): string {
  return `${bracket}:${round}:${position}`
}

export function emptyStep(): Step {
  return { removed: [], created: [], fills: [], decided: [], opened: [], finished: false }
}

/** A match with both slots filled (or not): the common shape. */
export function newMatch(bracket: string, round: number, position: number, slot1: string | null, slot2: string | null): EngineMatch {
  return {
    key: matchKey(bracket, round, position),
    bracket,
    round,
    position,
    slot1,
    slot2,
    status: 'waiting',
    winner: null,
    outcome: null,
    decidedBy: null,
    next: null,
    loserNext: null,
  }
}

/** Applies `step` to `matches`, as the services apply it to the stored rows. Pure: returns a new list. */
export function applyStep(matches: readonly EngineMatch[], step: Step): EngineMatch[] {
  if (step.removed.length + step.created.length + step.fills.length + step.decided.length + step.opened.length === 0) return [...matches]
  const removed = new Set(step.removed)
  const byKey = new Map<string, EngineMatch>()
  for (const m of matches) if (!removed.has(m.key)) byKey.set(m.key, { ...m })
  for (const m of step.created) byKey.set(m.key, { ...m })
  for (const f of step.fills) {
    const m = byKey.get(f.key)!
    if (f.slot === 1) m.slot1 = f.participantId
    else m.slot2 = f.participantId
  }
  for (const d of step.decided) {
    const m = byKey.get(d.key)!
    Object.assign(m, { status: 'decided', winner: d.winner, outcome: 'WIN', decidedBy: d.decidedBy })
  }
  for (const key of step.opened) {
    const m = byKey.get(key)!
    if (m.status === 'waiting') m.status = 'running'
  }
  return [...byKey.values()]
}

/** The loser of a decided match with two players and a winner; null otherwise. */
export function loserOf(m: EngineMatch): string | null {
  if (m.status !== 'decided' || m.winner === null || m.slot1 === null || m.slot2 === null) return null
  return m.winner === m.slot1 ? m.slot2 : m.slot1
}

// ---- the shared machinery: a working copy that records what it changes ----

/**
 * A mutable copy of the matches that records every change as a Step. Formats
 * use it to place winners and losers, open matches, decide walkovers (which
 * cascade), and create matches.
 */
/**
 * One change to a tournament in progress, as the Step it makes: `change`
 * applied to a Work over the matches, then whether the tournament is finished.
 */
export function stepOf(
  engine: Pick<FormatEngine, 'isFinished'>,
  ctx: FormatContext,
  matches: readonly EngineMatch[],
  onDecided: (work: Work, m: EngineMatch) => void,
  change: (work: Work) => void,
): Step {
  const work = new Work(ctx, matches, onDecided)
  change(work)
  work.step.finished = engine.isFinished(ctx, work.all())
  return work.step
}

export class Work {
  readonly byKey = new Map<string, EngineMatch>()
  readonly step = emptyStep()
  private readonly dq: Set<string>

  constructor(readonly ctx: FormatContext, matches: readonly EngineMatch[], private readonly onDecided: (work: Work, m: EngineMatch) => void) {
    for (const m of matches) this.byKey.set(m.key, { ...m })
    this.dq = new Set(ctx.disqualified ?? [])
  }

  get(key: string): EngineMatch {
    const m = this.byKey.get(key)
    if (!m) throw new Error(`no match ${key}`)
    return m
  }

  all(): EngineMatch[] {
    return [...this.byKey.values()]
  }

  isDisqualified(p: string): boolean {
    return this.dq.has(p)
  }

  fill(ref: SlotRef, participantId: string | null): void {
    const m = this.get(ref.key)
    if (ref.slot === 1) m.slot1 = participantId
    else m.slot2 = participantId
    this.step.fills.push({ key: ref.key, slot: ref.slot, participantId })
    this.openIfReady(m)
  }

  create(m: EngineMatch): void {
    this.byKey.set(m.key, m)
    this.step.created.push(m)
    this.openIfReady(m)
  }

  remove(key: string): void {
    this.byKey.delete(key)
    const created = this.step.created.findIndex((m) => m.key === key)
    if (created >= 0) this.step.created.splice(created, 1)
    else this.step.removed.push(key)
  }

  /** A waiting match with both players opens, or is a walkover if one of them is disqualified. */
  openIfReady(m: EngineMatch): void {
    if (m.status !== 'waiting' || m.slot1 === null || m.slot2 === null) return
    const out1 = this.dq.has(m.slot1)
    const out2 = this.dq.has(m.slot2)
    if (out1 || out2) {
      // Both out: the better seed's slot takes it (slot 1), so the bracket still moves.
      this.decide(m, out1 && !out2 ? m.slot2 : m.slot1, 'walkover')
      return
    }
    m.status = 'running'
    if (!this.step.created.includes(m)) this.step.opened.push(m.key)
  }

  /** Decides `m` without play and follows it. */
  decide(m: EngineMatch, winner: string, decidedBy: DecidedBy): void {
    Object.assign(m, { status: 'decided', winner, outcome: 'WIN', decidedBy })
    if (!this.step.created.includes(m)) this.step.decided.push({ key: m.key, winner, decidedBy })
    const opened = this.step.opened.indexOf(m.key)
    if (opened >= 0) this.step.opened.splice(opened, 1)
    this.follow(m)
  }

  /** Sends the winner and the loser of decided `m` where they go, then the format's own consequences. */
  follow(m: EngineMatch): void {
    if (m.outcome === 'WIN' && m.winner !== null) {
      if (m.next) this.fill(m.next, m.winner)
      const loser = loserOf(m)
      if (m.loserNext && loser !== null) this.fill(m.loserNext, loser)
    }
    this.onDecided(this, m)
  }

  /** Every undecided match `p` sits in with a known opponent goes to the opponent. */
  forfeitAll(p: string): void {
    for (const m of this.all()) {
      if (m.status === 'decided' || m.slot1 === null || m.slot2 === null) continue
      if (m.slot1 === p || m.slot2 === p) this.decide(m, m.slot1 === p ? m.slot2 : m.slot1, 'walkover')
    }
  }
}

/** The common part of `correct` for bracket formats: refuse if a fed match is played, else swap the fed slots. */
export function correctInBracket(work: Work, key: string, winner: string | null): void {
  const m = work.get(key)
  if (m.status !== 'decided' || m.decidedBy === 'bye') throw new Error(`match ${key} is not a decided, played match`)
  if (winner === null) throw new Error('a draw is no result in an elimination format')
  if (winner !== m.slot1 && winner !== m.slot2) throw new Error(`${winner} does not play in ${key}`)
  for (const ref of [m.next, m.loserNext]) {
    if (!ref) continue
    const fed = work.byKey.get(ref.key)
    if (fed && fed.status === 'decided') throw new CorrectionTooLate(key, ref.key)
  }
  if (winner === m.winner) return
  const loser = winner === m.slot1 ? m.slot2! : m.slot1!
  Object.assign(m, { winner, outcome: 'WIN', decidedBy: 'played' })
  if (m.next) {
    replaceIn(work, m.next, winner)
  }
  if (m.loserNext) replaceIn(work, m.loserNext, loser)
}

function replaceIn(work: Work, ref: SlotRef, participantId: string): void {
  const fed = work.byKey.get(ref.key)
  if (!fed) return
  if (ref.slot === 1) fed.slot1 = participantId
  else fed.slot2 = participantId
  work.step.fills.push({ key: ref.key, slot: ref.slot, participantId })
  work.openIfReady(fed)
}

/** wins, draws, losses of every participant over played and walkover matches (byes count as `byeCounts` says). */
export function tally(participants: readonly string[], matches: readonly EngineMatch[], byeIsWin: boolean): Map<string, { wins: number; draws: number; losses: number }> {
  const t = new Map(participants.map((p) => [p, { wins: 0, draws: 0, losses: 0 }]))
  for (const m of matches) {
    if (m.status !== 'decided') continue
    if (m.decidedBy === 'bye') {
      if (byeIsWin && m.winner) t.get(m.winner)!.wins++
      continue
    }
    if (m.slot1 === null || m.slot2 === null) continue
    if (m.outcome === 'DRAW') {
      t.get(m.slot1)!.draws++
      t.get(m.slot2)!.draws++
    } else if (m.winner) {
      t.get(m.winner)!.wins++
      t.get(m.winner === m.slot1 ? m.slot2 : m.slot1)!.losses++
    }
  }
  return t
}

export function pointsOf(r: { wins: number; draws: number }): number {
  return r.wins * POINTS.win + r.draws * POINTS.draw
}

/** Standings rows from participants already in rank order. */
export function rowsInOrder(ordered: readonly string[], t: Map<string, { wins: number; draws: number; losses: number }>): StandingRow[] {
  return ordered.map((participantId, i) => {
    const r = t.get(participantId)!
    return { participantId, rank: i + 1, wins: r.wins, draws: r.draws, losses: r.losses, points: pointsOf(r) }
  })
}
