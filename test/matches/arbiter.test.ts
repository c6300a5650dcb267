// Invariant: decide() maps the claims of a match's two participants to exactly one
// decision, independent of claim order; a winner advances only when both name the
// same winner and that winner is in the match (deferred to finalization for the
// deciding match); malformed input (too many claims, claims from outsiders or two
// from one participant) throws rather than yielding a decision.
import { describe, expect, test } from 'bun:test'
import { decide, type ArbiterMatch, type Claim, type Decision } from '../../src/modules/matches/arbiter'

const A = 'participant-a'
const B = 'participant-b'
const X = 'participant-x' // not in the match

const match = (deciding: boolean): ArbiterMatch => ({ slot1ParticipantId: A, slot2ParticipantId: B, deciding })

const win = (participantId: string, winnerParticipantId: string): Claim => ({
  participantId,
  outcome: 'WIN',
  winnerParticipantId,
})
const draw = (participantId: string): Claim => ({ participantId, outcome: 'DRAW' })

interface Row {
  name: string
  deciding: boolean
  claims: Claim[]
  expected: Decision
}

const pending: Decision = { decision: 'pending', reason: 'awaiting_opponent' }
const conflict: Decision = { decision: 'dispute', reason: 'claims_conflict' }

const rows: Row[] = [
  { name: 'no claims', deciding: false, claims: [], expected: pending },
  { name: 'one WIN claim', deciding: false, claims: [win(A, A)], expected: pending },
  { name: 'one WIN claim, deciding match', deciding: true, claims: [win(B, A)], expected: pending },
  { name: 'one DRAW claim', deciding: false, claims: [draw(B)], expected: pending },
  { name: 'DRAW + DRAW', deciding: false, claims: [draw(A), draw(B)], expected: { decision: 'replay', reason: 'mutual_draw' } },
  {
    name: 'DRAW + DRAW, deciding match',
    deciding: true,
    claims: [draw(A), draw(B)],
    expected: { decision: 'replay', reason: 'mutual_draw' },
  },
  {
    name: 'WIN(a) + WIN(a), not deciding',
    deciding: false,
    claims: [win(A, A), win(B, A)],
    expected: { decision: 'game_advance', reason: 'claims_agree', winnerParticipantId: A },
  },
  {
    name: 'WIN(b) + WIN(b), not deciding',
    deciding: false,
    claims: [win(A, B), win(B, B)],
    expected: { decision: 'game_advance', reason: 'claims_agree', winnerParticipantId: B },
  },
  {
    name: 'WIN(b) + WIN(b), deciding',
    deciding: true,
    claims: [win(A, B), win(B, B)],
    expected: { decision: 'game_advance_pending_finalization', reason: 'claims_agree', winnerParticipantId: B },
  },
  {
    name: 'WIN(a) + WIN(a), deciding',
    deciding: true,
    claims: [win(A, A), win(B, A)],
    expected: { decision: 'game_advance_pending_finalization', reason: 'claims_agree', winnerParticipantId: A },
  },
  { name: 'WIN(a) + WIN(b)', deciding: false, claims: [win(A, A), win(B, B)], expected: conflict },
  { name: 'WIN(a) + WIN(b), deciding', deciding: true, claims: [win(A, A), win(B, B)], expected: conflict },
  { name: 'WIN(a) + DRAW', deciding: false, claims: [win(A, A), draw(B)], expected: conflict },
  { name: 'DRAW + WIN(b)', deciding: false, claims: [draw(A), win(B, B)], expected: conflict },
  { name: 'DRAW + WIN(b), deciding', deciding: true, claims: [draw(A), win(B, B)], expected: conflict },
  {
    name: 'WIN(x) + WIN(x), x outside the match',
    deciding: false,
    claims: [win(A, X), win(B, X)],
    expected: { decision: 'dispute', reason: 'winner_not_in_match' },
  },
  {
    name: 'WIN(x) + WIN(x), x outside the match, deciding',
    deciding: true,
    claims: [win(A, X), win(B, X)],
    expected: { decision: 'dispute', reason: 'winner_not_in_match' },
  },
  { name: 'WIN(x) + WIN(a)', deciding: false, claims: [win(A, X), win(B, A)], expected: conflict },
  { name: 'WIN(x) + DRAW', deciding: false, claims: [win(A, X), draw(B)], expected: conflict },
]

describe('decide: decision table', () => {
  for (const row of rows) {
    test(row.name, () => {
      expect(decide(match(row.deciding), row.claims)).toEqual(row.expected)
    })
  }
})

describe('decide: order independence', () => {
  for (const row of rows.filter((r) => r.claims.length === 2)) {
    test(`${row.name}, claims reversed`, () => {
      const reversed = [...row.claims].reverse()
      expect(reversed).not.toEqual(row.claims)
      expect(decide(match(row.deciding), reversed)).toEqual(row.expected)
    })
  }
})

describe('decide: caller bugs throw', () => {
  const bad: Array<{ name: string; match: ArbiterMatch; claims: Claim[] }> = [
    { name: 'a claim from a non-participant beside a participant', match: match(false), claims: [win(A, A), win(X, A)] },
    { name: 'a non-participant DRAW beside a participant', match: match(false), claims: [draw(X), draw(B)] },
    { name: 'a single claim from a non-participant', match: match(false), claims: [win(X, A)] },
    { name: 'two claims from the same participant', match: match(false), claims: [win(A, A), win(A, A)] },
    { name: 'two claims from the same participant, different outcomes', match: match(true), claims: [draw(B), win(B, B)] },
    { name: 'three claims', match: match(false), claims: [win(A, A), win(B, A), win(A, A)] },
    { name: 'three claims, all DRAW', match: match(true), claims: [draw(A), draw(B), draw(A)] },
    {
      name: 'a match with the same participant in both slots',
      match: { slot1ParticipantId: A, slot2ParticipantId: A, deciding: false },
      claims: [win(A, A)],
    },
  ]
  for (const row of bad) {
    test(row.name, () => {
      expect(() => decide(row.match, row.claims)).toThrow(Error)
    })
  }
})

describe('decide: purity', () => {
  test('does not mutate the claims it is given', () => {
    const claims = [win(A, A), win(B, A)]
    const snapshot = structuredClone(claims)
    decide(match(false), Object.freeze(claims))
    expect(claims).toEqual(snapshot)
  })
})
