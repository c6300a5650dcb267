// Batching the calls of one event-loop turn: the requests that arrive
// together (Bun hands a turn's readable sockets to their handlers one after
// another) each make the same kind of call, and the calls made before the
// turn ends go out as one, such as one database statement for every
// request's session lookup instead of one statement each. Nothing is kept
// from one batch to the next: it is not a cache.

export interface TurnBatchOptions {
  /** Calls in one batch at most; the call that fills a batch sends it at once, and later calls start the next. */
  maxSize: number
}

/**
 * A function that takes one input and answers it from a batch: every call
 * made until the end of the current event-loop turn (setImmediate) joins the
 * batch, and `run` gets their inputs in call order and must answer one output
 * for each, in the same order. If `run` throws or rejects, or answers a
 * different number of outputs, every call of that batch (and only of that
 * batch) rejects with that error. A batch is never empty. Batches run
 * concurrently: `run` must not assume one at a time.
 *
 * The cost is a call's wait for the end of its turn: the other handlers of
 * that turn run first (measured in docs/performance.md, "PostgreSQL: the
 * authenticated read (issue 43)").
 */
export function batchTurn<I, O>(run: (inputs: readonly I[]) => Promise<readonly O[]>, options: TurnBatchOptions): (input: I) => Promise<O> {
  if (!(options.maxSize >= 1)) throw new Error('batchTurn: maxSize must be at least 1')
  let inputs: I[] = []
  let waiting: PromiseWithResolvers<O>[] = []
  let scheduled: ReturnType<typeof setImmediate> | undefined

  const send = () => {
    if (scheduled !== undefined) clearImmediate(scheduled)
    scheduled = undefined
    const batch = inputs
    const callers = waiting
    inputs = []
    waiting = []
    let answered: Promise<readonly O[]>
    try {
      answered = run(batch)
    } catch (error) {
      answered = Promise.reject(error)
    }
    answered.then(
      (outputs) => {
        if (outputs.length !== callers.length) {
          const error = new Error(`batchTurn: ${callers.length} calls answered with ${outputs.length} outputs`)
          for (const caller of callers) caller.reject(error)
          return
        }
        for (let i = 0; i < callers.length; i++) callers[i]!.resolve(outputs[i]!)
      },
      (error: unknown) => {
        for (const caller of callers) caller.reject(error)
      },
    )
  }

  return (input) => {
    const caller = Promise.withResolvers<O>()
    inputs.push(input)
    waiting.push(caller)
    if (inputs.length >= options.maxSize) send()
    else scheduled ??= setImmediate(send)
    return caller.promise
  }
}
