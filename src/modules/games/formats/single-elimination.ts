// Single elimination: a power-of-two bracket (bracket.ts plans its shape and
// seeding), byes for the top seeds, the winner of each match moving on to one
// slot of the next, the final deciding the tournament.
import { newId } from '../../../shared/ids'
import { planSingleElimination } from '../bracket'
import type { MatchRecord } from '../store'
import type { Advance, Standing, TournamentFormat } from './format'

/** Pure: places from a decided bracket. Losers of the same round share a place. */
export function standingsOf(bracket: readonly Pick<MatchRecord, 'round' | 'slot1ParticipantId' | 'slot2ParticipantId' | 'winnerParticipantId'>[]): Standing[] {
  const rounds = Math.max(...bracket.map((m) => m.round))
  const final = bracket.find((m) => m.round === rounds)
  if (!final?.winnerParticipantId) return []
  const standings: Standing[] = [{ participantId: final.winnerParticipantId, place: 1 }]
  for (let round = rounds; round >= 1; round--) {
    const place = 2 ** (rounds - round) + 1
    for (const m of bracket.filter((x) => x.round === round)) {
      const loser = m.winnerParticipantId === m.slot1ParticipantId ? m.slot2ParticipantId : m.slot1ParticipantId
      if (loser) standings.push({ participantId: loser, place })
    }
  }
  return standings
}

export const singleElimination: TournamentFormat = {
  name: 'single_elimination',

  plan(tournamentId, seeded, now) {
    const plan = planSingleElimination(seeded.length)
    const idOf = new Map<string, string>()
    for (const m of plan.matches) idOf.set(`${m.round}:${m.position}`, newId('match'))
    const rows: MatchRecord[] = plan.matches.map((m) => ({
      id: idOf.get(`${m.round}:${m.position}`)!,
      tournamentId,
      round: m.round,
      position: m.position,
      status: 'waiting',
      slot1ParticipantId: m.slot1Seed === null ? null : seeded[m.slot1Seed - 1]!.id,
      slot2ParticipantId: m.slot2Seed === null ? null : seeded[m.slot2Seed - 1]!.id,
      winnerParticipantId: null,
      nextMatchId: m.next ? idOf.get(`${m.next.round}:${m.next.position}`)! : null,
      nextSlot: m.next ? m.next.slot : null,
      claimRound: 1,
      decidedAt: null,
    }))
    const byId = new Map(rows.map((row) => [row.id, row]))
    // Byes: the lone participant advances before anyone plays.
    for (const [index, m] of plan.matches.entries()) {
      if (!m.bye) continue
      const row = rows[index]!
      const winner = row.slot1ParticipantId ?? row.slot2ParticipantId
      row.status = 'decided'
      row.winnerParticipantId = winner
      row.decidedAt = now
      const next = row.nextMatchId ? byId.get(row.nextMatchId) : undefined
      if (next) {
        if (row.nextSlot === 1) next.slot1ParticipantId = winner
        else next.slot2ParticipantId = winner
      }
    }
    for (const row of rows) {
      if (row.status === 'waiting' && row.slot1ParticipantId && row.slot2ParticipantId) row.status = 'running'
    }
    return rows
  },

  advance(match): Advance {
    if (match.nextMatchId === null) return { kind: 'finalize' }
    // As ever: any next_slot other than 1 is slot 2.
    return { kind: 'next', matchId: match.nextMatchId, slot: match.nextSlot === 1 ? 1 : 2 }
  },

  standings: standingsOf,
}
