// Payouts held for review (contract §17, docs/integrity.md). A decided win
// that raised an integrity signal (./signals.ts) does not pay:
// - a staked match: nothing settles, no rake, no payout; the match's escrow
//   keeps the whole pot, and a hold (kind `stake`) records what the winner
//   is owed (the pot less the rake, as settleStakes would pay);
// - a prize tournament's match: only the flag, then; at finalization
//   (games/prizes.ts payPrizes) a prize whose winner was flagged in the
//   tournament, in a match they still won (not corrected away), is not paid:
//   a hold (kind `prize`) keeps it in the tournament's escrow, and only what
//   is left beyond the held prizes goes to the house.
// An operator (finance) then decides each hold once, in one unit of work
// that moves its row from `held` by a conditional UPDATE (the row lock
// orders two instances; the second finds it decided: 409 payout_not_held):
// - release pays it as it would have been paid: the rake and the payout
//   under `rake:<m>` and `stake_payout:<m>` (payWinnings), a prize under
//   `prize:<t>:<rank>`: the ledger's unique references are the backstop;
// - void gives both stakes back (`stake_refund:<m>:<u>`) or sends the prize
//   to the house (`escrow_release`, `prize_void:<t>:<rank>`).
// A deleted winner's money goes to the house, as the decision's would.
import type { Transaction } from '../../db/storage'
import { newId } from '../../shared/ids'
import { formatAmount, USDC } from '../../shared/money'
import type { MatchRecord } from '../games/store'
import { payWinnings, refundStakes, winningsOf } from '../matchmaking/stakes'
import { accounts, ledger, mayCredit } from '../wallet/ledger'
import { publishWebhook } from '../webhooks/publish'
import type { PayoutHoldRecord, RaisedSignal } from './store'

const ASSET = USDC.code

/** The wallet events' data of a hold. */
function eventData(hold: Pick<PayoutHoldRecord, 'id' | 'kind' | 'amount' | 'matchId' | 'tournamentId'>) {
  return { holdId: hold.id, kind: hold.kind, amount: formatAmount(BigInt(hold.amount), USDC), asset: ASSET, matchId: hold.matchId, tournamentId: hold.tournamentId }
}

async function recordHold(tx: Transaction, now: Date, hold: Omit<PayoutHoldRecord, 'id' | 'status' | 'createdAt' | 'decidedAt' | 'decidedBy' | 'reason' | 'asset'>): Promise<void> {
  const row = { ...hold, id: newId('payoutHold'), asset: ASSET, status: 'held' as const, createdAt: now, decidedAt: null, decidedBy: null, reason: null }
  await tx.payouts.insertHold(row)
  await tx.events.append({ userId: hold.userId, topic: 'wallet', type: 'wallet.payout_held', data: eventData(row) }, now)
  await publishWebhook(tx, { type: 'payout.held', data: { ...eventData(row), userId: hold.userId, signals: hold.signals.map((raised) => raised.signal) } }, now)
}

/** A flagged staked win: its winnings stay in the match's escrow, held (in the decision's unit of work, instead of settleStakes). */
export async function holdStakeWinnings(tx: Transaction, now: Date, match: Pick<MatchRecord, 'id' | 'stake' | 'terms'>, winner: { participantId: string; userId: string }, signals: RaisedSignal[]): Promise<void> {
  const { pot, rake } = winningsOf(match)
  await recordHold(tx, now, { kind: 'stake', matchId: match.id, tournamentId: null, rank: null, userId: winner.userId, participantId: winner.participantId, amount: (pot - rake).toString(), signals })
}

/**
 * The flag that holds `participantId`'s prize in a tournament, if any: a flag
 * raised against them in a match they still won (a correction that took the
 * win away takes the hold with it). Several: the first, with every flag's
 * signals.
 */
export async function prizeFlagOf(tx: Transaction, tournamentId: string, participantId: string): Promise<{ matchId: string; signals: RaisedSignal[] } | null> {
  let found: { matchId: string; signals: RaisedSignal[] } | null = null
  for (const flag of await tx.payouts.flagsIn(tournamentId)) {
    if (flag.participantId !== participantId) continue
    const match = await tx.matches.byId(flag.matchId)
    if (match?.winnerParticipantId !== participantId) continue
    if (found === null) found = { matchId: flag.matchId, signals: [...flag.signals] }
    else found.signals.push(...flag.signals.filter((s) => !found!.signals.some((f) => f.signal === s.signal)))
  }
  return found
}

/** A prize kept in the tournament's escrow for review (payPrizes, in the finalization's unit of work). */
export async function holdPrize(
  tx: Transaction,
  now: Date,
  prize: { tournamentId: string; rank: number; amount: bigint; participantId: string; userId: string },
  flag: { matchId: string; signals: RaisedSignal[] },
): Promise<void> {
  await recordHold(tx, now, {
    kind: 'prize',
    matchId: flag.matchId,
    tournamentId: prize.tournamentId,
    rank: prize.rank,
    userId: prize.userId,
    participantId: prize.participantId,
    amount: prize.amount.toString(),
    signals: flag.signals,
  })
}

/** Pays a hold an operator released (it was moved to `released` in this unit of work): as the decision would have. */
export async function payReleased(tx: Transaction, now: Date, hold: PayoutHoldRecord): Promise<void> {
  if (hold.kind === 'stake') {
    const match = (await tx.matches.byId(hold.matchId))!
    const { pot, rake } = winningsOf(match)
    if ((pot - rake).toString() !== hold.amount) throw new Error(`hold ${hold.id}: holds ${hold.amount}, the match pays ${pot - rake}`)
    await payWinnings(tx, now, match, hold.userId)
  } else {
    const tournamentId = hold.tournamentId!
    const amount = BigInt(hold.amount)
    const reference = `prize:${tournamentId}:${hold.rank}`
    const memo = { tournamentId, rank: hold.rank, participantId: hold.participantId, userId: hold.userId, amount: hold.amount, holdId: hold.id }
    const deleted = !(await mayCredit(tx.wallet, hold.userId))
    await ledger(tx.wallet, now).transfer({
      from: accounts.escrow(tournamentId, ASSET),
      amount,
      reference,
      ...(deleted
        ? { kind: 'escrow_release', to: accounts.system('house', ASSET), memo: { ...memo, to: 'house', forfeited: 'account_deleted' } }
        : { kind: 'prize', to: accounts.user(hold.userId, ASSET), memo }),
    })
  }
  await tx.events.append({ userId: hold.userId, topic: 'wallet', type: 'wallet.payout_released', data: eventData(hold) }, now)
}

/** Undoes a hold an operator voided: both stakes back, or the prize to the house. */
export async function payVoided(tx: Transaction, now: Date, hold: PayoutHoldRecord, reason: string): Promise<void> {
  if (hold.kind === 'stake') {
    const match = (await tx.matches.byId(hold.matchId))!
    const seats = await tx.games.seatsOf([match.slot1ParticipantId!, match.slot2ParticipantId!])
    await refundStakes(tx, now, match, seats.map((s) => s.userId), 'voided')
  } else {
    const tournamentId = hold.tournamentId!
    await ledger(tx.wallet, now).transfer({
      kind: 'escrow_release',
      from: accounts.escrow(tournamentId, ASSET),
      to: accounts.system('house', ASSET),
      amount: BigInt(hold.amount),
      reference: `prize_void:${tournamentId}:${hold.rank}`,
      memo: { tournamentId, rank: hold.rank, participantId: hold.participantId, userId: hold.userId, amount: hold.amount, holdId: hold.id, to: 'house', why: 'voided' },
    })
  }
  await tx.events.append({ userId: hold.userId, topic: 'wallet', type: 'wallet.payout_voided', data: { ...eventData(hold), reason } }, now)
}
