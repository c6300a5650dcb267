// Invariant: decide() maps the claims of a match's two participants to exactly one
// decision, independent of claim order; a winner advances only when both name the
// same winner and that winner is in the match; an agreed draw is a result where
// draws are (round robin, Swiss) and a replay elsewhere; malformed input (too many claims, claims from outsiders or two
// from one participant) throws rather than yielding a decision.
import { describe, expect, test } from 'bun:test'
import { decide, type ArbiterMatch, type Claim, type Decision } from '../../src/modules/matches/arbiter'

const A = 'participant-a'
const B = 'participant-b'
const X = 'participant-x' // not in the match

const match = (drawIsResult: boolean): ArbiterMatch => ({ slot1ParticipantId: A, slot2ParticipantId: B, drawIsResult })

const win = (participantId: string, winnerParticipantId: string): Claim => ({
  participantId,
  outcome: 'WIN',
  winnerParticipantId,
})
const draw = (participantId: string): Claim => ({ participantId, outcome: 'DRAW' })

interface Row {
  name: string
  drawIsResult: boolean
  claims: Claim[]
  expected: Decision
}

const pending: Decision = { decision: 'pending', reason: 'awaiting_opponent' }
const conflict: Decision = { decision: 'dispute', reason: 'claims_conflict' }

const rows: Row[] = [
  { name: 'no claims', drawIsResult: false, claims: [], expected: pending },
  { name: 'one WIN claim', drawIsResult: false, claims: [win(A, A)], expected: pending },
  { name: 'one WIN claim, draws are results', drawIsResult: true, claims: [win(B, A)], expected: pending },
  { name: 'one DRAW claim', drawIsResult: false, claims: [draw(B)], expected: pending },
  { name: 'DRAW + DRAW', drawIsResult: false, claims: [draw(A), draw(B)], expected: { decision: 'replay', reason: 'mutual_draw' } },
  {
    name: 'DRAW + DRAW, draws are results',
    drawIsResult: true,
    claims: [draw(A), draw(B)],
    expected: { decision: 'game_advance', reason: 'claims_agree', outcome: 'DRAW' },
  },
  {
    name: 'WIN(a) + WIN(a)',
    drawIsResult: false,
    claims: [win(A, A), win(B, A)],
    expected: { decision: 'game_advance', reason: 'claims_agree', outcome: 'WIN', winnerParticipantId: A },
  },
  {
    name: 'WIN(b) + WIN(b)',
    drawIsResult: false,
    claims: [win(A, B), win(B, B)],
    expected: { decision: 'game_advance', reason: 'claims_agree', outcome: 'WIN', winnerParticipantId: B },
  },
  {
    name: 'WIN(b) + WIN(b), draws are results',
    drawIsResult: true,
    claims: [win(A, B), win(B, B)],
    expected: { decision: 'game_advance', reason: 'claims_agree', outcome: 'WIN', winnerParticipantId: B },
  },
  {
    name: 'WIN(a) + WIN(a), draws are results',
    drawIsResult: true,
    claims: [win(A, A), win(B, A)],
    expected: { decision: 'game_advance', reason: 'claims_agree', outcome: 'WIN', winnerParticipantId: A },
  },
  { name: 'WIN(a) + WIN(b)', drawIsResult: false, claims: [win(A, A), win(B, B)], expected: conflict },
  { name: 'WIN(a) + WIN(b), draws are results', drawIsResult: true, claims: [win(A, A), win(B, B)], expected: conflict },
  { name: 'WIN(a) + DRAW', drawIsResult: false, claims: [win(A, A), draw(B)], expected: conflict },
  { name: 'DRAW + WIN(b)', drawIsResult: false, claims: [draw(A), win(B, B)], expected: conflict },
  { name: 'DRAW + WIN(b), draws are results', drawIsResult: true, claims: [draw(A), win(B, B)], expected: conflict },
  {
    name: 'WIN(x) + WIN(x), x outside the match',
    drawIsResult: false,
    claims: [win(A, X), win(B, X)],
    expected: { decision: 'dispute', reason: 'winner_not_in_match' },
  },
  {
    name: 'WIN(x) + WIN(x), x outside the match, draws are results',
    drawIsResult: true,
    claims: [win(A, X), win(B, X)],
    expected: { decision: 'dispute', reason: 'winner_not_in_match' },
  },
  { name: 'WIN(x) + WIN(a)', drawIsResult: false, claims: [win(A, X), win(B, A)], expected: conflict },
  { name: 'WIN(x) + DRAW', drawIsResult: false, claims: [win(A, X), draw(B)], expected: conflict },
]

describe('decide: decision table', () => {
  for (const row of rows) {
    test(row.name, () => {
      expect(decide(match(row.drawIsResult), row.claims)).toEqual(row.expected)
    })
  }
})

describe('decide: order independence', () => {
  for (const row of rows.filter((r) => r.claims.length === 2)) {
    test(`${row.name}, claims reversed`, () => {
      const reversed = [...row.claims].reverse()
      expect(reversed).not.toEqual(row.claims)
      expect(decide(match(row.drawIsResult), reversed)).toEqual(row.expected)
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
      match: { slot1ParticipantId: A, slot2ParticipantId: A, drawIsResult: false },
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
