// TypeBox models of the PIN, PIN-session and security-event routes. The client
// SDK (packages/sdk) mirrors them in its own types; test/sdk/wire-types.* fail
// when the two drift apart.
import { t, type Static } from 'elysia'

export const IntegrityLevel = t.Union([t.Literal('SAFE'), t.Literal('WARN'), t.Literal('COMPROMISED')])
export type IntegrityLevel = Static<typeof IntegrityLevel>

export const Withdrawal = t.Object(
  {
    id: t.String(),
    status: t.Union(
      [t.Literal('awaiting_approval'), t.Literal('held'), t.Literal('pending_signature'), t.Literal('signed'), t.Literal('failed'), t.Literal('rejected')],
      {
        description:
          'awaiting_approval: above the approval threshold, waiting for an operator; held: a first withdrawal to this address, signed when releasesAt comes; pending_signature: being signed; signed, failed (custody refused it, funds returned), rejected (an operator refused it, funds returned) are final',
      },
    ),
    amount: t.String(),
    asset: t.String(),
    destinationAddress: t.String(),
    idempotencyKey: t.String(),
    signature: t.Optional(t.String({ description: 'base58 Ed25519 signature over the canonical withdrawal message' })),
    failureReason: t.Optional(t.String({ description: 'why custody refused it, once `failed`' })),
    reason: t.Optional(
      t.Union([t.Literal('approval_required'), t.Literal('new_destination')], {
        description: 'why it is not signed yet, while awaiting_approval (approval_required) or held (new_destination)',
      }),
    ),
    releasesAt: t.Optional(t.String({ description: 'when its new-destination hold ends (ISO 8601), while awaiting_approval or held with one' })),
    rejectionReason: t.Optional(t.String({ description: "the operator's reason, once `rejected`" })),
    createdAt: t.String(),
  },
  { $id: 'Withdrawal' },
)
export type Withdrawal = Static<typeof Withdrawal>

export const PinVerifyResponse = t.Object(
  {
    valid: t.Boolean(),
    locked: t.Boolean(),
    attempt: t.Integer({ description: 'consecutive failures; 0 after a valid PIN' }),
    withdrawal: t.Optional(Withdrawal),
  },
  { $id: 'PinVerifyResponse' },
)
export type PinVerifyResponse = Static<typeof PinVerifyResponse>

export const VerifyBody = t.Object(
  {
    pin: t.String({ minLength: 1, maxLength: 16 }),
    amount: t.String({ maxLength: 64, description: 'decimal string' }),
    destinationAddress: t.String({ minLength: 1, maxLength: 64 }),
    idempotencyKey: t.String({ minLength: 1, maxLength: 128 }),
  },
  { $id: 'VerifyBody' },
)
export type VerifyBody = Static<typeof VerifyBody>

export const PinSessionResponse = t.Object({ sessionId: t.String(), sessionToken: t.String(), expiresAt: t.String(), maxAttempts: t.Integer() })
export type PinSessionResponse = Static<typeof PinSessionResponse>

export const SetPinBody = t.Object(
  {
    pin: t.String({ pattern: '^[0-9]{4,8}$', description: '4 to 8 digits, not a common PIN' }),
    password: t.String({ minLength: 1, maxLength: 1024, description: 'the account password, to re-authenticate' }),
  },
  { $id: 'SetPinBody' },
)

export const SecurityEventBody = t.Object(
  {
    kind: t.String({ pattern: '^[A-Z][A-Z0-9_]{0,63}$', description: 'UPPER_SNAKE, e.g. ENV_COMPROMISED' }),
    level: t.Optional(IntegrityLevel),
    details: t.Optional(t.Record(t.String(), t.Unknown())),
    occurredAt: t.Optional(t.String({ maxLength: 40 })),
  },
  { $id: 'SecurityEventBody' },
)
export type SecurityEventBody = Static<typeof SecurityEventBody>

export const SecurityEventAccepted = t.Object({ accepted: t.Boolean({ description: 'false when shed under overload' }) })
