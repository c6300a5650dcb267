// What the evidence module needs from the database (contract §17): the files
// players attach to a disputed match, stored once per content (SHA-256).
/** The types a file may be (the schema's match_evidence.type). */
export type EvidenceType = 'image/png' | 'image/jpeg' | 'video/webm' | 'text/plain' | 'application/json'

/** One file attached to a match, without its bytes. */
export interface EvidenceRecord {
  id: string
  matchId: string
  participantId: string
  userId: string
  sha256: string
  type: EvidenceType
  size: number
  createdAt: Date
}

export interface EvidenceStore {
  /** Stores a file's bytes under their SHA-256 unless a row holds them already (a second upload of one file stores nothing more). */
  insertBlobIfAbsent(blob: { sha256: string; bytes: Uint8Array; size: number; createdAt: Date }): Promise<void>
  insert(evidence: EvidenceRecord): Promise<void>
  /** How many files a participant attached to a match. */
  countOf(matchId: string, participantId: string): Promise<number>
  /** A user's uploads after `since` (any match): how many, and the oldest's time (null: none). */
  uploadsSince(userId: string, since: Date): Promise<{ count: number; oldest: Date | null }>
  /** A match's files, oldest first. */
  ofMatch(matchId: string): Promise<EvidenceRecord[]>
  /** How many files each of these matches has. */
  countsOf(matchIds: readonly string[]): Promise<Map<string, number>>
  /** One file with its bytes; null when there is none. */
  withBytes(id: string): Promise<(EvidenceRecord & { bytes: Uint8Array }) | null>
  /**
   * Housekeeping: deletes the files of matches not disputed any more attached
   * before `cutoff`, then every blob no file references; how many of each.
   */
  prune(cutoff: Date): Promise<{ evidence: number; evidenceBlobs: number }>
}
