// What the console's operations pages (dashboard, tournaments, disputes,
// withdrawals, games) share: the page frame for the signed-in operator, the
// way a failed action is shown again, and how times and roles read.
import { t } from 'elysia'
import type { Elysia } from 'elysia'
import type { ComponentChildren } from 'preact'
import { AppError } from '../../shared/errors'
import type { Actor } from '../../modules/audit/log'
import { roleAllows, type OperatorRole } from '../../modules/operators/roles'
import { consolePage, errorMessage, Time } from '../page'
import { consoleSession } from '../session'

/** The console module's instance, as a function plugin receives it. */
export type ConsoleApp = Elysia<'/console'>

export const NoticeQuery = t.Object({ notice: t.Optional(t.String({ maxLength: 200 })) })
export const IdParams = t.Object({ id: t.String({ minLength: 1, maxLength: 64 }) })
/** A reason typed by an operator: what every affected player may read. */
export const Reason = t.String({ minLength: 1, maxLength: 500 })

/** Whether the signed-in operator of this request has `role` (hides buttons; the route checks again). */
export function can(request: Request, role: OperatorRole): boolean {
  return roleAllows(consoleSession(request).actor.operator.role, role)
}

/** The signed-in operator acting through this request: the `by` of every service method it calls (audited as `console`). */
export function actorOf(request: Request): Actor {
  return consoleSession(request).actor
}

/** A console page for the signed-in operator (../page.tsx's frame): navigation, notice (a code of ../notices.ts), error, content. */
export function opsPage(request: Request, props: { title: string; section: string; notice?: string | null; error?: string | null; status?: number; children: ComponentChildren }): Response {
  return consolePage(request, { title: props.title, section: props.section, query: { notice: props.notice ?? undefined }, status: props.status }, props.children, { error: props.error ?? null })
}

/** What an operator reads when a service refused: its message, and which field was wrong. */
export const errorText = errorMessage

/**
 * Runs a form's action; a refusal by the service (an AppError: a 4xx such as
 * a match no longer disputed) becomes `onRefused`'s page saying why, with the
 * error's status. Anything else is a real failure and goes to the error plugin.
 */
export async function attempt(action: () => Promise<Response>, onRefused: (error: AppError) => Response | Promise<Response>): Promise<Response> {
  try {
    return await action()
  } catch (error) {
    if (!(error instanceof AppError) || error.status >= 500) throw error
    return onRefused(error)
  }
}

/** A time as the console shows it (../page.tsx's Time), from a Date or an ISO string. */
export function When({ at }: { at: string | Date | null }) {
  return <Time iso={at === null ? null : typeof at === 'string' ? at : at.toISOString()} />
}

/** Bytes for people: 1.4 MB. */
export function formatBytes(bytes: number): string {
  const units = ['bytes', 'KB', 'MB', 'GB', 'TB']
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return unit === 0 ? `${value} bytes` : `${value.toFixed(1)} ${units[unit]}`
}
