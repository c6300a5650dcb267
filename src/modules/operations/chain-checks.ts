// Whether the two hash chains (the audit log's and the security-event log's)
// hold, as the dashboard tells a studio: "verified" or "broken", and when that
// was found. A check walks the whole chain (every record read and hashed), so
// it is not run on every visit: the last result is remembered, and the
// dashboard walks again only when that result is older than CHECK_MAX_AGE_MS.
// It waits for the walk at most CHECK_WAIT_MS: a chain too long to walk in
// that time finishes in the background and shows at the next visit, so the
// dashboard stays quick. "Verify now" on the audit and security pages walks at
// once and its result is the dashboard's too.
//
// Per process: a result lives in this instance's memory (nothing stored, so no
// row to bound). With several instances each walks for its own dashboard at
// most once per CHECK_MAX_AGE_MS, and a restart forgets the results (the first
// dashboard after it walks again).
import type { Clock } from '../../shared/clock'

export type ChainName = 'audit' | 'security'

export type ChainVerification = { ok: true; rows: number } | { ok: false; rows: number; brokenAt: number; reason: string }

/** One walk's result and when it finished (the server's clock). */
export interface ChainCheck {
  result: ChainVerification
  checkedAt: Date
}

/** A dashboard's result older than this is walked again. */
export const CHECK_MAX_AGE_MS = 5 * 60_000
/** How long the dashboard waits for a walk before answering without it. */
export const CHECK_WAIT_MS = 2_000

export class ChainChecks {
  private readonly last = new Map<ChainName, ChainCheck>()
  private readonly running = new Map<ChainName, Promise<ChainCheck>>()

  constructor(
    private readonly deps: {
      clock: Clock
      /** The full walk of each chain (AuditLog.verify, SecurityEventLog.verify). */
      walks: Record<ChainName, () => Promise<ChainVerification>>
      maxAgeMs?: number
      waitMs?: number
    },
  ) {}

  /** Walks `chain` now and remembers the result; a walk already under way is joined rather than doubled. */
  check(chain: ChainName): Promise<ChainCheck> {
    const under = this.running.get(chain)
    if (under) return under
    const walk = this.deps
      .walks[chain]()
      .then((result) => {
        const check = { result, checkedAt: this.deps.clock.now() }
        this.last.set(chain, check)
        return check
      })
      .finally(() => this.running.delete(chain))
    this.running.set(chain, walk)
    return walk
  }

  /**
   * The dashboard's view of `chain`: the last result, walked again first when
   * it is missing or older than the maximum age, waiting for that walk at most
   * the wait; null while a first walk is still under way.
   */
  async recent(chain: ChainName): Promise<ChainCheck | null> {
    const last = this.last.get(chain)
    const maxAge = this.deps.maxAgeMs ?? CHECK_MAX_AGE_MS
    if (last && this.deps.clock.now().getTime() - last.checkedAt.getTime() < maxAge) return last
    // A walk that fails (the database unavailable) leaves the last result; the next visit tries again.
    const walk = this.check(chain).catch(() => null)
    let timer: ReturnType<typeof setTimeout> | undefined
    const waited = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), this.deps.waitMs ?? CHECK_WAIT_MS)
    })
    try {
      return (await Promise.race([walk, waited])) ?? last ?? null
    } finally {
      clearTimeout(timer)
    }
  }
}
