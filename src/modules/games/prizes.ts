// Entry fees and prizes (contract §10). A tournament may take an entry fee
// from each player who registers, and pay prizes by final rank (the first for
// rank 1, the next for rank 2, ...). The money in between sits in the
// tournament's escrow account (ledger.ts, escrowAccountId): a system account
// whose balance is the sum of its postings.
//
// - register: the fee leaves the player's wallet into escrow (`entry_fee`),
//   in the join's unit of work: 422 insufficient_funds and no registration.
// - leave before the start, dropped at the start for not checking in, and
//   every remaining participant when the tournament is cancelled (by an
//   operator, or at the start: not enough players, prize pool underfunded):
//   the fee comes back (`entry_fee_refund`); on cancel, what operators funded
//   goes back to the funding account (`escrow_release`).
// - an operator funds the pool from the funding account (`prize_funding`,
//   idempotent by reference); a tournament with prizes starts only once its
//   escrow covers their sum (409 prize_pool_underfunded).
// - finalization pays each prize by rank (`prize`), then what is left (fees
//   beyond the prizes, prizes nobody may take) goes to the house account
//   (`escrow_release`): the escrow ends at zero, which `arena ledger check`
//   proves for every completed or cancelled tournament. A prize held for
//   review (an integrity signal against its winner: src/modules/integrity/
//   holds.ts) stays in escrow until an operator releases or voids it; the
//   check then expects exactly the held prizes there.
//
// Every movement carries a unique reference: a fee and its refund by
// participant (`entry_fee:<participantId>`, `entry_fee_refund:<participantId>`),
// a prize by tournament and rank (`prize:<tournamentId>:<rank>`), an escrow's
// release once per tournament (`escrow_release:<tournamentId>`). The ledger's
// unique index on references makes paying one twice impossible, whatever
// runs twice; the payouts and the completion are one unit of work, so a
// crash mid-payout leaves none of them and the finalize job pays them all
// again, once (docs/decisions.md, "Entry fees and prizes").
//
// The amounts are kept with the tournament's creation options (`entryFee`,
// `prizes`, canonical decimal strings) and shown on the tournament object.
import type { Transaction } from '../../db/storage'
import { AppError } from '../../shared/errors'
import { formatAmount, maxAmount, MoneyFormatError, parseAmount, parsePositiveAmount, USDC } from '../../shared/money'
import { accounts, escrowAccountId, ledger, mayCredit } from '../wallet/ledger'
import type { WalletStore } from '../wallet/store'
import type { StandingRow } from './formats/engines'
import type { Participant, TournamentOptions, TournamentRecord } from './store'
import type { PrizePoolResponse } from './model'
import { holdPrize, prizeFlagOf } from '../integrity/holds'

/** Tournament money is in the wallet's asset. */
export const PRIZE_ASSET = USDC
const ASSET = PRIZE_ASSET.code

/** The entry fee and the prizes, in minor units. */
export interface Purse {
  entryFee: bigint | null
  prizes: bigint[]
}

export function purseOf(tournament: Pick<TournamentRecord, 'options'>): Purse {
  const options = tournament.options ?? {}
  return {
    entryFee: options.entryFee === undefined ? null : parseAmount(options.entryFee, PRIZE_ASSET),
    prizes: (options.prizes ?? []).map((p) => parseAmount(p, PRIZE_ASSET)),
  }
}

export function prizesTotal(purse: Purse): bigint {
  return purse.prizes.reduce((sum, p) => sum + p, 0n)
}

/** The options as the tournament object shows them: without the money, which it shows on its own. */
export function formatOptions(options: TournamentOptions | null): Omit<TournamentOptions, 'entryFee' | 'prizes'> {
  const { entryFee: _fee, prizes: _prizes, ...rest } = options ?? {}
  return rest
}

/** The money of a new tournament's body: `entryFee`, `prizes`. */
export interface PurseInput {
  entryFee?: string
  prizes?: string[]
}

/**
 * Checks a new tournament's fee and prizes and answers them canonical, for
 * its options. The fee is for a tournament players register for (without it,
 * nobody joins to pay it); prizes are for at most as many ranks as it can
 * have players (`players`). Every problem at once (422).
 */
export function planPurse(input: PurseInput, players: { count: number; path: string }, registration: boolean): Pick<TournamentOptions, 'entryFee' | 'prizes'> {
  const problems: { path: string; message: string }[] = []
  const amount = (value: string, path: string): bigint | null => {
    try {
      return parsePositiveAmount(value, PRIZE_ASSET)
    } catch (error) {
      if (!(error instanceof MoneyFormatError)) throw error
      problems.push({ path, message: `Expected a positive decimal string with at most ${PRIZE_ASSET.decimals} decimals` })
      return null
    }
  }
  const out: Pick<TournamentOptions, 'entryFee' | 'prizes'> = {}
  if (input.entryFee !== undefined) {
    if (!registration) problems.push({ path: 'body/entryFee', message: 'Only for a tournament players register for (without participants)' })
    const fee = amount(input.entryFee, 'body/entryFee')
    if (fee !== null) out.entryFee = formatAmount(fee, PRIZE_ASSET)
  }
  if (input.prizes !== undefined && input.prizes.length > 0) {
    if (input.prizes.length > players.count) problems.push({ path: 'body/prizes', message: `At most one prize per player: ${players.count} (${players.path})` })
    const parsed = input.prizes.map((p, i) => amount(p, `body/prizes/${i}`))
    if (parsed.every((p) => p !== null)) {
      const total = parsed.reduce((sum, p) => sum + p, 0n)
      if (total > maxAmount(PRIZE_ASSET)) problems.push({ path: 'body/prizes', message: 'Their sum is larger than the largest amount arena can express' })
      out.prizes = parsed.map((p) => formatAmount(p, PRIZE_ASSET))
    }
  }
  if (problems.length > 0) throw new AppError('validation_failed', 'Request failed validation', { details: problems })
  return out
}

/** What the tournament's escrow holds now (in `wallet`'s unit of work, or committed state). */
export function escrowOf(wallet: WalletStore, tournamentId: string): Promise<bigint> {
  return wallet.postingsTotal(escrowAccountId(tournamentId, ASSET))
}

/**
 * Refuses a movement into the escrow that would take it past the largest
 * amount arena can express (a pool nobody could be shown or paid): 422.
 */
async function assertEscrowFits(tx: Transaction, tournamentId: string, adding: bigint, path: string): Promise<void> {
  if ((await escrowOf(tx.wallet, tournamentId)) + adding > maxAmount(PRIZE_ASSET)) {
    throw new AppError('validation_failed', 'Request failed validation', { details: [{ path, message: 'The prize pool would exceed the largest amount arena can express' }] })
  }
}

const feeReference = (participantId: string) => `entry_fee:${participantId}`
const refundReference = (participantId: string) => `entry_fee_refund:${participantId}`
const releaseReference = (tournamentId: string) => `escrow_release:${tournamentId}`
export const prizeReference = (tournamentId: string, rank: number) => `prize:${tournamentId}:${rank}`

/** Takes the entry fee of a new registrant into escrow (none without a fee). 422 insufficient_funds rolls the join back. */
export async function chargeEntryFee(tx: Transaction, tournament: TournamentRecord, participant: { id: string; userId: string }, now: Date): Promise<void> {
  const { entryFee } = purseOf(tournament)
  if (entryFee === null) return
  await assertEscrowFits(tx, tournament.id, entryFee, 'entryFee')
  await ledger(tx.wallet, now).transfer({
    kind: 'entry_fee',
    from: accounts.user(participant.userId, ASSET),
    to: accounts.escrow(tournament.id, ASSET),
    amount: entryFee,
    reference: feeReference(participant.id),
    memo: { tournamentId: tournament.id, participantId: participant.id, userId: participant.userId, amount: entryFee.toString() },
  })
}

/**
 * Gives a participant's entry fee back, if they paid one and it was not given
 * back already. To a deleted account it goes to the house instead (a deleted
 * account holds no money: docs/decisions.md).
 */
export async function refundEntryFee(tx: Transaction, tournamentId: string, participant: { id: string; userId: string }, now: Date, why: string): Promise<void> {
  const paid = await tx.wallet.transactionByReference(feeReference(participant.id))
  if (!paid || (await tx.wallet.transactionByReference(refundReference(participant.id)))) return
  const amount = BigInt(String((paid.memo as { amount?: unknown } | null)?.amount))
  const memo = { tournamentId, participantId: participant.id, userId: participant.userId, amount: amount.toString(), why }
  // Locked against a deletion until this unit of work ends (a job's READ COMMITTED one included): the
  // refund lands before the deletion, which then sees the money, or after it, and goes to the house.
  const deleted = !(await mayCredit(tx.wallet, participant.userId))
  await ledger(tx.wallet, now).transfer({
    from: accounts.escrow(tournamentId, ASSET),
    amount,
    reference: refundReference(participant.id),
    ...(deleted
      ? { kind: 'escrow_release', to: accounts.system('house', ASSET), memo: { ...memo, to: 'house', forfeited: 'account_deleted' } }
      : { kind: 'entry_fee_refund', to: accounts.user(participant.userId, ASSET), memo }),
  })
}

/**
 * Empties the escrow into `to` (once per tournament): the house after the
 * prizes, the funding account on cancel. `keep`: the prizes held for review
 * (src/modules/integrity/holds.ts), which stay in escrow until decided.
 */
async function releaseEscrow(tx: Transaction, tournamentId: string, to: 'house' | 'funding', now: Date, memo: Record<string, unknown> = {}, keep = 0n): Promise<void> {
  const left = (await escrowOf(tx.wallet, tournamentId)) - keep
  if (left === 0n) return
  await ledger(tx.wallet, now).transfer({
    kind: 'escrow_release',
    from: accounts.escrow(tournamentId, ASSET),
    to: accounts.system(to, ASSET),
    amount: left,
    reference: releaseReference(tournamentId),
    memo: { tournamentId, to, amount: left.toString(), ...memo },
  })
}

/**
 * A cancelled tournament's money (in the cancel's unit of work): every
 * participant's fee back, then what operators funded back to the funding
 * account. The escrow is empty after.
 */
export async function settleCancelled(tx: Transaction, tournamentId: string, participants: readonly Participant[], now: Date): Promise<void> {
  for (const p of participants) await refundEntryFee(tx, tournamentId, p, now, 'cancelled')
  await releaseEscrow(tx, tournamentId, 'funding', now)
}

/** The prize pool as the operator sees it: what the escrow holds and what the prizes need (the route's model). */
export type PrizePool = PrizePoolResponse

/** 409 prize_pool_underfunded unless the escrow covers the prizes; null when it does. */
export async function underfunded(tx: Transaction, tournament: TournamentRecord): Promise<AppError | null> {
  const needed = prizesTotal(purseOf(tournament))
  if (needed === 0n) return null
  const held = await escrowOf(tx.wallet, tournament.id)
  if (held >= needed) return null
  return new AppError(
    'prize_pool_underfunded',
    `The prize pool holds ${formatAmount(held, PRIZE_ASSET)} of the ${formatAmount(needed, PRIZE_ASSET)} its prizes need; fund it (POST /api/v1/admin/tournaments/${tournament.id}/fund) first`,
  )
}

/**
 * Moves `amount` from the funding account into the tournament's escrow, once
 * per `reference` (kept as `prize_funding:<reference>`): a repeat for the same
 * tournament and amount writes nothing and answers the pool; with anything
 * else, 409 idempotency_key_reused. A tournament that is over, or finalizing
 * (its prizes about to be paid), takes no more: 409 conflict.
 */
export async function fundPrizePool(
  tx: Transaction,
  tournament: TournamentRecord,
  amount: bigint,
  reference: string,
  now: Date,
): Promise<{ pool: PrizePool; funded: boolean }> {
  const key = `prize_funding:${reference}`
  const earlier = await tx.wallet.transactionByReference(key)
  if (earlier) {
    const memo = earlier.memo as { tournamentId?: string; amount?: string } | null
    if (memo?.tournamentId !== tournament.id || memo?.amount !== amount.toString()) {
      throw new AppError('idempotency_key_reused', 'This reference was already used for another funding')
    }
  } else {
    if (tournament.status === 'finalizing' || tournament.status === 'completed' || tournament.status === 'cancelled') {
      throw new AppError('conflict', `Tournament is ${tournament.status}; its prize pool takes no more funding`)
    }
    await assertEscrowFits(tx, tournament.id, amount, 'body/amount')
    await ledger(tx.wallet, now).transfer({
      kind: 'prize_funding',
      from: accounts.system('funding', ASSET),
      to: accounts.escrow(tournament.id, ASSET),
      amount,
      reference: key,
      memo: { tournamentId: tournament.id, amount: amount.toString(), reference },
    })
  }
  const pool = {
    tournamentId: tournament.id,
    escrow: formatAmount(await escrowOf(tx.wallet, tournament.id), PRIZE_ASSET),
    prizesTotal: formatAmount(prizesTotal(purseOf(tournament)), PRIZE_ASSET),
  }
  // `funded`: whether this call moved money (false for a replayed reference), so the caller records only a change.
  return { pool, funded: !earlier }
}

/**
 * Pays a completed tournament's prizes by final rank, then gives what is left
 * to the house: the escrow ends at zero. A rank nobody holds (fewer players
 * than prizes), held by a disqualified participant or by a deleted account
 * pays nobody: its prize stays in escrow and goes to the house with the rest
 * (ranks are not moved up). A winner flagged in the tournament (an
 * integrity signal in a match they still won) is not paid: the prize is
 * held in escrow for an operator. Each prize is paid at most once: one already
 * recorded under its reference is not paid again. In the finalization's unit
 * of work.
 */
export async function payPrizes(tx: Transaction, tournament: TournamentRecord, standings: readonly StandingRow[], participants: readonly Participant[], now: Date): Promise<void> {
  const { prizes } = purseOf(tournament)
  // The start checked the escrow covered the prizes, and nothing leaves it before this: never short here.
  const held = await escrowOf(tx.wallet, tournament.id)
  if (held < prizesTotal({ entryFee: null, prizes })) throw new Error(`escrow of ${tournament.id} holds ${held}, less than its prizes`)
  const byId = new Map(participants.map((p) => [p.id, p]))
  const forfeited: { rank: number; why: string }[] = []
  let kept = 0n
  for (const [index, prize] of prizes.entries()) {
    const rank = index + 1
    const standing = standings.find((s) => s.rank === rank)
    const winner = standing ? byId.get(standing.participantId) : undefined
    if (!winner) {
      forfeited.push({ rank, why: 'no_participant' })
      continue
    }
    if (winner.disqualifiedAt !== null) {
      forfeited.push({ rank, why: 'disqualified' })
      continue
    }
    // Locked against a deletion, as a refund is (refundEntryFee).
    if (!(await mayCredit(tx.wallet, winner.userId))) {
      forfeited.push({ rank, why: 'account_deleted' })
      continue
    }
    const reference = prizeReference(tournament.id, rank)
    if (await tx.wallet.transactionByReference(reference)) continue
    // Flagged by an integrity signal in a match they still won: held for an operator, kept in escrow.
    const flag = await prizeFlagOf(tx, tournament.id, winner.id)
    if (flag !== null) {
      await holdPrize(tx, now, { tournamentId: tournament.id, rank, amount: prize, participantId: winner.id, userId: winner.userId }, flag)
      kept += prize
      continue
    }
    await ledger(tx.wallet, now).transfer({
      kind: 'prize',
      from: accounts.escrow(tournament.id, ASSET),
      to: accounts.user(winner.userId, ASSET),
      amount: prize,
      reference,
      memo: { tournamentId: tournament.id, rank, participantId: winner.id, userId: winner.userId, amount: prize.toString() },
    })
  }
  await releaseEscrow(tx, tournament.id, 'house', now, forfeited.length > 0 ? { forfeited } : {}, kept)
}
