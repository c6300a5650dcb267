// A tournament format: how a bracket is laid out, where a decided match sends
// its winner, and how the final places are read off the decided bracket. The
// services never know which format they run: they look it up by the
// tournament's `format` (formats/index.ts) and go through this interface.
// Pure: no storage, no clock (times are passed in).
import type { MatchRecord, TournamentFormatName } from '../store'

export interface Standing {
  participantId: string
  /** 1 for the winner; participants who went out at the same stage share a place. */
  place: number
}

/** Where the winner of a decided match goes. */
export type Advance =
  /** Into a slot of a later match, which opens once both its slots are filled. */
  | { kind: 'next'; matchId: string; slot: 1 | 2 }
  /** Nowhere: this match decides the tournament, which goes to finalization with its winner. */
  | { kind: 'finalize' }

export interface TournamentFormat {
  readonly name: TournamentFormatName
  /**
   * Every match of a new tournament for `participants` (in seed order, top
   * seed first): matches that need no playing (byes) already decided at
   * `now`, matches whose two players are known `running`, the rest `waiting`.
   */
  plan(tournamentId: string, participants: readonly { id: string }[], now: Date): MatchRecord[]
  /** Where the winner of `match` goes once it is decided. */
  advance(match: MatchRecord): Advance
  /** The places, from a bracket whose deciding match is decided; empty before. */
  standings(bracket: readonly MatchRecord[]): Standing[]
}
