// The tournament as the API shows it (contract §6 and §9): one read of its
// rows and bracket (progress.ts, loadState) turned into the answer every
// route, the console and the CLI give, and the pieces of it the list shows.
import { toIso } from '../../shared/clock'
import { formatAmount } from '../../shared/money'
import { BRACKETS } from './formats/engines'
import type { Match, Registration, Tournament } from './model'
import { formatOptions, purseOf, PRIZE_ASSET } from './prizes'
import { loadState, standingsOf } from './progress'
import type { GamesStore, MatchRecord, TournamentRecord, TournamentStatus } from './store'

export function toMatch(row: MatchRecord): Match {
  return {
    id: row.id,
    bracket: row.bracket,
    round: row.round,
    position: row.position,
    status: row.status,
    slot1ParticipantId: row.slot1ParticipantId,
    slot2ParticipantId: row.slot2ParticipantId,
    winnerParticipantId: row.winnerParticipantId,
    outcome: row.status === 'decided' ? (row.outcome ?? 'WIN') : null,
    nextMatchId: row.nextMatchId,
    loserNextMatchId: row.loserNextMatchId,
    deadline: row.deadline ? toIso(row.deadline) : null,
  }
}

/** The order brackets are listed in: the way a tournament is played (each format lists its brackets so). */
const BRACKET_ORDER = new Map<string, number>(BRACKETS.map((bracket, i) => [bracket, i]))

/** Standings are shown once the tournament plays (live where results only feed the table; the engines give none for an unfinished bracket). */
const HAS_STANDINGS: readonly TournamentStatus[] = ['running', 'finalizing', 'completed']

/** The tournament object of contract §6 and §9, or null. */
export async function loadTournament(games: GamesStore, id: string): Promise<Tournament | null> {
  const row = await games.tournament(id)
  if (!row) return null
  const state = await loadState(games, row)
  const matches = [...state.rows.values()].sort((a, b) => BRACKET_ORDER.get(a.bracket)! - BRACKET_ORDER.get(b.bracket)! || a.round - b.round || a.position - b.position)
  return {
    id: row.id,
    gameId: row.gameId,
    name: row.name,
    format: row.format,
    status: row.status,
    participants: state.participants.map((p) => ({
      id: p.id,
      userId: p.userId,
      seed: p.seed,
      registeredAt: isoOrNull(p.registeredAt),
      checkedInAt: isoOrNull(p.checkedInAt),
      disqualifiedAt: isoOrNull(p.disqualifiedAt),
    })),
    matches: matches.map(toMatch),
    standings: HAS_STANDINGS.includes(row.status) ? standingsOf(state) : [],
    winnerParticipantId: row.winnerParticipantId,
    registration: registrationOf(row),
    options: formatOptions(row.options),
    ...purseView(row),
  }
}

/** The entry fee and prizes as the API shows them (decimal strings; null and [] for none). */
export function purseView(row: Pick<TournamentRecord, 'options'>): { entryFee: string | null; prizes: string[] } {
  const purse = purseOf(row)
  return { entryFee: purse.entryFee === null ? null : formatAmount(purse.entryFee, PRIZE_ASSET), prizes: purse.prizes.map((p) => formatAmount(p, PRIZE_ASSET)) }
}

export const isoOrNull = (at: Date | null): string | null => (at === null ? null : toIso(at))

/** A tournament's registration as the API shows it; null for one created with its participants. */
export function registrationOf(row: TournamentRecord): Registration | null {
  if (row.registrationClosesAt === null || row.startsAt === null || row.maxPlayers === null) return null
  return {
    closesAt: toIso(row.registrationClosesAt),
    maxPlayers: row.maxPlayers,
    checkIn: row.checkInOpensAt && row.checkInClosesAt ? { opensAt: toIso(row.checkInOpensAt), closesAt: toIso(row.checkInClosesAt) } : null,
    startsAt: toIso(row.startsAt),
    seeding: row.seeding ?? 'registration',
    // Shown once started: known before, it would let a registrant predict the bracket.
    seed: row.seeding === 'random' && row.startedAt !== null ? row.seed : null,
  }
}
