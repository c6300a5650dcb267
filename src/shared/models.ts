// TypeBox models shared by every module: the error envelope of every response, the empty body.
import { t } from 'elysia'

export const ErrorResponse = t.Object(
  {
    error: t.Object({
      code: t.String(),
      message: t.String(),
      status: t.Integer(),
      details: t.Optional(t.Array(t.Object({ path: t.String(), message: t.String() }))),
      until: t.Optional(t.Nullable(t.String({ description: 'account_banned: when the ban ends (ISO-8601), null until an operator lifts it' }))),
    }),
  },
  { $id: 'Error', description: 'Every error, whatever the status: a code to act on, a message for people, the status again, for validation the fields at fault, and for account_banned until when' },
)

/** The body of a route that takes no input but is a POST: `{}` (or nothing, where the route says so with `optionalBody`). */
export const EmptyBody = t.Object({}, { $id: 'EmptyBody', description: 'an empty object: `{}`' })
