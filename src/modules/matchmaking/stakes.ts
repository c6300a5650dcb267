// Stakes (contract §16): what each player of a queue's or a challenge's match
// puts in. The money moves in the units of work that change the match, so it
// moves exactly when the match does, once, whatever crashes:
// - the match is made (a pairing, a challenge accepted): each player's stake
//   leaves their wallet into the match's escrow (`stake`);
// - a decided win: the pot less the rake to the winner (`stake_payout`), the
//   rake to the house (`rake`);
// - a decided draw, a cancelled match (a failed ready check, an operator):
//   each stake back (`stake_refund`);
// - a dispute: nothing moves until an operator decides;
// - a decided win that raised an integrity signal (docs/integrity.md): nothing
//   moves, the escrow keeps the pot until an operator releases it (paid as
//   above) or voids it (each stake back): src/modules/integrity/holds.ts.
// Each movement has a reference unique per match (and player), the ledger's
// unique index being the backstop: a second settlement of one match cannot
// commit. `arena ledger check` proves the escrow of every settled match is
// zero (src/modules/wallet/ledger.ts, checkEscrows).
import type { Transaction } from '../../db/storage'
import { AppError } from '../../shared/errors'
import { formatAmount, maxAmount, parseAmount, USDC } from '../../shared/money'
import type { MatchRecord } from '../games/store'
import { accounts, balanceOf, ledger, mayCredit } from '../wallet/ledger'

/** Stakes are in the wallet's asset, as tournament money is. */
export const STAKE_ASSET = USDC
const ASSET = STAKE_ASSET.code

const RAKE_SHAPE = /^(?:0+(?:\.(\d{1,6}))?|\.(\d{1,6}))$/

/**
 * A rake as given (`"0.05"`), checked (a decimal fraction 0 ≤ r ≤ 0.5, at
 * most 6 decimals) and written canonically (`"0.05"`, `"0"`); null when it
 * is not one.
 */
export function canonicalRake(input: string): string | null {
  const shape = RAKE_SHAPE.exec(input)
  if (!shape) return null
  const digits = (shape[1] ?? shape[2] ?? '').replace(/0+$/, '')
  if (BigInt(digits.padEnd(6, '0') || '0') > 500_000n) return null
  return digits === '' ? '0' : `0.${digits}`
}

/** The house's share of `pot` at `rake` (a canonical decimal fraction), in minor units, rounded down: a fraction of a cent stays with the winner. */
export function rakeShare(pot: bigint, rake: string): bigint {
  const [, fraction = ''] = rake.split('.')
  if (fraction === '') return 0n
  return (pot * BigInt(fraction)) / 10n ** BigInt(fraction.length)
}

/** A stake as given (a decimal string, more than zero), in minor units. 422 validation_failed at `path` otherwise. */
export function parseStake(input: string, path: string): bigint {
  let minor: bigint
  try {
    minor = parseAmount(input, STAKE_ASSET)
  } catch (error) {
    throw new AppError('validation_failed', 'Request failed validation', { details: [{ path, message: error instanceof Error ? error.message : 'Not an amount' }] })
  }
  // Two of them make a pot that a balance must be able to hold.
  if (minor <= 0n || minor * 2n > maxAmount(STAKE_ASSET)) {
    throw new AppError('validation_failed', 'Request failed validation', { details: [{ path, message: 'A stake is more than zero and at most half the largest amount' }] })
  }
  return minor
}

/** A stake in minor units, as the API writes amounts. */
export function formatStake(minor: string | bigint): string {
  return formatAmount(BigInt(minor), STAKE_ASSET)
}

/** Whether `userId`'s wallet holds `stake` now (in `tx`'s unit of work): what a ticket, a challenge and an acceptance check first. */
export async function canPay(tx: Transaction, userId: string, stake: bigint): Promise<boolean> {
  return (await balanceOf(tx.wallet, userId, ASSET)) >= stake
}

/** 422 insufficient_funds unless `userId` holds `stake`. */
export async function assertCanPay(tx: Transaction, userId: string, stake: bigint): Promise<void> {
  if (!(await canPay(tx, userId, stake))) throw new AppError('insufficient_funds', 'Your wallet does not hold the stake')
}

/** Both players' stakes into the new match's escrow. 422 insufficient_funds (the unit of work rolls back) when one cannot pay. */
export async function escrowStakes(tx: Transaction, now: Date, matchId: string, stake: bigint, userIds: readonly string[]): Promise<void> {
  const money = ledger(tx.wallet, now)
  for (const userId of userIds) {
    await money.transfer({
      kind: 'stake',
      from: accounts.user(userId, ASSET),
      to: accounts.escrow(matchId, ASSET),
      amount: stake,
      reference: `stake:${matchId}:${userId}`,
      memo: { matchId, userId, amount: stake.toString() },
    })
  }
}

/**
 * Settles a decided staked match (nothing for an unstaked one): a win pays
 * the winner the pot less the rake, and the rake to the house; a draw gives
 * each stake back. `seats` are the match's two players (participant and
 * account). To a deleted account the money goes to the house instead (a
 * deleted account holds no money).
 */
export async function settleStakes(
  tx: Transaction,
  now: Date,
  match: Pick<MatchRecord, 'id' | 'stake' | 'terms'>,
  result: { winnerParticipantId: string | null },
  seats: readonly { participantId: string; userId: string }[],
): Promise<void> {
  if (match.stake == null) return
  if (result.winnerParticipantId === null) return refundStakes(tx, now, match, seats.map((s) => s.userId), 'draw')
  const winner = seats.find((s) => s.participantId === result.winnerParticipantId)
  if (!winner) throw new Error(`match ${match.id}: the winner ${result.winnerParticipantId} holds no seat`)
  await payWinnings(tx, now, match, winner.userId)
}

/** A staked match's pot (both stakes) and the house's rake of it, minor units: the winner is paid pot − rake. */
export function winningsOf(match: Pick<MatchRecord, 'stake' | 'terms'>): { pot: bigint; rake: bigint } {
  const pot = BigInt(match.stake!) * 2n
  return { pot, rake: rakeShare(pot, match.terms?.rake ?? '0') }
}

/**
 * Pays a staked match's winnings out of its escrow: the rake to the house,
 * the pot less the rake to `winnerUserId` (the house for a deleted account).
 * With the decision (settleStakes), or when an operator releases winnings
 * held for review (src/modules/integrity/holds.ts): the same references
 * either way, so they can never be paid twice.
 */
export async function payWinnings(tx: Transaction, now: Date, match: Pick<MatchRecord, 'id' | 'stake' | 'terms'>, winnerUserId: string): Promise<void> {
  const { pot, rake } = winningsOf(match)
  const money = ledger(tx.wallet, now)
  const memo = { matchId: match.id, userId: winnerUserId, pot: pot.toString(), rake: rake.toString() }
  if (rake > 0n) {
    await money.transfer({ kind: 'rake', from: accounts.escrow(match.id, ASSET), to: accounts.system('house', ASSET), amount: rake, reference: `rake:${match.id}`, memo })
  }
  const deleted = !(await mayCredit(tx.wallet, winnerUserId))
  await money.transfer({
    kind: 'stake_payout',
    from: accounts.escrow(match.id, ASSET),
    to: deleted ? accounts.system('house', ASSET) : accounts.user(winnerUserId, ASSET),
    amount: pot - rake,
    reference: `stake_payout:${match.id}`,
    memo: deleted ? { ...memo, to: 'house', forfeited: 'account_deleted' } : memo,
  })
}

/** Gives each player their stake back (a draw, a cancelled match, held winnings an operator voided); nothing for an unstaked match. */
export async function refundStakes(tx: Transaction, now: Date, match: Pick<MatchRecord, 'id' | 'stake'>, userIds: readonly string[], why: 'draw' | 'cancelled' | 'voided'): Promise<void> {
  if (match.stake == null) return
  const stake = BigInt(match.stake)
  const money = ledger(tx.wallet, now)
  for (const userId of userIds) {
    const deleted = !(await mayCredit(tx.wallet, userId))
    const memo = { matchId: match.id, userId, amount: stake.toString(), why }
    await money.transfer({
      kind: 'stake_refund',
      from: accounts.escrow(match.id, ASSET),
      to: deleted ? accounts.system('house', ASSET) : accounts.user(userId, ASSET),
      amount: stake,
      reference: `stake_refund:${match.id}:${userId}`,
      memo: deleted ? { ...memo, to: 'house', forfeited: 'account_deleted' } : memo,
    })
  }
}
