// The world the console's operations tests look at, built through the real
// player and admin routes: a game, named players, a double elimination of 8
// played partway, a round robin of 4 with a draw, a match whose players
// claimed different winners (disputed), and a withdrawal above the approval
// threshold (ARENA_WITHDRAWAL_APPROVAL_ABOVE, so the app must set it).
import { expect } from 'bun:test'
import { postJson, req, type Handler } from '../helpers/app'
import { admin, claim, type MatchView, type Player, type TournamentView } from '../helpers/arena'
import { login, PASSWORD, registerUser } from '../helpers/auth'
import { mint, PIN, someAddress, verify } from '../helpers/purchases'

/** The env the world needs: withdrawals above 100 wait for approval. */
export const OPS_ENV = { ARENA_WITHDRAWAL_APPROVAL_ABOVE: '100' }

const NAMES = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'grace', 'heidi']

export interface OpsWorld {
  game: { id: string; name: string }
  gameKey: string
  people: Player[]
  doubleElimination: OpsTournament
  roundRobin: OpsTournament
  disputed: { tournament: OpsTournament; match: MatchView; claimedBy: Player[] }
  withdrawal: { id: string; player: Player; amount: string }
}

let run = 0

async function named(ctx: Handler, username: string): Promise<Player> {
  const user = await registerUser(ctx, { username, email: `${username}@example.com` })
  return { userId: user.id, username, tokens: await login(ctx, username, PASSWORD) }
}

/** A tournament as the admin API answers it, with each match's bracket. */
export type OpsTournament = Omit<TournamentView, 'matches'> & { name: string; matches: (MatchView & { bracket: string; loserNextMatchId: string | null })[] }

async function adminTournament(ctx: Handler, id: string): Promise<OpsTournament> {
  const res = await ctx.handle(req(`/api/v1/admin/tournaments/${id}`, { headers: admin }))
  expect(res.status).toBe(200)
  return ((await res.json()) as { tournament: OpsTournament }).tournament
}

async function createAndStart(ctx: Handler, body: Record<string, unknown>): Promise<TournamentView> {
  const created = await ctx.handle(postJson('/api/v1/admin/tournaments', body, admin))
  expect(created.status).toBe(201)
  const { tournament } = (await created.json()) as { tournament: TournamentView }
  const started = await ctx.handle(postJson(`/api/v1/admin/tournaments/${tournament.id}/start`, {}, admin))
  expect(started.status).toBe(200)
  return tournament
}

function seatOf(t: Pick<TournamentView, 'participants'>, people: Player[], participantId: string): Player {
  const userId = t.participants.find((p) => p.id === participantId)!.userId
  return people.find((p) => p.userId === userId)!
}

/** Plays `count` running matches of `bracket` (lowest round first): both players agree, the better seed wins (or a draw when `draw`). */
async function play(ctx: Handler, gameId: string, gameKey: string, id: string, people: Player[], bracket: string, count: number, draw = false): Promise<void> {
  for (let i = 0; i < count; i++) {
    const t = await adminTournament(ctx, id)
    const match = t.matches.filter((m) => m.bracket === bracket && m.status === 'running').sort((a, b) => a.round - b.round || a.position - b.position)[0]
    if (!match) throw new Error(`no running ${bracket} match left to play in ${id}`)
    const seedOf = (pid: string) => t.participants.find((p) => p.id === pid)!.seed
    const winner = seedOf(match.slot1ParticipantId!) < seedOf(match.slot2ParticipantId!) ? match.slot1ParticipantId! : match.slot2ParticipantId!
    const body = draw ? { outcome: 'DRAW' } : { outcome: 'WIN', winnerParticipantId: winner }
    await claim(ctx, gameId, gameKey, seatOf(t, people, match.slot1ParticipantId!), match.id, body)
    const second = await claim(ctx, gameId, gameKey, seatOf(t, people, match.slot2ParticipantId!), match.id, body)
    expect(second.decision).not.toBe('pending')
  }
}

export async function buildOpsWorld(ctx: Handler): Promise<OpsWorld> {
  run++
  const suffix = run === 1 ? '' : `_${run}`
  const created = await ctx.handle(postJson('/api/v1/admin/games', { name: `Duel Masters${suffix}` }, admin))
  expect(created.status).toBe(201)
  const { game, gameKey } = (await created.json()) as { game: { id: string; name: string }; gameKey: string }
  const people: Player[] = []
  for (const name of NAMES) people.push(await named(ctx, `${name}${suffix}`))

  // Double elimination of 8: winners round 1 played, the first winners semi-final and the first losers match too.
  const de = await createAndStart(ctx, { gameId: game.id, name: 'Winter Double', format: 'double_elimination', participants: people.map((p) => p.userId) })
  await play(ctx, game.id, gameKey, de.id, people, 'winners', 5)
  await play(ctx, game.id, gameKey, de.id, people, 'losers', 1)

  // Round robin of 4: two matches decided, one of them a draw.
  const rr = await createAndStart(ctx, { gameId: game.id, name: 'League of Four', format: 'round_robin', participants: people.slice(0, 4).map((p) => p.userId) })
  await play(ctx, game.id, gameKey, rr.id, people, 'round_robin', 1)
  await play(ctx, game.id, gameKey, rr.id, people, 'round_robin', 1, true)

  // A final whose players disagree: disputed.
  const cup = await createAndStart(ctx, { gameId: game.id, name: 'Dispute Cup', format: 'single_elimination', participants: [people[4]!.userId, people[5]!.userId] })
  const cupNow = await adminTournament(ctx, cup.id)
  const match = cupNow.matches[0]!
  const first = seatOf(cupNow, people, match.slot1ParticipantId!)
  const second = seatOf(cupNow, people, match.slot2ParticipantId!)
  await claim(ctx, game.id, gameKey, first, match.id, { outcome: 'WIN', winnerParticipantId: match.slot1ParticipantId })
  const disagreed = await claim(ctx, game.id, gameKey, second, match.id, { outcome: 'WIN', winnerParticipantId: match.slot2ParticipantId })
  expect(disagreed.decision).toBe('dispute')

  // A withdrawal of 250 (above the threshold of 100): awaiting approval.
  const payer = people[6]!
  const pin = await ctx.handle(
    new Request('http://localhost/api/v1/security/pin', { method: 'PUT', headers: { authorization: `Bearer ${payer.tokens.accessToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ pin: PIN, password: PASSWORD }) }),
  )
  expect(pin.status).toBe(200)
  const credited = await ctx.handle(postJson(`/api/v1/admin/wallets/${payer.userId}/credit`, { amount: '500', reference: `ops-world-${run}` }, admin))
  expect(credited.status).toBe(200)
  const verified = await verify(ctx, payer, await mint(ctx, payer), { pin: PIN, amount: '250', destinationAddress: someAddress(), idempotencyKey: `ops-${run}` })
  expect(verified.status).toBe(200)
  const { withdrawal } = (await verified.json()) as { withdrawal: { id: string; status: string } }
  expect(withdrawal.status).toBe('awaiting_approval')

  return {
    game,
    gameKey,
    people,
    doubleElimination: await adminTournament(ctx, de.id),
    roundRobin: await adminTournament(ctx, rr.id),
    disputed: { tournament: cupNow, match: { ...match, status: 'disputed' }, claimedBy: [first, second] },
    withdrawal: { id: withdrawal.id, player: payer, amount: '250' },
  }
}
