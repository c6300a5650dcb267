// What the event plane's two loops (the long poll, ./events.ts, and the
// socket, ./socket.ts) share: a pause that stop() can cut short, and the
// app's onError, which must never end a loop.

/** A wait between attempts (a back-off, a retry later) that `end()` cuts short; one at a time. */
export class Pause {
  private cut: (() => void) | undefined

  constructor(private readonly stopped: () => boolean) {}

  /** Resolves after `ms`, at `end()`, or at once when already stopped. */
  for(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      if (this.stopped()) return resolve()
      const timer = setTimeout(resolve, ms)
      this.cut = () => {
        clearTimeout(timer)
        resolve()
      }
    }).finally(() => (this.cut = undefined))
  }

  /** Ends the pause under way, if any. */
  end(): void {
    this.cut?.()
  }
}

/** Tells the app's `onError` (when not `muted()`); an onError that throws must not end, or crash, the loop. */
export function teller(onError: ((error: unknown) => void) | undefined, muted: () => boolean = () => false): (error: unknown) => void {
  return (error) => {
    if (muted()) return
    try {
      onError?.(error)
    } catch {
      // Ignored: the loop goes on.
    }
  }
}
