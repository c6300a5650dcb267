import { t, type Static } from 'elysia'
import { MAILBOX_LIMIT } from './mailbox'

export const MailboxQuery = t.Object({
  to: t.Optional(t.String({ minLength: 1, maxLength: 254, description: 'the address (any case); absent: the newest mail to anyone' })),
})

export const MailView = t.Object(
  {
    id: t.String(),
    to: t.String(),
    subject: t.String(),
    text: t.String({ description: 'the plain-text body, with the code it carries' }),
    createdAt: t.String(),
  },
  { $id: 'Mail' },
)
/** A mail as the dev mailbox shows it (contract §8). */
export type MailView = Static<typeof MailView>

export const MailboxResponse = t.Object({ messages: t.Array(MailView, { description: `newest first, at most ${MAILBOX_LIMIT}` }) })
