// The matcher: which of a queue's waiting tickets to pair in one tick. Pure: no
// storage, no clock (the caller passes `now`), no imports.
//
// The rule. A ticket's window is its player's display ± (initial +
// widenPerSecond × seconds waited), at most ± max. Two tickets are compatible
// when each player's display lies in the OTHER's window (|a − b| ≤ both
// half-widths: a newcomer's narrow window protects the newcomer as much as an
// old ticket's wide one lets the old ticket reach), they belong to different
// users, and the two users may meet again (`recentlyPlayed` false: their last
// match is older than the queue's rematch cooldown). Greedy, oldest first
// (waitingSince, then id): each still-unpaired ticket takes the compatible
// unpaired ticket nearest to it in display (ties: the older, then id).
//
// Why that is maximal: compatibility is symmetric and the unpaired set only
// shrinks during a tick. If two tickets a (older) and b were both left
// unpaired and compatible, b was unpaired when a's turn came, so a had at least
// one compatible partner and took one: a contradiction. So no two compatible
// tickets are ever left waiting after a tick.
// Why it is fair: let t be the oldest ticket that has any compatible partner
// p. Every ticket older than t has none, so none of them takes anyone, p is
// still free at t's turn, and t is paired. A ticket is never passed over for
// a younger one that could have had its partner.
// A consequence used below: a ticket whose turn found no partner can never
// be taken later in the tick (its candidates only get fewer), so every
// ticket leaves the candidate set at its turn, and a ticket only ever looks
// at younger ones.
//
// Cost. Tickets are sorted by display once. Two min-trees over the sorted
// positions (segment trees) hold, for each ticket still a candidate,
// `display − window` and `−(display + window)`: "the nearest candidate above
// me whose own window reaches down to me" is one descent, O(log n), however
// many narrow-window tickets lie in between. The search is bounded by the
// ticket's own window (a binary search over the sorted displays). A
// candidate found by the trees is then checked exactly; it can still be
// refused for being the same user or within the cooldown, and the search
// goes on past it. So a tick costs O((n + r) · log n) where r counts those
// refusals: at most the waiting pairs of players who met within the cooldown
// (and pairs of tickets of one user, which the store's one-open-ticket-per-
// player rule keeps at zero). docs/performance.md, "Matchmaking (issue 39)",
// has the figures for 10 000 tickets.
//
// What must stay true:
// - the inputs are never mutated; the result holds the input's ticket objects;
// - the result does not depend on the order of `tickets` (ids are unique);
// - every pair is compatible at `now`, no ticket is in two pairs, pairs are in
//   the order made (the older ticket of each pair first);
// - a window that is not 0 ≤ initial ≤ max with widenPerSecond ≥ 0, all
//   finite, a non-finite display or an invalid date throws a plain Error:
//   the routes refuse such queues and ratings are finite, so one is a bug.

export interface QueueWindow {
  initial: number
  widenPerSecond: number
  max: number
}

export interface WaitingTicket {
  id: string
  userId: string
  display: number
  waitingSince: Date
}

/** The half-width of a ticket's window now: initial + widenPerSecond × seconds waited, at most max (never below initial; a clock behind waitingSince counts as 0 s). */
export function windowOf(window: QueueWindow, waitingSince: Date, now: Date): number {
  return halfWidth(window, waitingSince.getTime(), now.getTime())
}

function halfWidth(window: QueueWindow, sinceMs: number, nowMs: number): number {
  const seconds = Math.max(0, (nowMs - sinceMs) / 1000)
  return Math.min(window.initial + window.widenPerSecond * seconds, window.max)
}

/** Two tickets' displays are in each other's windows: |a − b| ≤ both half-widths. */
function withinWindows(displayA: number, windowA: number, displayB: number, windowB: number): boolean {
  const distance = Math.abs(displayA - displayB)
  return distance <= windowA && distance <= windowB
}

/** One tick: the pairs to make, in the order made (oldest first). `recentlyPlayed(userA, userB)` is true when the two may not meet yet (rematchCooldownS); symmetric. */
export function pairTickets(input: {
  now: Date
  window: QueueWindow
  tickets: readonly WaitingTicket[]
  recentlyPlayed?: (a: string, b: string) => boolean
}): Array<[WaitingTicket, WaitingTicket]> {
  const { now, window, tickets, recentlyPlayed } = input
  checkWindow(window)
  if (!Number.isFinite(now.getTime())) throw new Error('pairTickets: now is an invalid date')
  const n = tickets.length
  if (n < 2) return []

  // Age order: waitingSince, then id. rank[i] is ticket i's place in it.
  const since = new Float64Array(n)
  for (let i = 0; i < n; i++) {
    const t = tickets[i]!
    since[i] = t.waitingSince.getTime()
    if (!Number.isFinite(since[i]!)) throw new Error(`pairTickets: ticket ${t.id} has an invalid waitingSince`)
    if (!Number.isFinite(t.display)) throw new Error(`pairTickets: ticket ${t.id} has a non-finite display`)
  }
  const byAge = Array.from({ length: n }, (_, i) => i).sort(
    (a, b) => since[a]! - since[b]! || compareIds(tickets[a]!.id, tickets[b]!.id),
  )
  const rank = new Int32Array(n)
  for (let r = 0; r < n; r++) rank[byAge[r]!] = r

  // Display order (ties: age), so among equal displays the older comes first.
  const order = Array.from({ length: n }, (_, i) => i).sort(
    (a, b) => tickets[a]!.display - tickets[b]!.display || rank[a]! - rank[b]!,
  )
  const pos = new Int32Array(n)
  const disp = new Float64Array(n) // by position
  const win = new Float64Array(n) // by position
  const runStart = new Int32Array(n) // by position: where its run of equal displays starts
  const nowMs = now.getTime()
  let scale = 1
  for (let p = 0; p < n; p++) {
    const i = order[p]!
    pos[i] = p
    disp[p] = tickets[i]!.display
    win[p] = halfWidth(window, since[i]!, nowMs)
    runStart[p] = p > 0 && disp[p] === disp[p - 1] ? runStart[p - 1]! : p
    scale = Math.max(scale, Math.abs(disp[p]!) + win[p]!)
  }
  // The trees compare `display − window` with a display where the exact rule
  // compares a difference of displays with a window; the two roundings can
  // differ by a few ulps, so the trees search with this slack (a superset)
  // and every candidate they find is checked by the exact rule.
  const slack = scale * 1e-12

  // Min-trees over positions: `below[p]` = display − window (how far down its
  // window reaches), `above[p]` = −(display + window) (how far up, negated).
  // A ticket that is no longer a candidate holds +Infinity in both.
  let size = 1
  while (size < n) size <<= 1
  const below = new Float64Array(2 * size).fill(Infinity)
  const above = new Float64Array(2 * size).fill(Infinity)
  for (let p = 0; p < n; p++) {
    below[size + p] = disp[p]! - win[p]!
    above[size + p] = -(disp[p]! + win[p]!)
  }
  for (let k = size - 1; k >= 1; k--) {
    below[k] = Math.min(below[2 * k]!, below[2 * k + 1]!)
    above[k] = Math.min(above[2 * k]!, above[2 * k + 1]!)
  }
  const withdraw = (p: number) => {
    let k = size + p
    below[k] = Infinity
    above[k] = Infinity
    for (k >>= 1; k >= 1; k >>= 1) {
      below[k] = Math.min(below[2 * k]!, below[2 * k + 1]!)
      above[k] = Math.min(above[2 * k]!, above[2 * k + 1]!)
    }
  }

  const paired = new Uint8Array(n) // by position
  const pairs: Array<[WaitingTicket, WaitingTicket]> = []
  for (const i of byAge) {
    const p = pos[i]!
    if (paired[p]) continue
    withdraw(p) // from now on no one's candidate (see the module comment)
    const d = disp[p]!
    const w = win[p]!
    const ticket = tickets[i]!
    const acceptable = (q: number) => {
      if (!withinWindows(d, w, disp[q]!, win[q]!)) return false
      const other = tickets[order[q]!]!
      return other.userId !== ticket.userId && !(recentlyPlayed?.(ticket.userId, other.userId) ?? false)
    }

    // Above: the first acceptable position in (p, hi] whose window reaches down to d.
    const hi = lastWithin(disp, p, n, w)
    let right = hi > p ? firstAtMost(below, size, p + 1, hi, d + slack) : -1
    while (right !== -1 && !acceptable(right)) right = firstAtMost(below, size, right + 1, hi, d + slack)
    // Below: the nearest acceptable position in [lo, p) whose window reaches up to d ...
    const lo = firstWithin(disp, p, w)
    let left = lo < p ? lastAtMost(above, size, lo, p - 1, -d + slack) : -1
    while (left !== -1 && !acceptable(left)) left = lastAtMost(above, size, lo, left - 1, -d + slack)
    // ... then the oldest acceptable of that display (its run of equal displays is in age order).
    if (left !== -1 && runStart[left]! < left) {
      let q = firstAtMost(above, size, runStart[left]!, left, -d + slack)
      while (q !== -1 && q < left && !acceptable(q)) q = firstAtMost(above, size, q + 1, left, -d + slack)
      if (q !== -1) left = q
    }

    let partner = -1
    if (right === -1) partner = left
    else if (left === -1) partner = right
    else {
      const up = disp[right]! - d
      const down = d - disp[left]!
      partner = up < down || (up === down && rank[order[right]!]! < rank[order[left]!]!) ? right : left
    }
    if (partner === -1) continue
    paired[partner] = 1
    withdraw(partner)
    pairs.push([ticket, tickets[order[partner]!]!])
  }
  return pairs
}

function checkWindow(window: QueueWindow): void {
  const { initial, widenPerSecond, max } = window
  const finite = Number.isFinite(initial) && Number.isFinite(widenPerSecond) && Number.isFinite(max)
  if (!finite || initial < 0 || widenPerSecond < 0 || max < initial) {
    throw new Error(`pairTickets: invalid window ${JSON.stringify(window)} (needs 0 ≤ initial ≤ max, widenPerSecond ≥ 0, all finite)`)
  }
}

/** Code-unit order, the same in every locale (ids are ASCII). */
function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/** The last position q ≥ p with disp[q] − disp[p] ≤ w (the exact rule's difference; sorted, so a binary search). */
function lastWithin(disp: Float64Array, p: number, n: number, w: number): number {
  const d = disp[p]!
  let lo = p
  let hi = n - 1
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1
    if (disp[mid]! - d <= w) lo = mid
    else hi = mid - 1
  }
  return lo
}

/** The first position q ≤ p with disp[p] − disp[q] ≤ w. */
function firstWithin(disp: Float64Array, p: number, w: number): number {
  const d = disp[p]!
  let lo = 0
  let hi = p
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (d - disp[mid]! <= w) hi = mid
    else lo = mid + 1
  }
  return lo
}

/** The first position in [from, to] whose leaf in the min-tree is ≤ x, or −1. */
function firstAtMost(tree: Float64Array, size: number, from: number, to: number, x: number): number {
  if (from > to) return -1
  const go = (k: number, l: number, r: number): number => {
    if (r < from || l > to || tree[k]! > x) return -1
    if (l === r) return l
    const mid = (l + r) >> 1
    const found = go(2 * k, l, mid)
    return found !== -1 ? found : go(2 * k + 1, mid + 1, r)
  }
  return go(1, 0, size - 1)
}

/** The last position in [from, to] whose leaf in the min-tree is ≤ x, or −1. */
function lastAtMost(tree: Float64Array, size: number, from: number, to: number, x: number): number {
  if (from > to) return -1
  const go = (k: number, l: number, r: number): number => {
    if (r < from || l > to || tree[k]! > x) return -1
    if (l === r) return l
    const mid = (l + r) >> 1
    const found = go(2 * k + 1, mid + 1, r)
    return found !== -1 ? found : go(2 * k, l, mid)
  }
  return go(1, 0, size - 1)
}
