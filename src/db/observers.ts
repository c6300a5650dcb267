// Who hears of what an engine does (for /metrics): each commit, with how many
// units of work it made durable and how long it held the transaction, and
// each unit of work run again after losing a race, and what a committed unit
// of work counted (Transaction.count). Observers are told
// synchronously on the write path, so they must be cheap and must not throw;
// one that throws is ignored (the write is durable and answered anyway).
import type { Counted, StorageObserver } from './storage'

export class StorageObservers implements StorageObserver {
  private readonly observers = new Set<StorageObserver>()

  add(observer: StorageObserver): () => void {
    this.observers.add(observer)
    return () => this.observers.delete(observer)
  }

  committed(units: number, seconds: number): void {
    for (const observer of this.observers) {
      try {
        observer.committed(units, seconds)
      } catch {
        // Metrics only.
      }
    }
  }

  retried(): void {
    for (const observer of this.observers) {
      try {
        observer.retried()
      } catch {
        // Metrics only.
      }
    }
  }

  counted<C extends keyof Counted>(counter: C, label: Counted[C], n: number): void {
    for (const observer of this.observers) {
      try {
        observer.counted?.(counter, label, n)
      } catch {
        // Metrics only.
      }
    }
  }
}
