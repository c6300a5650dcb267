// The rules every mailed one-time code follows (contract §8), whatever it is
// for, inside the caller's unit of work: one code per user and purpose (a new
// one replaces the old), valid until it expires, and dead after five wrong
// tries. codes.ts makes, normalises and hashes the codes; only the hash is
// stored.
import { codeMatches, hashAccountCode, newAccountCode } from './codes'
import type { AccountCodePurpose, AuthStore } from './store'

/** Wrong tries that kill a code: the fifth deletes it, so even the right code fails after. */
export const MAX_CODE_FAILURES = 5

/** Stores a new code for the user and purpose, replacing any earlier one; returns it as mailed (e.g. `7KQ2M-R9W4T`). */
export async function issueAccountCode(store: AuthStore, userId: string, purpose: AccountCodePurpose, validMs: number, now: Date): Promise<string> {
  const code = newAccountCode()
  await store.saveAccountCode({
    userId,
    purpose,
    codeHash: hashAccountCode(userId, purpose, code),
    failures: 0,
    createdAt: now,
    expiresAt: new Date(now.getTime() + validMs),
  })
  return code
}

/**
 * Whether `input` is the user's live code of that purpose. Leaves a matching
 * code in place (the caller deletes it with the change it authorizes, so it
 * works once). A wrong input counts a failure and deletes the code at the
 * fifth; an expired code is deleted. Both must commit: the caller returns its
 * refusal from the unit of work rather than throwing inside it.
 */
export async function judgeAccountCode(store: AuthStore, userId: string, purpose: AccountCodePurpose, input: string, now: Date): Promise<'match' | 'invalid'> {
  const code = await store.accountCode(userId, purpose)
  if (code === null) return 'invalid'
  if (code.expiresAt.getTime() <= now.getTime()) {
    await store.deleteAccountCode(userId, purpose)
    return 'invalid'
  }
  if (codeMatches(code.codeHash, userId, purpose, input)) return 'match'
  if ((await store.countAccountCodeFailure(userId, purpose)) >= MAX_CODE_FAILURES) await store.deleteAccountCode(userId, purpose)
  return 'invalid'
}
