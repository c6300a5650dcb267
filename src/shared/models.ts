// TypeBox models shared by every module's responses.
import { t } from 'elysia'

export const ErrorResponse = t.Object(
  {
    error: t.Object({
      code: t.String(),
      message: t.String(),
      status: t.Integer(),
      details: t.Optional(t.Array(t.Object({ path: t.String(), message: t.String() }))),
    }),
  },
  { $id: 'Error', description: 'Every error, whatever the status: a code to act on, a message for people, the status again, and for validation the fields at fault' },
)
