// The SDK's `arena.matches.attachEvidence` (contract §17): the file's bytes
// go as the body with its type, unchanged; the answer is the stored file; the
// server's refusals arrive as ApiError codes.
import { afterAll, expect, test } from 'bun:test'
import { createArenaApp } from '../helpers/arena'
import { PASSWORD } from '../helpers/auth'
import { disputedMatch, download, evidenceOf, samples, sha256 } from '../helpers/evidence'
import { apiError, sdkClient } from '../helpers/sdk'

const ctx = await createArenaApp()
afterAll(() => ctx.close())

test('a player attaches a file through the SDK: the bytes and type as sent, the stored file answered; refusals as ApiError', async () => {
  const { matchId, p1 } = await disputedMatch(ctx)
  const { client, sent } = sdkClient(ctx)
  await client.auth.login(p1.username, PASSWORD)
  const bytes = new Uint8Array([...samples.png('sdk'), 0, 1, 2, 0xfe, 0xff])

  const evidence = await client.matches.attachEvidence(matchId, bytes, 'image/png')
  expect(evidence).toEqual({ id: expect.stringMatching(/^evd_/), sha256: sha256(bytes), type: 'image/png', size: bytes.byteLength, createdAt: expect.any(String) })
  const request = sent.find((r) => r.method === 'POST' && r.path === `/api/v1/matches/${matchId}/evidence`)!
  expect(request.headers.get('content-type')).toBe('image/png')
  expect(Buffer.from(await (await download(ctx, evidence.id)).arrayBuffer()).equals(Buffer.from(bytes))).toBe(true)
  expect((await evidenceOf(ctx, matchId)).map((e) => e.id)).toEqual([evidence.id])

  // Text and JSON too; the refusals carry the server's codes.
  expect((await client.matches.attachEvidence(matchId, samples.json(), 'application/json')).type).toBe('application/json')
  expect((await apiError(client.matches.attachEvidence(matchId, samples.png(), 'image/jpeg'))).code).toBe('evidence_type_mismatch')
  expect((await apiError(client.matches.attachEvidence('mat_nonesuch', samples.text(), 'text/plain'))).code).toBe('not_found')
  const tooBig = await apiError(client.matches.attachEvidence(matchId, new Uint8Array(1024 * 1024 + 1).fill(0x61), 'text/plain'))
  expect({ status: tooBig.status, code: tooBig.code }).toEqual({ status: 413, code: 'payload_too_large' })
})
