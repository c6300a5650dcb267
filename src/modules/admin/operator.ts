// What every operator route shares: the header that carries the token, the
// 401 a route without it answers, and the route documentation naming both.
import { requiredHeaders } from '../../plugins/openapi'

export const ADMIN_TOKEN_HEADER = 'x-admin-token'
/** Every operator route: the token is checked before anything else, validation included. */
export const OPERATOR = { 401: ['unauthorized'] } as const

/** A route's `detail`: its summary, in the admin tag, with the token as a required header. */
export const operatorDetail = (summary: string) => ({ tags: ['admin'], summary, parameters: requiredHeaders(ADMIN_TOKEN_HEADER) })
