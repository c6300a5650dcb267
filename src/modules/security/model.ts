// TypeBox models of the PIN, PIN-session and security-event routes. The client
// SDK (packages/sdk) mirrors them in its own types; test/sdk/wire-types.* fail
// when the two drift apart. The PIN verify's body and answer, and the
// withdrawal it creates, are the wallet's (../wallet/model.ts).
import { t, type Static } from 'elysia'

export const IntegrityLevel = t.Union([t.Literal('SAFE'), t.Literal('WARN'), t.Literal('COMPROMISED')])
export type IntegrityLevel = Static<typeof IntegrityLevel>

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
