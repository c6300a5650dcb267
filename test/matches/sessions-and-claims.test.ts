// The game SDK routes of contract §2: session issue, result claims, the
// arbiter's decisions applied to the bracket, operator resolution.
import { afterAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { UniqueViolationError } from '../../src/db/errors'
import { postJson, req } from '../helpers/app'
import { admin, claim, createArenaApp, createGame, openSession, players, playerOf, playOut, startedTournament, submit, tournament } from '../helpers/arena'

const ctx = await createArenaApp()
afterAll(() => ctx.close())
const { db, tables: { gameSessions, outboxEvents } } = ctx.peek

const { game, gameKey } = await createGame(ctx)
const other = await createGame(ctx, 'Other Game')

async function twoPlayerCup() {
  const people = await players(ctx, 2)
  const t = await startedTournament(ctx, game.id, people)
  const final = t.matches[0]!
  return { people, t, final, p1: playerOf(t, people, final.slot1ParticipantId!), p2: playerOf(t, people, final.slot2ParticipantId!) }
}

async function fourPlayerCup() {
  const people = await players(ctx, 4)
  const t = await startedTournament(ctx, game.id, people)
  return { people, t }
}

describe('session issue', () => {
  test('201 with sessionId, token, expiresAt and context { tournamentId, matchId, participantId, slot }', async () => {
    const { t, final, p1, p2 } = await twoPlayerCup()
    for (const [player, slot] of [[p1, 1], [p2, 2]] as const) {
      const res = await openSession(ctx, game.id, gameKey, player, final.id)
      expect(res.status).toBe(201)
      const body = (await res.json()) as { sessionId: string; token: string; expiresAt: string; context: Record<string, unknown> }
      expect(body.sessionId).toMatch(/^gms_[0-9a-f]{32}$/)
      expect(body.token.length).toBeGreaterThanOrEqual(43)
      expect(new Date(body.expiresAt).getTime() - ctx.clock.now().getTime()).toBe(1800 * 1000)
      expect(body.context).toEqual({
        tournamentId: t.id,
        matchId: final.id,
        participantId: slot === 1 ? final.slot1ParticipantId : final.slot2ParticipantId,
        slot,
      })
    }
  })

  test('missing, wrong or another game\'s key is 403 invalid_game_key', async () => {
    const { final, p1 } = await twoPlayerCup()
    const headers = { authorization: `Bearer ${p1.tokens.accessToken}` }
    const cases = [
      postJson(`/api/v1/game-sdk/${game.id}/sessions`, { matchId: final.id }, headers),
      postJson(`/api/v1/game-sdk/${game.id}/sessions`, { matchId: final.id }, { ...headers, 'x-game-key': 'agk_wrong' }),
      postJson(`/api/v1/game-sdk/${game.id}/sessions`, { matchId: final.id }, { ...headers, 'x-game-key': other.gameKey }),
      // The other game's own key, on its own path, for a match of this game.
      postJson(`/api/v1/game-sdk/${other.game.id}/sessions`, { matchId: final.id }, { ...headers, 'x-game-key': other.gameKey }),
      postJson(`/api/v1/game-sdk/gam_unknown/sessions`, { matchId: final.id }, { ...headers, 'x-game-key': gameKey }),
    ]
    for (const request of cases) {
      const res = await ctx.handle(request)
      expect(res.status).toBe(403)
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_game_key')
    }
  })

  test('no bearer is 401; unknown match 404; outsider 403 not_a_participant', async () => {
    const { final } = await twoPlayerCup()
    const [outsider] = await players(ctx, 1)
    const noBearer = await ctx.handle(postJson(`/api/v1/game-sdk/${game.id}/sessions`, { matchId: final.id }, { 'x-game-key': gameKey }))
    expect(noBearer.status).toBe(401)
    expect((await openSession(ctx, game.id, gameKey, outsider!, 'mat_unknown')).status).toBe(404)
    const res = await openSession(ctx, game.id, gameKey, outsider!, final.id)
    expect(res.status).toBe(403)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_a_participant')
  })

  test('a match without both players yet is 409 match_not_running', async () => {
    const { people, t } = await fourPlayerCup()
    const final = t.matches.find((m) => m.round === 2)!
    const res = await openSession(ctx, game.id, gameKey, people[0]!, final.id)
    // people[0] is not seated in the final yet: outsider of that match.
    expect([403, 409]).toContain(res.status)
    const semi = t.matches.find((m) => m.round === 1)!
    const winner = semi.slot1ParticipantId!
    await playOut(ctx, game.id, gameKey, t, people, semi, winner)
    const seated = playerOf(t, people, winner)
    const waiting = await openSession(ctx, game.id, gameKey, seated, final.id)
    expect(waiting.status).toBe(409)
    expect(((await waiting.json()) as { error: { code: string } }).error.code).toBe('match_not_running')
  })
})

describe('result submission', () => {
  test('missing x-session-token is 401; a used token is 401 session_token_invalid', async () => {
    const { final, p1 } = await twoPlayerCup()
    const missing = await submit(ctx, game.id, gameKey, p1, null, { outcome: 'DRAW' })
    expect(missing.status).toBe(401)
    const { token } = (await (await openSession(ctx, game.id, gameKey, p1, final.id)).json()) as { token: string }
    expect((await submit(ctx, game.id, gameKey, p1, token, { outcome: 'WIN', winnerParticipantId: final.slot1ParticipantId })).status).toBe(200)
    const reuse = await submit(ctx, game.id, gameKey, p1, token, { outcome: 'WIN', winnerParticipantId: final.slot1ParticipantId })
    expect(reuse.status).toBe(401)
    expect(((await reuse.json()) as { error: { code: string } }).error.code).toBe('session_token_invalid')
  })

  test('a token used with another user\'s bearer is rejected and stays usable by its owner', async () => {
    const { final, p1, p2 } = await twoPlayerCup()
    const { token } = (await (await openSession(ctx, game.id, gameKey, p1, final.id)).json()) as { token: string }
    const stolen = await submit(ctx, game.id, gameKey, p2, token, { outcome: 'WIN', winnerParticipantId: final.slot2ParticipantId })
    expect(stolen.status).toBe(401)
    expect((await submit(ctx, game.id, gameKey, p1, token, { outcome: 'DRAW' })).status).toBe(200)
  })

  test('an expired token is refused', async () => {
    const { final, p1 } = await twoPlayerCup()
    const { token } = (await (await openSession(ctx, game.id, gameKey, p1, final.id)).json()) as { token: string }
    ctx.clock.advance(1801 * 1000)
    expect((await submit(ctx, game.id, gameKey, p1, token, { outcome: 'DRAW' })).status).toBe(401)
  })

  test('a bad claim body is a 4xx envelope, never a 500, and does not spend the token', async () => {
    const { final, p1 } = await twoPlayerCup()
    const { token } = (await (await openSession(ctx, game.id, gameKey, p1, final.id)).json()) as { token: string }
    for (const body of [{}, { outcome: 'LOSE' }, { outcome: 'WIN' }, { outcome: 'WIN', winnerParticipantId: 5 }, [], 'x', { outcome: 'DRAW', score: 'high' }]) {
      const res = await submit(ctx, game.id, gameKey, p1, token, body)
      expect(res.status).toBeGreaterThanOrEqual(400)
      expect(res.status).toBeLessThan(500)
      const envelope = (await res.json()) as { error: { code: string; message: string; status: number } }
      expect(envelope.error.status).toBe(res.status)
      expect(typeof envelope.error.code).toBe('string')
    }
    expect((await submit(ctx, game.id, gameKey, p1, token, { outcome: 'DRAW', score: { p1: 3 } })).status).toBe(200)
  })

  test('10 concurrent submissions of one token: exactly one 200', async () => {
    const { final, p1 } = await twoPlayerCup()
    const { token } = (await (await openSession(ctx, game.id, gameKey, p1, final.id)).json()) as { token: string }
    const results = await Promise.all(
      Array.from({ length: 10 }, () => submit(ctx, game.id, gameKey, p1, token, { outcome: 'WIN', winnerParticipantId: final.slot1ParticipantId })),
    )
    expect(results.filter((r) => r.status === 200).length).toBe(1)
    expect(results.filter((r) => r.status === 401).length).toBe(9)
  })

  test('a second claim by the same participant in one round of claims is 409 already_claimed', async () => {
    const { final, p1 } = await twoPlayerCup()
    const spare = ((await (await openSession(ctx, game.id, gameKey, p1, final.id)).json()) as { token: string }).token
    await claim(ctx, game.id, gameKey, p1, final.id, { outcome: 'WIN', winnerParticipantId: final.slot1ParticipantId })
    const res = await submit(ctx, game.id, gameKey, p1, spare, { outcome: 'WIN', winnerParticipantId: final.slot1ParticipantId })
    expect(res.status).toBe(409)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('already_claimed')
    // And no new session is handed out for a claim that could only be refused.
    const again = await openSession(ctx, game.id, gameKey, p1, final.id)
    expect(again.status).toBe(409)
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe('already_claimed')
  })

  test('the backstop under that check: the store refuses a second claim in the round with a UniqueViolationError', async () => {
    const { final, p1 } = await twoPlayerCup()
    await claim(ctx, game.id, gameKey, p1, final.id, { outcome: 'DRAW' })
    const participantId = final.slot1ParticipantId!
    const [session] = await db.select().from(gameSessions).where(and(eq(gameSessions.matchId, final.id), eq(gameSessions.participantId, participantId)))
    // Seen inside the unit of work, where the claim path catches it (and
    // rethrows: on PostgreSQL the failed statement has doomed the transaction).
    let error: unknown = null
    const second = ctx.services.storage.write(async (tx) => {
      try {
        await tx.matches.insertClaim({ matchId: final.id, claimRound: 1, participantId, outcome: 'DRAW', winnerParticipantId: null, score: null, gameSessionId: session!.id, createdAt: ctx.clock.now() })
      } catch (caught) {
        error = caught
        throw caught
      }
    })
    await expect(second).rejects.toBeInstanceOf(UniqueViolationError)
    expect(error).toBeInstanceOf(UniqueViolationError)
    expect((error as UniqueViolationError).involves('participant_id')).toBe(true)
  })

  test('a token is bound to its game: another game\'s path and key do not accept it', async () => {
    const { final, p1 } = await twoPlayerCup()
    const { token } = (await (await openSession(ctx, game.id, gameKey, p1, final.id)).json()) as { token: string }
    const res = await submit(ctx, other.game.id, other.gameKey, p1, token, { outcome: 'DRAW' })
    expect(res.status).toBe(401)
    expect((await submit(ctx, game.id, gameKey, p1, token, { outcome: 'DRAW' })).status).toBe(200)
  })

  test('a session issued before a replay is worthless after it', async () => {
    const { final, p1, p2 } = await twoPlayerCup()
    const stale = ((await (await openSession(ctx, game.id, gameKey, p1, final.id)).json()) as { token: string }).token
    await claim(ctx, game.id, gameKey, p1, final.id, { outcome: 'DRAW' })
    expect((await claim(ctx, game.id, gameKey, p2, final.id, { outcome: 'DRAW' })).decision).toBe('replay')
    const res = await submit(ctx, game.id, gameKey, p1, stale, { outcome: 'WIN', winnerParticipantId: final.slot1ParticipantId })
    expect(res.status).toBe(401)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('session_token_invalid')
  })
})

describe('decisions', () => {
  test('agreement: game_advance, and the winner appears in the next match', async () => {
    const { people, t } = await fourPlayerCup()
    const semi = t.matches.find((m) => m.round === 1 && m.position === 1)!
    const decision = await playOut(ctx, game.id, gameKey, t, people, semi, semi.slot2ParticipantId!)
    expect(decision).toMatchObject({ decision: 'game_advance', reason: 'claims_agree', matchId: semi.id, tournamentId: t.id, winnerParticipantId: semi.slot2ParticipantId, nextMatchId: semi.nextMatchId })
    const after = await tournament(ctx, t.id)
    expect(after.matches.find((m) => m.id === semi.id)).toMatchObject({ status: 'decided', winnerParticipantId: semi.slot2ParticipantId })
    expect(after.matches.find((m) => m.id === semi.nextMatchId)!.slot1ParticipantId).toBe(semi.slot2ParticipantId)
  })

  test('the final: game_advance_pending_finalization, then completed with the winner', async () => {
    const { people, t, final } = await twoPlayerCup()
    const decision = await playOut(ctx, game.id, gameKey, t, people, final, final.slot1ParticipantId!)
    expect(decision.decision).toBe('game_advance_pending_finalization')
    expect((await tournament(ctx, t.id)).status).toBe('finalizing')
    expect(await ctx.runJobs()).toBeGreaterThanOrEqual(1)
    const done = await tournament(ctx, t.id)
    expect(done.status).toBe('completed')
    expect(done.winnerParticipantId).toBe(final.slot1ParticipantId)
    const completed = await db
      .select()
      .from(outboxEvents)
      .where(and(eq(outboxEvents.type, 'tournament.completed'), eq(outboxEvents.userId, people[0]!.userId)))
    expect(completed.length).toBe(1)
  })

  test('two claims racing each other: exactly one decision and one bracket move', async () => {
    const { people, t } = await fourPlayerCup()
    const semi = t.matches.find((m) => m.round === 1)!
    const a = playerOf(t, people, semi.slot1ParticipantId!)
    const b = playerOf(t, people, semi.slot2ParticipantId!)
    const tokens = await Promise.all(
      [a, b].map(async (p) => ((await (await openSession(ctx, game.id, gameKey, p, semi.id)).json()) as { token: string }).token),
    )
    const claimBody = { outcome: 'WIN', winnerParticipantId: semi.slot1ParticipantId }
    const results = await Promise.all([submit(ctx, game.id, gameKey, a, tokens[0]!, claimBody), submit(ctx, game.id, gameKey, b, tokens[1]!, claimBody)])
    const decisions = (await Promise.all(results.map((r) => r.json()))).map((d) => (d as { decision: string }).decision).sort()
    expect(decisions).toEqual(['game_advance', 'pending'])
    const decided = (
      await db
        .select()
        .from(outboxEvents)
        .where(and(eq(outboxEvents.type, 'match.decided'), eq(outboxEvents.userId, a.userId)))
    ).filter((e) => (e.data as { matchId: string }).matchId === semi.id)
    expect(decided.length).toBe(1)
    const next = (await tournament(ctx, t.id)).matches.find((m) => m.id === semi.nextMatchId)!
    expect(next.slot1ParticipantId).toBe(semi.slot1ParticipantId)
  })

  test('mutual DRAW: replay, and the match is playable again', async () => {
    const { final, p1, p2 } = await twoPlayerCup()
    expect((await claim(ctx, game.id, gameKey, p1, final.id, { outcome: 'DRAW' })).decision).toBe('pending')
    expect((await claim(ctx, game.id, gameKey, p2, final.id, { outcome: 'DRAW' })).decision).toBe('replay')
    // Both may claim again in the new round of claims.
    expect((await claim(ctx, game.id, gameKey, p1, final.id, { outcome: 'WIN', winnerParticipantId: final.slot2ParticipantId })).decision).toBe('pending')
    expect((await claim(ctx, game.id, gameKey, p2, final.id, { outcome: 'WIN', winnerParticipantId: final.slot2ParticipantId })).decision).toBe(
      'game_advance_pending_finalization',
    )
  })

  test('conflict: dispute; sessions for a disputed match are 409; the operator\'s resolve advances', async () => {
    const { people, t } = await fourPlayerCup()
    const semi = t.matches.find((m) => m.round === 1)!
    const a = playerOf(t, people, semi.slot1ParticipantId!)
    const b = playerOf(t, people, semi.slot2ParticipantId!)
    await claim(ctx, game.id, gameKey, a, semi.id, { outcome: 'WIN', winnerParticipantId: semi.slot1ParticipantId })
    const disputed = await claim(ctx, game.id, gameKey, b, semi.id, { outcome: 'WIN', winnerParticipantId: semi.slot2ParticipantId })
    expect(disputed).toMatchObject({ decision: 'dispute', reason: 'claims_conflict' })
    const blocked = await openSession(ctx, game.id, gameKey, a, semi.id)
    expect(blocked.status).toBe(409)

    const resolved = await ctx.handle(postJson(`/api/v1/admin/matches/${semi.id}/resolve`, { winnerParticipantId: semi.slot2ParticipantId }, admin))
    expect(resolved.status).toBe(200)
    const body = (await resolved.json()) as { match: { status: string; winnerParticipantId: string }; decision: { decision: string; nextMatchId: string } }
    expect(body.match).toMatchObject({ status: 'decided', winnerParticipantId: semi.slot2ParticipantId })
    expect(body.decision).toMatchObject({ decision: 'game_advance', nextMatchId: semi.nextMatchId })
    const after = await tournament(ctx, t.id)
    expect(after.matches.find((m) => m.id === semi.nextMatchId)!.slot1ParticipantId).toBe(semi.slot2ParticipantId)
    const disputedEvents = await db.select().from(outboxEvents).where(and(eq(outboxEvents.type, 'match.disputed'), eq(outboxEvents.userId, a.userId)))
    expect(disputedEvents.length).toBe(1)
    // A decided match cannot be resolved again.
    expect((await ctx.handle(postJson(`/api/v1/admin/matches/${semi.id}/resolve`, { winnerParticipantId: semi.slot1ParticipantId }, admin))).status).toBe(409)
  })

  test('resolve refuses a winner from outside the match (422) and a match still waiting for players (409)', async () => {
    const { t } = await fourPlayerCup()
    const [semi, otherSemi] = t.matches.filter((m) => m.round === 1)
    const outsider = await ctx.handle(postJson(`/api/v1/admin/matches/${semi!.id}/resolve`, { winnerParticipantId: otherSemi!.slot1ParticipantId }, admin))
    expect(outsider.status).toBe(422)
    const final = t.matches.find((m) => m.round === 2)!
    const waiting = await ctx.handle(postJson(`/api/v1/admin/matches/${final.id}/resolve`, { winnerParticipantId: semi!.slot1ParticipantId }, admin))
    expect(waiting.status).toBe(409)
    expect((await ctx.handle(postJson('/api/v1/admin/matches/mat_nope/resolve', { winnerParticipantId: 'par_x' }, admin))).status).toBe(404)
  })

  test('a winner outside the match is a dispute (winner_not_in_match)', async () => {
    const { people, t } = await fourPlayerCup()
    const [semi, otherSemi] = t.matches.filter((m) => m.round === 1)
    const outsider = otherSemi!.slot1ParticipantId
    const a = playerOf(t, people, semi!.slot1ParticipantId!)
    const b = playerOf(t, people, semi!.slot2ParticipantId!)
    await claim(ctx, game.id, gameKey, a, semi!.id, { outcome: 'WIN', winnerParticipantId: outsider })
    const decision = await claim(ctx, game.id, gameKey, b, semi!.id, { outcome: 'WIN', winnerParticipantId: outsider })
    expect(decision).toMatchObject({ decision: 'dispute', reason: 'winner_not_in_match' })
  })
})

describe('reads', () => {
  test('players see the tournament and their open matches with the opponent', async () => {
    const { people, t } = await fourPlayerCup()
    const me = people[0]!
    const seen = await ctx.handle(req(`/api/v1/tournaments/${t.id}`, { headers: { authorization: `Bearer ${me.tokens.accessToken}` } }))
    expect(seen.status).toBe(200)
    expect(((await seen.json()) as { tournament: { id: string; matches: unknown[] } }).tournament.matches.length).toBe(3)
    const mine = await ctx.handle(req('/api/v1/me/matches', { headers: { authorization: `Bearer ${me.tokens.accessToken}` } }))
    const { matches } = (await mine.json()) as { matches: { matchId: string; round: number; status: string; opponent: { username: string } | null }[] }
    expect(matches.length).toBe(1)
    expect(matches[0]).toMatchObject({ round: 1, status: 'running' })
    expect(people.map((p) => p.username)).toContain(matches[0]!.opponent!.username)

    // Once the match is decided it is no longer open.
    const match = t.matches.find((m) => m.id === matches[0]!.matchId)!
    await playOut(ctx, game.id, gameKey, t, people, match, match.slot1ParticipantId!)
    const after = (await (await ctx.handle(req('/api/v1/me/matches', { headers: { authorization: `Bearer ${me.tokens.accessToken}` } }))).json()) as { matches: { matchId: string }[] }
    expect(after.matches.map((m) => m.matchId)).not.toContain(match.id)
  })
})
