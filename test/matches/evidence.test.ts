// Evidence for disputes (contract §17): who may attach what to which match,
// the type proven by the bytes, the limits that bound what an account can
// store, content-addressed storage, and the operators' safe download.
import { afterAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { postJson, req } from '../helpers/app'
import { login } from '../helpers/auth'
import { admin, createArenaApp, createGame, players, startedTournament } from '../helpers/arena'
import { attached, disputedMatch, download, evidenceOf, samples, sha256, upload } from '../helpers/evidence'
import { housekeeping } from '../../src/modules/events/housekeeping'

const ctx = await createArenaApp()
afterAll(() => ctx.close())
const { db, tables } = ctx.peek
const MiB = 1024 * 1024

/** An operator decides a disputed match for its first player. */
async function resolve(matchId: string): Promise<void> {
  const view = (await (await ctx.handle(req(`/api/v1/admin/matches/${matchId}`, { headers: admin }))).json()) as { match: { players: { participantId: string }[] } }
  expect((await ctx.handle(postJson(`/api/v1/admin/matches/${matchId}/resolve`, { winnerParticipantId: view.match.players[0]!.participantId }, admin))).status).toBe(200)
}

async function errorOf(res: Response): Promise<{ status: number; code: string }> {
  const body = (await res.json()) as { error: { code: string; status: number } }
  expect(body.error.status).toBe(res.status)
  return { status: res.status, code: body.error.code }
}

describe('attaching', () => {
  test('a participant of a disputed match attaches a PNG: 201, listed to operators, downloaded byte for byte as an attachment', async () => {
    const { matchId, p1 } = await disputedMatch(ctx)
    const png = samples.png('first')
    const evidence = await attached(ctx, matchId, p1, png, 'image/png')
    expect(evidence).toEqual({ id: expect.stringMatching(/^evd_[0-9a-f]{32}$/), sha256: sha256(png), type: 'image/png', size: png.byteLength, createdAt: ctx.clock.now().toISOString() })
    const listed = await evidenceOf(ctx, matchId)
    expect(listed).toEqual([{ id: evidence.id, participantId: expect.any(String), userId: p1.userId, sha256: sha256(png), type: 'image/png', size: png.byteLength, createdAt: evidence.createdAt }])
    const res = await download(ctx, evidence.id)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('image/png')
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${evidence.id}.png"`)
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    expect(res.headers.get('content-security-policy')).toBe('sandbox')
    expect(sha256(new Uint8Array(await res.arrayBuffer()))).toBe(sha256(png))
  })

  test('every type its bytes prove is taken: JPEG, WebM, text (with a UTF-8 charset), JSON', async () => {
    const { matchId, p2 } = await disputedMatch(ctx)
    for (const [bytes, type] of [
      [samples.jpeg(), 'image/jpeg'],
      [samples.webm(), 'video/webm'],
      [samples.text('gg — «fair»'), 'text/plain; charset=UTF-8'],
      [samples.json(), 'application/json'],
    ] as const) {
      expect((await upload(ctx, matchId, p2, bytes, type)).status).toBe(201)
    }
    expect((await evidenceOf(ctx, matchId)).map((e) => e.type)).toEqual(['image/jpeg', 'video/webm', 'text/plain', 'application/json'])
  })

  test('the same file twice is stored once: two evidence rows, one blob', async () => {
    const { matchId, p1, p2 } = await disputedMatch(ctx)
    const png = samples.png(`twice-${matchId}`)
    const a = await attached(ctx, matchId, p1, png, 'image/png')
    const b = await attached(ctx, matchId, p2, png, 'image/png')
    expect(a.id).not.toBe(b.id)
    expect(a.sha256).toBe(b.sha256)
    expect(await db.select().from(tables.evidenceBlobs).where(eq(tables.evidenceBlobs.sha256, a.sha256))).toHaveLength(1)
    expect(await db.select().from(tables.matchEvidence).where(eq(tables.matchEvidence.sha256, a.sha256))).toHaveLength(2)
  })
})

describe('who and when', () => {
  test('someone not seated in the match: 403 not_a_participant; no such match: 404', async () => {
    const { matchId } = await disputedMatch(ctx)
    const [stranger] = await players(ctx, 1)
    expect(await errorOf(await upload(ctx, matchId, stranger!, samples.png(), 'image/png'))).toEqual({ status: 403, code: 'not_a_participant' })
    expect(await errorOf(await upload(ctx, 'mat_nonesuch', stranger!, samples.png(), 'image/png'))).toEqual({ status: 404, code: 'not_found' })
  })

  test('a match not disputed (running, then resolved): 409 match_not_disputed', async () => {
    const { game } = await createGame(ctx, 'Evidence running')
    const people = await players(ctx, 2)
    const running = (await startedTournament(ctx, game.id, people)).matches[0]!
    expect(running.status).toBe('running')
    expect(await errorOf(await upload(ctx, running.id, people[0]!, samples.png(), 'image/png'))).toEqual({ status: 409, code: 'match_not_disputed' })
    const { matchId, p1 } = await disputedMatch(ctx)
    await resolve(matchId)
    expect(await errorOf(await upload(ctx, matchId, p1, samples.png(), 'image/png'))).toEqual({ status: 409, code: 'match_not_disputed' })
  })

  test('the bearer is required: 401', async () => {
    const { matchId } = await disputedMatch(ctx)
    const res = await ctx.handle(req(`/api/v1/matches/${matchId}/evidence`, { method: 'POST', headers: { 'content-type': 'image/png' }, body: samples.png() }))
    expect(await errorOf(res)).toEqual({ status: 401, code: 'unauthorized' })
  })
})

describe('types, from the bytes', () => {
  test('bytes that are not the declared type: 422 evidence_type_mismatch', async () => {
    const { matchId, p1 } = await disputedMatch(ctx)
    for (const [bytes, type] of [
      [samples.png(), 'image/jpeg'],
      [samples.jpeg(), 'image/png'],
      [samples.text('a\0b'), 'text/plain'],
      [new Uint8Array([0x61, 0xff, 0xfe]), 'text/plain'],
      [samples.text('{"open": '), 'application/json'],
      [samples.text(`${'['.repeat(100)}${']'.repeat(100)}`), 'application/json'],
      [samples.webm('matroska'), 'video/webm'],
      [samples.png(), 'video/webm'],
    ] as const) {
      expect({ type, ...(await errorOf(await upload(ctx, matchId, p1, bytes, type))) }).toEqual({ type, status: 422, code: 'evidence_type_mismatch' })
    }
    expect(await evidenceOf(ctx, matchId)).toEqual([])
  })

  test('a content-type not in the list, or none: 415; an empty body: 422 validation_failed', async () => {
    const { matchId, p1 } = await disputedMatch(ctx)
    for (const type of ['text/html', 'image/gif', 'application/octet-stream', 'text/plain; charset=latin1', null]) {
      expect(await errorOf(await upload(ctx, matchId, p1, samples.text(), type))).toEqual({ status: 415, code: 'unsupported_media_type' })
    }
    expect(await errorOf(await upload(ctx, matchId, p1, new Uint8Array(0), 'image/png'))).toEqual({ status: 422, code: 'validation_failed' })
  })

  test('HTML sent as text/plain is text: stored, and served as a text attachment with nosniff and a sandbox', async () => {
    const { matchId, p1 } = await disputedMatch(ctx)
    const html = samples.text('<html><script>alert(document.cookie)</script></html>')
    const evidence = await attached(ctx, matchId, p1, html, 'text/plain')
    const res = await download(ctx, evidence.id)
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8')
    expect(res.headers.get('content-disposition')).toStartWith('attachment;')
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    expect(res.headers.get('content-security-policy')).toBe('sandbox')
    expect(await res.text()).toBe(new TextDecoder().decode(html))
  })

  test('an unknown evidence id: 404', async () => {
    expect(await errorOf(await download(ctx, 'evd_nonesuch'))).toEqual({ status: 404, code: 'not_found' })
  })
})

describe('limits', () => {
  test('a sixth file from one participant: 409 evidence_limit; the other participant still has five', async () => {
    const { matchId, p1, p2 } = await disputedMatch(ctx)
    for (let i = 0; i < 5; i++) await attached(ctx, matchId, p1, samples.text(`note ${i}`), 'text/plain')
    expect(await errorOf(await upload(ctx, matchId, p1, samples.text('note 5'), 'text/plain'))).toEqual({ status: 409, code: 'evidence_limit' })
    await attached(ctx, matchId, p2, samples.text('mine'), 'text/plain')
    expect(await evidenceOf(ctx, matchId)).toHaveLength(6)
  })

  test('1 MiB is taken; one byte more is 413, by its declared length and streamed without one', async () => {
    const { matchId, p1 } = await disputedMatch(ctx)
    const full = new Uint8Array(MiB).fill(0x61)
    expect((await attached(ctx, matchId, p1, full, 'text/plain')).size).toBe(MiB)
    const over = new Uint8Array(MiB + 1).fill(0x61)
    expect(await errorOf(await upload(ctx, matchId, p1, over, 'text/plain'))).toEqual({ status: 413, code: 'payload_too_large' })
    // Declared only: refused before a byte is read.
    const declared = req(`/api/v1/matches/${matchId}/evidence`, {
      method: 'POST',
      headers: { authorization: `Bearer ${p1.tokens.accessToken}`, 'content-type': 'text/plain', 'content-length': String(MiB + 1) },
      body: samples.text(),
    })
    expect(await errorOf(await ctx.handle(declared))).toEqual({ status: 413, code: 'payload_too_large' })
    // Streamed in chunks without a length: refused once the count passes 1 MiB.
    const chunk = new Uint8Array(64 * 1024).fill(0x62)
    let sent = 0
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > MiB) return controller.close()
        sent += chunk.byteLength
        controller.enqueue(chunk)
      },
    })
    const streamed = new Request(`http://localhost/api/v1/matches/${matchId}/evidence`, { method: 'POST', headers: { authorization: `Bearer ${p1.tokens.accessToken}`, 'content-type': 'text/plain' }, body: stream, duplex: 'half' } as RequestInit)
    expect(streamed.headers.get('content-length')).toBeNull()
    expect(await errorOf(await ctx.handle(streamed))).toEqual({ status: 413, code: 'payload_too_large' })
    expect(await evidenceOf(ctx, matchId)).toHaveLength(1)
  })

  test('other routes keep the 64 KiB limit', async () => {
    const [p] = await players(ctx, 1)
    const big = JSON.stringify({ matchId: 'x'.repeat(70 * 1024) })
    const res = await ctx.handle(req('/api/v1/game-sdk/gam_x/sessions', { method: 'POST', headers: { authorization: `Bearer ${p!.tokens.accessToken}`, 'content-type': 'application/json' }, body: big }))
    expect(await errorOf(res)).toEqual({ status: 413, code: 'payload_too_large' })
  })

  test('an account attaches at most 30 files in 24 h over every match: the 31st is 429 with Retry-After, a day later it is taken', async () => {
    const people = await players(ctx, 2)
    const matches = []
    for (let i = 0; i < 7; i++) matches.push(await disputedMatch(ctx, people))
    const [a] = people
    let n = 0
    for (const m of matches.slice(0, 6)) {
      for (let i = 0; i < 5; i++) {
        await attached(ctx, m.matchId, a!, samples.text(`file ${n++}`), 'text/plain')
        ctx.clock.advance(1000)
      }
    }
    const refused = await upload(ctx, matches[6]!.matchId, a!, samples.text('one more'), 'text/plain')
    expect(await errorOf(refused)).toEqual({ status: 429, code: 'rate_limited' })
    // The oldest of the 30 was attached 30 s ago: it leaves the window in 24 h less 30 s.
    expect(refused.headers.get('retry-after')).toBe(String(86_400 - 30))
    ctx.clock.advance((86_400 - 30) * 1000 - 1)
    const later = { ...a!, tokens: await login(ctx, a!.username) } // the access token of a day ago has expired
    expect((await upload(ctx, matches[6]!.matchId, later, samples.text('one more'), 'text/plain')).status).toBe(429)
    ctx.clock.advance(1)
    expect((await upload(ctx, matches[6]!.matchId, later, samples.text('one more'), 'text/plain')).status).toBe(201)
  })
})

describe('housekeeping', () => {
  test('files of a match no longer disputed go after the retention with their unreferenced blobs; a disputed match keeps its own', async () => {
    const kept = await disputedMatch(ctx)
    const gone = await disputedMatch(ctx)
    const shared = samples.png(`shared-${gone.matchId}`)
    const only = samples.jpeg(`only-${gone.matchId}`)
    await attached(ctx, gone.matchId, gone.p1, shared, 'image/png')
    await attached(ctx, gone.matchId, gone.p1, only, 'image/jpeg')
    await attached(ctx, kept.matchId, kept.p1, shared, 'image/png')
    await resolve(gone.matchId)
    const blobs = async (bytes: Uint8Array) => (await db.select().from(tables.evidenceBlobs).where(eq(tables.evidenceBlobs.sha256, sha256(bytes)))).length
    // Within the retention: nothing goes.
    ctx.clock.advance(179 * 86_400_000)
    await housekeeping(ctx.services.storage, ctx.clock, 365, undefined, 180)
    expect(await evidenceOf(ctx, gone.matchId)).toHaveLength(2)
    ctx.clock.advance(2 * 86_400_000)
    const report = await housekeeping(ctx.services.storage, ctx.clock, 365, undefined, 180)
    expect(report.evidence).toBeGreaterThanOrEqual(2)
    expect(await evidenceOf(ctx, gone.matchId)).toEqual([])
    expect(await evidenceOf(ctx, kept.matchId)).toHaveLength(1)
    expect(await blobs(only)).toBe(0)
    expect(await blobs(shared)).toBe(1)
    const [keptFile] = await evidenceOf(ctx, kept.matchId)
    expect(sha256(new Uint8Array(await (await download(ctx, keptFile!.id)).arrayBuffer()))).toBe(sha256(shared))
  })
})
