// Evidence for disputes (contract §17): a disputed match, sample files of
// each type, and the upload and download through the real routes.
import { expect } from 'bun:test'
import { req } from './app'
import { admin, claim, createGame, players, playerOf, startedTournament, type Player } from './arena'
import type { Handler } from './app'
import type { Evidence, MatchEvidence } from '../../src/modules/evidence/model'

/** Smallest files of each type that the type check takes (the bytes behind `tag` make each distinct). */
export const samples = {
  png: (tag = '') => new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...new TextEncoder().encode(`IHDR${tag}`)]),
  jpeg: (tag = '') => new Uint8Array([0xff, 0xd8, 0xff, 0xe0, ...new TextEncoder().encode(`JFIF${tag}`)]),
  /** An EBML header (size 0x9f... here 4 + 3 + 4 bytes) whose DocType is `docType`, then a Segment id. */
  webm: (docType = 'webm') => {
    const name = new TextEncoder().encode(docType)
    const docTypeElement = [0x42, 0x82, 0x80 | name.length, ...name]
    const version = [0x42, 0x86, 0x81, 0x01]
    const header = [...version, ...docTypeElement]
    return new Uint8Array([0x1a, 0x45, 0xdf, 0xa3, 0x80 | header.length, ...header, 0x18, 0x53, 0x80, 0x67])
  },
  text: (text = 'round 3: he quit at 2-1') => new TextEncoder().encode(text),
  json: (value: unknown = { log: ['move 1', 'move 2'] }) => new TextEncoder().encode(JSON.stringify(value)),
}

export function sha256(bytes: Uint8Array): string {
  return new Bun.CryptoHasher('sha256').update(bytes).digest('hex')
}

/** A two-player cup whose one match both players claimed to have won: disputed. */
export async function disputedMatch(ctx: Handler, people?: Player[]): Promise<{ matchId: string; gameId: string; p1: Player; p2: Player }> {
  const { game, gameKey } = await createGame(ctx, `Evidence ${crypto.randomUUID().slice(0, 8)}`)
  const seated = people ?? (await players(ctx, 2))
  const t = await startedTournament(ctx, game.id, seated)
  const match = t.matches[0]!
  const p1 = playerOf(t, seated, match.slot1ParticipantId!)
  const p2 = playerOf(t, seated, match.slot2ParticipantId!)
  await claim(ctx, game.id, gameKey, p1, match.id, { outcome: 'WIN', winnerParticipantId: match.slot1ParticipantId })
  const second = await claim(ctx, game.id, gameKey, p2, match.id, { outcome: 'WIN', winnerParticipantId: match.slot2ParticipantId })
  expect(second.decision).toBe('dispute')
  return { matchId: match.id, gameId: game.id, p1, p2 }
}

export function upload(ctx: Handler, matchId: string, player: Player, bytes: Uint8Array | null, type: string | null): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${player.tokens.accessToken}` }
  if (type !== null) headers['content-type'] = type
  return ctx.handle(req(`/api/v1/matches/${matchId}/evidence`, { method: 'POST', headers, ...(bytes === null ? {} : { body: bytes as Uint8Array<ArrayBuffer> }) }))
}

/** Uploads and expects 201; the evidence answered. */
export async function attached(ctx: Handler, matchId: string, player: Player, bytes: Uint8Array, type: string): Promise<Evidence> {
  const res = await upload(ctx, matchId, player, bytes, type)
  if (res.status !== 201) throw new Error(`upload answered ${res.status}: ${await res.text()}`)
  return ((await res.json()) as { evidence: Evidence }).evidence
}

/** The admin match view's evidence list. */
export async function evidenceOf(ctx: Handler, matchId: string): Promise<MatchEvidence[]> {
  const res = await ctx.handle(req(`/api/v1/admin/matches/${matchId}`, { headers: admin }))
  expect(res.status).toBe(200)
  return ((await res.json()) as { evidence: MatchEvidence[] }).evidence
}

/** The operator download of one file. */
export function download(ctx: Handler, evidenceId: string): Promise<Response> {
  return ctx.handle(req(`/api/v1/admin/evidence/${evidenceId}`, { headers: admin }))
}
