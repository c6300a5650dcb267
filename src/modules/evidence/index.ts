// Evidence for disputes (contract §17): the player's upload, and the
// operators' download (a function plugin on the operator module's instance,
// so its credential check guards it). The upload's body is the file itself:
// src/plugins/json-body.ts reads it raw, up to 1 MiB, for this route only.
import { Elysia, t } from 'elysia'
import { authGuard } from '../../plugins/auth'
import { BEARER, BEARER_SECURITY, errors, INVALID, STORAGE } from '../../plugins/openapi'
import { MAX_EVIDENCE_BYTES } from '../../plugins/json-body'
import type { AuthService } from '../auth/service'
import { OPERATOR, operatorRoute } from '../admin/operator'
import { EvidenceParams, EvidenceResponse } from './model'
import { downloadResponse, type EvidenceService } from './service'

export function evidenceModule(auth: AuthService, evidence: EvidenceService) {
  return new Elysia({ name: 'arena/evidence', prefix: '/api/v1' }).use(authGuard(auth)).post(
    '/matches/:id/evidence',
    async ({ params, request, body, auth: { user }, set }) => {
      const result = await evidence.attach({
        matchId: params.id,
        userId: user.id,
        contentType: request.headers.get('content-type'),
        bytes: body instanceof Uint8Array ? body : null,
      })
      set.status = 201
      return result
    },
    {
      auth: true,
      params: EvidenceParams,
      response: {
        201: EvidenceResponse,
        ...errors(BEARER, INVALID, {
          403: ['not_a_participant'],
          404: ['not_found'],
          409: ['match_not_disputed', 'evidence_limit'],
          415: ['unsupported_media_type'],
          422: ['evidence_type_mismatch'],
        }, STORAGE),
      },
      detail: {
        tags: ['matches'],
        summary: `Attach a file to a disputed match the caller plays in: the body is the file (at most ${MAX_EVIDENCE_BYTES} bytes), its content-type one of image/png, image/jpeg, video/webm, text/plain, application/json; at most 5 per participant and match, 30 per account a day`,
        security: BEARER_SECURITY,
        requestBody: {
          required: true,
          content: Object.fromEntries(
            ['image/png', 'image/jpeg', 'video/webm', 'text/plain', 'application/json'].map((type) => [type, { schema: { type: 'string', format: 'binary', maxLength: MAX_EVIDENCE_BYTES } }]),
          ),
        },
      },
    },
  )
}

export function adminEvidenceRoutes(evidence: EvidenceService) {
  return (app: Elysia<'/api/v1/admin'>) =>
    app.get('/evidence/:id', async ({ params }) => downloadResponse(await evidence.download(params.id)), {
      params: EvidenceParams,
      response: { 200: t.Unknown({ description: 'the file\'s bytes, as an attachment' }), ...errors(OPERATOR, INVALID, { 404: ['not_found'] }, STORAGE) },
      ...operatorRoute('viewer', 'Download one evidence file: its bytes with its type, as an attachment (nosniff, sandboxed), never shown inline'),
    })
}
