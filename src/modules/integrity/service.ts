// The operator's side of the payouts held for review (contract §17,
// docs/integrity.md): list them, read one, release or void it. Each decision
// is one unit of work: the hold moved from `held` (a conditional UPDATE: of
// two operators or instances, one decides and the other gets 409
// payout_not_held), the money moved (./holds.ts), the winner told, the audit
// record written last.
import type { Storage } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { toIso } from '../../shared/clock'
import { AppError } from '../../shared/errors'
import { isId } from '../../shared/ids'
import { formatAmount, USDC } from '../../shared/money'
import type { Actor } from '../audit/log'
import { payReleased, payVoided } from './holds'
import type { HeldPayout, PayoutHold, PayoutsPage } from './model'
import type { PayoutHoldRecord, PayoutHoldRow, PayoutHoldStatus, PayoutsStore } from './store'

export const PAYOUTS_PAGE_DEFAULT = 50

export interface PayoutServiceDeps {
  storage: Storage
  clock: Clock
}

export function toPayoutHold(row: PayoutHoldRow): PayoutHold {
  return {
    id: row.id,
    kind: row.kind,
    status: row.status,
    matchId: row.matchId,
    tournamentId: row.tournamentId,
    rank: row.rank,
    userId: row.userId,
    username: row.username,
    participantId: row.participantId,
    amount: formatAmount(BigInt(row.amount), USDC),
    asset: row.asset,
    signals: row.signals,
    createdAt: toIso(row.createdAt),
    decidedAt: row.decidedAt === null ? null : toIso(row.decidedAt),
    decidedBy: row.decidedBy,
    reason: row.reason,
  }
}

/** The caller's holds still held, as GET /wallet/transactions lists them (`held`). */
export async function heldPayoutsOf(payouts: PayoutsStore, userId: string): Promise<HeldPayout[]> {
  return (await payouts.heldOf(userId)).map((row: PayoutHoldRecord) => ({
    holdId: row.id,
    kind: row.kind === 'stake' ? 'stake_payout' : 'prize',
    amount: formatAmount(BigInt(row.amount), USDC),
    asset: row.asset,
    matchId: row.matchId,
    tournamentId: row.tournamentId,
    heldAt: toIso(row.createdAt),
  }))
}

function invalid(path: string, message: string): AppError {
  return new AppError('validation_failed', 'Request failed validation', { details: [{ path, message }] })
}

export class PayoutService {
  constructor(private readonly deps: PayoutServiceDeps) {}

  /** GET /admin/payouts: the holds in `status` (default held), oldest first, a page after the cursor. */
  async list(query: { status?: PayoutHoldStatus; after?: string; limit?: number }): Promise<PayoutsPage> {
    if (query.after !== undefined && query.after !== '' && !isId('payoutHold', query.after)) throw invalid('query/after', 'Not a cursor this server issued')
    if (query.limit !== undefined && !Number.isInteger(query.limit)) throw invalid('query/limit', 'Expected a whole number')
    const limit = query.limit ?? PAYOUTS_PAGE_DEFAULT
    const rows = await this.deps.storage.read.payouts.holdsPage(query.status ?? 'held', query.after || null, limit + 1)
    const page = rows.slice(0, limit).map(toPayoutHold)
    return rows.length > limit ? { payouts: page, cursor: page[page.length - 1]!.id } : { payouts: page }
  }

  /** GET /admin/payouts/{id}. */
  async get(id: string): Promise<PayoutHold> {
    const row = isId('payoutHold', id) ? await this.deps.storage.read.payouts.hold(id) : null
    if (!row) throw new AppError('not_found', 'No such held payout')
    return toPayoutHold(row)
  }

  /** POST /admin/payouts/{id}/release: paid as decided (the same references as an unheld payout: never twice). */
  release(id: string, reason: string, by: Actor): Promise<PayoutHold> {
    return this.decide(id, 'released', reason, by)
  }

  /** POST /admin/payouts/{id}/void: a staked match's stakes back to both players, a prize to the house. */
  void(id: string, reason: string, by: Actor): Promise<PayoutHold> {
    return this.decide(id, 'voided', reason, by)
  }

  private async decide(id: string, status: 'released' | 'voided', reason: string, by: Actor): Promise<PayoutHold> {
    const { storage, clock } = this.deps
    return storage.write(async (tx) => {
      const current = isId('payoutHold', id) ? await tx.payouts.hold(id) : null
      if (!current) throw new AppError('not_found', 'No such held payout')
      const now = clock.now()
      const decided = await tx.payouts.decideHold(id, { status, decidedAt: now, decidedBy: by.operator.name, reason })
      if (!decided) {
        const seen = (await tx.payouts.hold(id))!
        throw new AppError('payout_not_held', `This payout was ${seen.status} already${seen.decidedBy ? ` by ${seen.decidedBy}` : ''}`)
      }
      if (status === 'released') await payReleased(tx, now, decided)
      else await payVoided(tx, now, decided, reason)
      await by.record(tx, {
        action: status === 'released' ? 'payout.release' : 'payout.void',
        target: id,
        reason,
        details: { kind: decided.kind, matchId: decided.matchId, tournamentId: decided.tournamentId, rank: decided.rank, userId: decided.userId, amount: formatAmount(BigInt(decided.amount), USDC), asset: decided.asset },
      })
      return toPayoutHold({ ...decided, username: current.username })
    })
  }
}
