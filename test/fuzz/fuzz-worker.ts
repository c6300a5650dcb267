// A worker thread of the route fuzz (every-route.test.ts): fuzzes the routes
// the test file's thread hands it, one at a time, each in a fresh world of
// its own (a copy of the template the main thread built: the data dir, and on
// PostgreSQL a database made from the template's on the main thread's
// cluster), and answers each with its outcome. The main thread's test of the
// route judges it, as it judges the routes it fuzzes itself.
//
// Messages in: { route: 'METHOD /path' }. Out: { ready: true } once the routes
// are listed, then { route, outcome } per route, where an error is sent as its
// text ({ message, stack }: what the test rethrows).
import { parentPort, workerData } from 'node:worker_threads'
import { attachPostgres } from '../helpers/postgres'
import type { Template, TemplateValues } from './fuzz-world'

export interface WorkerData {
  /** 1, 2, ...: names this worker's databases apart. */
  index: number
  template: { dir: string; databaseEnv: Record<string, string>; values: TemplateValues }
  seed: number
  /** The main thread's PostgreSQL cluster (PostgreSQL runs). */
  postgresSocketDir?: string
}

export interface WorkerError {
  message: string
  stack?: string
}

/** An error as text, with its causes (fast-check's report carries the failing request's error as its cause). */
function asText(error: unknown): WorkerError {
  if (!(error instanceof Error)) return { message: String(error) }
  let message = error.message
  let cause = error.cause
  for (let depth = 0; cause !== undefined && depth < 5; depth++) {
    message += `\nCaused by: ${cause instanceof Error ? (cause.stack ?? cause.message) : String(cause)}`
    cause = cause instanceof Error ? cause.cause : undefined
  }
  return { message, ...(error.stack !== undefined ? { stack: error.stack } : {}) }
}

const data = workerData as WorkerData
// Before anything opens a database: this thread's databases are made on the main thread's cluster.
if (data.postgresSocketDir !== undefined) attachPostgres(data.postgresSocketDir, `fuzzw${data.index}`)
// Imported after: fuzz-world starts its Steam stub, and the app helpers read the engine, as they load.
const { fuzzRoute, listRoutes } = await import('./fuzz-run')

const port = parentPort!
const routes = new Map((await listRoutes()).map((route) => [`${route.method} ${route.path}`, route]))
// The template stays the main thread's to remove.
const template: Template = { ...data.template, remove: () => {} }

let queue = Promise.resolve()
port.on('message', (message: { route: string }) => {
  // One route at a time, in the order asked.
  queue = queue.then(async () => {
    const route = routes.get(message.route)
    if (route === undefined) {
      port.postMessage({ route: message.route, outcome: { tally: { route: message.route, runs: 0, ms: 0, statuses: new Map(), renewals: 0, slowest: { ms: 0, what: '' } }, error: { message: `fuzz worker: no route ${message.route} in its app` } } })
      return
    }
    const outcome = await fuzzRoute(template, route, data.seed)
    if ('error' in outcome) port.postMessage({ route: message.route, outcome: { ...outcome, error: asText(outcome.error) } })
    else port.postMessage({ route: message.route, outcome })
  })
})
port.postMessage({ ready: true })
