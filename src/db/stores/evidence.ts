// Evidence attached to disputes (src/modules/evidence/store.ts), on either
// engine: the same queries on both, nothing on a hot path.
import { and, asc, count, eq, gt, inArray, lt, min, ne, notInArray } from 'drizzle-orm'
import type { EvidenceRecord, EvidenceStore } from '../../modules/evidence/store'
import { Queries } from './scope'

export class EvidenceQueries extends Queries implements EvidenceStore {
  async insertBlobIfAbsent(blob: { sha256: string; bytes: Uint8Array; size: number; createdAt: Date }): Promise<void> {
    await this.db
      .insert(this.t.evidenceBlobs)
      .values({ ...blob, bytes: Buffer.from(blob.bytes.buffer, blob.bytes.byteOffset, blob.bytes.byteLength) })
      .onConflictDoNothing({ target: this.t.evidenceBlobs.sha256 })
  }

  async insert(evidence: EvidenceRecord): Promise<void> {
    await this.db.insert(this.t.matchEvidence).values(evidence)
  }

  async countOf(matchId: string, participantId: string): Promise<number> {
    const { matchEvidence } = this.t
    const [row] = await this.db
      .select({ n: count() })
      .from(matchEvidence)
      .where(and(eq(matchEvidence.matchId, matchId), eq(matchEvidence.participantId, participantId)))
    return Number(row?.n ?? 0)
  }

  async uploadsSince(userId: string, since: Date): Promise<{ count: number; oldest: Date | null }> {
    const { matchEvidence } = this.t
    const [row] = await this.db
      .select({ n: count(), oldest: min(matchEvidence.createdAt) })
      .from(matchEvidence)
      .where(and(eq(matchEvidence.userId, userId), gt(matchEvidence.createdAt, since)))
    return { count: Number(row?.n ?? 0), oldest: row?.oldest ?? null }
  }

  async ofMatch(matchId: string): Promise<EvidenceRecord[]> {
    const { matchEvidence } = this.t
    return this.db.select().from(matchEvidence).where(eq(matchEvidence.matchId, matchId)).orderBy(asc(matchEvidence.createdAt), asc(matchEvidence.id))
  }

  async countsOf(matchIds: readonly string[]): Promise<Map<string, number>> {
    if (matchIds.length === 0) return new Map()
    const { matchEvidence } = this.t
    const rows = await this.db
      .select({ matchId: matchEvidence.matchId, n: count() })
      .from(matchEvidence)
      .where(inArray(matchEvidence.matchId, [...matchIds]))
      .groupBy(matchEvidence.matchId)
    return new Map(rows.map((r) => [r.matchId, Number(r.n)]))
  }

  async withBytes(id: string): Promise<(EvidenceRecord & { bytes: Uint8Array }) | null> {
    const { matchEvidence, evidenceBlobs } = this.t
    const [row] = await this.db
      .select({ evidence: matchEvidence, bytes: evidenceBlobs.bytes })
      .from(matchEvidence)
      .innerJoin(evidenceBlobs, eq(evidenceBlobs.sha256, matchEvidence.sha256))
      .where(eq(matchEvidence.id, id))
    return row ? { ...row.evidence, bytes: row.bytes } : null
  }

  async prune(cutoff: Date): Promise<{ evidence: number; evidenceBlobs: number }> {
    const { matchEvidence, evidenceBlobs, matches } = this.t
    // A match disputed again keeps its files, however old.
    const stale = this.db.select({ id: matches.id }).from(matches).where(ne(matches.status, 'disputed'))
    const evidence = await this.db
      .delete(matchEvidence)
      .where(and(lt(matchEvidence.createdAt, cutoff), inArray(matchEvidence.matchId, stale)))
      .returning({ id: matchEvidence.id })
    // sha256 is never null, so NOT IN is exact.
    const blobs = await this.db
      .delete(evidenceBlobs)
      .where(notInArray(evidenceBlobs.sha256, this.db.select({ sha256: matchEvidence.sha256 }).from(matchEvidence)))
      .returning({ sha256: evidenceBlobs.sha256 })
    return { evidence: evidence.length, evidenceBlobs: blobs.length }
  }
}
