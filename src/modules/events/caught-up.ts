// Caught-up polls, remembered: a client that has read every event polls the
// same cursor again and again, and each of those polls read the database to
// find nothing. Here a poll that found nothing is remembered for its user,
// cursor and topics, and the same poll within RECHECK_MS answers the same
// empty page without reading.
//
// What keeps it true:
// - Every event this process appends wakes its user once the commit is
//   durable, in the same synchronous step as the read connection starts to
//   see it (src/db/sqlite/group-commit.ts, `durability`), and
//   a wake-up forgets everything remembered for the user: no request can see
//   the commit and still the remembered empty page. A read that was under way
//   when a wake-up came is not remembered (begin/remember).
// - An entry is good for RECHECK_MS only: events another process appended
//   (an `arena` command on the same data dir) wake no one here, and reach a
//   wait=0 poll as they reach a long poll, within that time. Nothing is lost:
//   the cursor never moves past what was read.
// - SQLite only (services.ts). With PostgreSQL another instance's append
//   arrives here by NOTIFY, later than its commit: a client that wrote
//   through one instance and polls another must read the database.

/** Users remembered at most; past it everything is forgotten (a flood of distinct users must not grow memory). */
const MAX_USERS = 100_000

export class CaughtUpPolls {
  /** user → `${cursor seq} ${topics}` → when the empty read was made (performance.now()). */
  private readonly users = new Map<string, Map<string, number>>()
  /** Counts forget() calls: a read that began before one may have missed what it was for. */
  private epoch = 0

  constructor(
    private readonly maxAgeMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Whether this poll found nothing less than maxAgeMs ago and nothing was appended for the user since. */
  has(userId: string, key: string): boolean {
    const at = this.users.get(userId)?.get(key)
    return at !== undefined && this.now() - at < this.maxAgeMs
  }

  /** Taken before the read whose empty answer may be remembered. */
  begin(): number {
    return this.epoch
  }

  /**
   * The read begun at `epoch` found nothing. Not remembered when anything was
   * appended for anyone since it began: the read may have missed it (the
   * commit and its wake-up can fall between a read and this call).
   */
  remember(userId: string, key: string, epoch: number): void {
    if (epoch !== this.epoch) return
    let polls = this.users.get(userId)
    if (polls === undefined) {
      if (this.users.size >= MAX_USERS) this.users.clear()
      polls = new Map()
      this.users.set(userId, polls)
    }
    // A user's clients poll a few cursors at most; an old one is never asked again.
    if (polls.size >= 8) polls.clear()
    polls.set(key, this.now())
  }

  /** Something was appended for `userId` (null: for anyone). */
  forget(userId: string | null): void {
    this.epoch++
    if (userId === null) this.users.clear()
    else this.users.delete(userId)
  }
}
