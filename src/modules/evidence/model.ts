// The shapes of evidence (contract §17): what its upload answers, and what an
// operator sees of a disputed match's files.
import { t, type Static } from 'elysia'
import { MatchView } from '../matchmaking/model'

const Instant = t.String({ description: 'ISO 8601, UTC' })
const EvidenceTypeSchema = t.Union([t.Literal('image/png'), t.Literal('image/jpeg'), t.Literal('video/webm'), t.Literal('text/plain'), t.Literal('application/json')])

/** What a file is, wherever it is shown. */
const fileFields = {
  sha256: t.String({ description: 'hex SHA-256 of the bytes' }),
  type: EvidenceTypeSchema,
  size: t.Integer({ description: 'bytes' }),
  createdAt: Instant,
}

export const Evidence = t.Object({ id: t.String(), ...fileFields }, { $id: 'Evidence' })
export type Evidence = Static<typeof Evidence>

export const EvidenceResponse = t.Object({ evidence: Evidence })

/** A file as operators see it beside the dispute: whose it is. */
export const MatchEvidence = t.Object({ id: t.String(), participantId: t.String(), userId: t.String(), ...fileFields }, { $id: 'MatchEvidence' })
export type MatchEvidence = Static<typeof MatchEvidence>

/** GET /admin/matches/{id}: the match, and the files its players attached (download each at GET /admin/evidence/{id}). */
export const AdminMatchViewResponse = t.Object({ match: MatchView, evidence: t.Array(MatchEvidence) })

export const EvidenceParams = t.Object({ id: t.String({ minLength: 1, maxLength: 64 }) })
