// A queue's settings given outside the admin API (the console's form, `arena
// queue`): checked against the API's own schemas, so a setting the route
// would refuse with 422 is refused the same way, with the same `body/...`
// paths (the service checks the rest: the rules between fields).
import type { TObject } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { invalid } from '../games/registration'
import { CreateQueueBody, UpdateQueueBody } from './model'

function checked<T>(schema: TObject, body: Record<string, unknown>): T {
  if (Value.Check(schema, body)) return body as T
  const seen = new Set<string>()
  const problems: { path: string; message: string }[] = []
  for (const error of Value.Errors(schema, body)) {
    const path = `body${error.path}`
    if (seen.has(path)) continue
    seen.add(path)
    problems.push({ path, message: error.message })
  }
  throw invalid(problems)
}

/** A new queue's body, as POST /api/v1/admin/games/{id}/queues checks it (422 validation_failed otherwise). */
export const checkedCreateQueue = (body: Record<string, unknown>): CreateQueueBody => checked(CreateQueueBody, body)
/** A queue's changes, as PATCH /api/v1/admin/games/{id}/queues/{name} checks them. */
export const checkedUpdateQueue = (body: Record<string, unknown>): UpdateQueueBody => checked(UpdateQueueBody, body)
