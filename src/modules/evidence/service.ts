// Evidence for disputes (contract §17): a participant of a disputed match
// attaches up to MAX_EVIDENCE_PER_PARTICIPANT files (the route's body is the
// file, at most 1 MiB: src/plugins/json-body.ts), of a type its bytes prove.
// Each file is stored once per content: evidence_blobs keyed by SHA-256 (a
// second upload of the same bytes adds a row to match_evidence, not a blob),
// the blob and the row in one unit of work. Operators read the list beside
// the dispute and download a file as an attachment, never rendered inline.
// Housekeeping deletes the files of matches no longer disputed after the
// retention, and the blobs nothing references any more.
import type { Storage } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { toIso } from '../../shared/clock'
import { AppError } from '../../shared/errors'
import { newId } from '../../shared/ids'
import type { Evidence, MatchEvidence } from './model'
import { bytesAre, evidenceTypeOf } from './sniff'
import type { EvidenceRecord, EvidenceType } from './store'

/** Files one participant may attach to one match. */
export const MAX_EVIDENCE_PER_PARTICIPANT = 5
/** Files one account may attach in any 24 h, over every match: what one account can add to the database is bounded. */
export const MAX_EVIDENCE_PER_DAY = 30
const DAY_MS = 86_400_000

export interface EvidenceServiceDeps {
  storage: Storage
  clock: Clock
}

/** What a download answers: the bytes and the headers that keep a browser from rendering them. */
export interface EvidenceDownload {
  bytes: Uint8Array
  headers: Record<string, string>
}

const EXTENSIONS: Record<EvidenceType, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'video/webm': 'webm', 'text/plain': 'txt', 'application/json': 'json' }

function forOperators(row: EvidenceRecord): MatchEvidence {
  return { id: row.id, participantId: row.participantId, userId: row.userId, sha256: row.sha256, type: row.type, size: row.size, createdAt: toIso(row.createdAt) }
}

export class EvidenceService {
  constructor(private readonly deps: EvidenceServiceDeps) {}

  /**
   * Attaches `bytes` (the request's body; null when empty) to `matchId` for
   * `userId`. Checked in this order: the type (415, 422 empty or mismatch),
   * then in the unit of work the match (404), the seat (403), the dispute
   * (409), the participant's 5 (409 evidence_limit), the account's 30 a day
   * (429 with Retry-After).
   */
  async attach(input: { matchId: string; userId: string; contentType: string | null; bytes: Uint8Array | null }): Promise<{ evidence: Evidence }> {
    const type = evidenceTypeOf(input.contentType)
    const bytes = input.bytes
    if (bytes === null || bytes.byteLength === 0) {
      throw new AppError('validation_failed', 'Request failed validation', { details: [{ path: 'body', message: 'The file is empty' }] })
    }
    if (!bytesAre(type, bytes)) throw new AppError('evidence_type_mismatch', `The bytes are not ${type}`)
    const sha256 = new Bun.CryptoHasher('sha256').update(bytes).digest('hex')
    return this.deps.storage.write(async (tx) => {
      const match = await tx.matches.byId(input.matchId)
      if (!match) throw new AppError('not_found', 'No such match')
      const seats = [match.slot1ParticipantId, match.slot2ParticipantId].filter((id): id is string => id !== null)
      const participantId = seats.length === 0 ? null : await tx.matches.seatOf(seats, input.userId)
      if (participantId === null) throw new AppError('not_a_participant', 'You are not seated in this match')
      if (match.status !== 'disputed') throw new AppError('match_not_disputed', `Match is ${match.status}: evidence is for a disputed match`)
      if ((await tx.evidence.countOf(match.id, participantId)) >= MAX_EVIDENCE_PER_PARTICIPANT) {
        throw new AppError('evidence_limit', `At most ${MAX_EVIDENCE_PER_PARTICIPANT} files per participant and match`)
      }
      const now = this.deps.clock.now()
      const recent = await tx.evidence.uploadsSince(input.userId, new Date(now.getTime() - DAY_MS))
      if (recent.count >= MAX_EVIDENCE_PER_DAY) {
        const freeAt = (recent.oldest ?? now).getTime() + DAY_MS
        const retryAfter = Math.max(1, Math.ceil((freeAt - now.getTime()) / 1000))
        throw new AppError('rate_limited', `At most ${MAX_EVIDENCE_PER_DAY} files per account in 24 hours`, { headers: { 'retry-after': String(retryAfter) } })
      }
      await tx.evidence.insertBlobIfAbsent({ sha256, bytes, size: bytes.byteLength, createdAt: now })
      const row: EvidenceRecord = { id: newId('evidence'), matchId: match.id, participantId, userId: input.userId, sha256, type, size: bytes.byteLength, createdAt: now }
      await tx.evidence.insert(row)
      return { evidence: { id: row.id, sha256, type, size: row.size, createdAt: toIso(now) } }
    })
  }

  /** A match's files, as operators see them beside the dispute. */
  async ofMatch(matchId: string): Promise<MatchEvidence[]> {
    return (await this.deps.storage.read.evidence.ofMatch(matchId)).map(forOperators)
  }

  /** How many files each of these matches has (the disputes list). */
  async countsOf(matchIds: readonly string[]): Promise<Map<string, number>> {
    return this.deps.storage.read.evidence.countsOf(matchIds)
  }

  /**
   * One file for an operator: its bytes, with headers that make a browser
   * save it rather than show it (an attachment, no sniffing, a sandbox if
   * it is opened anyway): a text file of HTML is never a page of ours.
   */
  async download(id: string): Promise<EvidenceDownload> {
    const row = await this.deps.storage.read.evidence.withBytes(id)
    if (!row) throw new AppError('not_found', 'No such evidence')
    const contentType = row.type === 'text/plain' || row.type === 'application/json' ? `${row.type}; charset=utf-8` : row.type
    return {
      bytes: row.bytes,
      headers: {
        'content-type': contentType,
        'content-length': String(row.bytes.byteLength),
        'content-disposition': `attachment; filename="${row.id}.${EXTENSIONS[row.type]}"`,
        'x-content-type-options': 'nosniff',
        'content-security-policy': 'sandbox',
        'cache-control': 'no-store',
        'x-evidence-sha256': row.sha256,
      },
    }
  }
}

/** The download as an HTTP answer (the admin route's and the console's). */
export function downloadResponse(download: EvidenceDownload): Response {
  return new Response(download.bytes as Uint8Array<ArrayBuffer>, { status: 200, headers: download.headers })
}
