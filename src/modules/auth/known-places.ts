// Known sign-in places: where a player or an operator signed in before, so
// that strangers failing on their name elsewhere cannot lock them out
// (issue 33; docs/decisions.md, "Known sign-in places").
//
// A place is the client's address (as ARENA_TRUST_PROXY decides it) or a
// device token: a random token handed out on a successful sign-in (the API's
// `x-arena-device` header, the console's `arena_device` cookie) that the
// client sends back on its next sign-ins. Both are stored only as SHA-256.
//
// What must stay true:
// - An attempt from a known place counts on its own counter (the name and
//   that place), not on the name's: the name's counter, which anyone can
//   fill from anywhere, does not block it. Its own counter has the name's
//   limit, so a stranger sharing the owner's address (the same NAT) gets no
//   more guesses than anywhere else.
// - An attempt from anywhere else counts on the name's counter, as before: a
//   brute force from any number of addresses stays capped per name.
// - Only a successful sign-in makes a place known, so nobody can make their
//   own place known for someone else's name.
// - The place is looked up for an unknown name too (under a subject that has
//   none), so a known and an unknown name take the same steps.
// - Rows are bounded: KNOWN_PLACES.perKind per subject and kind (the oldest
//   replaced), ignored after KNOWN_PLACES.ttlMs and pruned by housekeeping.
import { randomToken, sha256Hex } from '../../shared/crypto'
import type { AuthStore } from './store'
import { LOGIN_LIMITS, type ThrottleLimit } from './throttle'

export const KNOWN_PLACES = {
  /** Addresses, and separately device tokens, remembered per player or operator. */
  perKind: 10,
  /** A place not signed in from for this long is forgotten. */
  ttlMs: 60 * 86_400_000,
} as const

/** The request and response header of the API's device token. */
export const DEVICE_HEADER = 'x-arena-device'

/** A device token as handed out (randomToken(32)): anything else a client sends is ignored. */
const DEVICE_TOKEN = /^[A-Za-z0-9_-]{43}$/

/** Where a sign-in comes from: the client address (null when unknown) and the device token it sent, if a well-formed one. */
export interface SignInPlace {
  address: string | null
  deviceToken: string | null
}

export function signInPlace(address: string | null, deviceToken: string | null | undefined): SignInPlace {
  return {
    // Clients whose address could not be told apart all share "unknown": never a place of anyone's.
    address: address === null || address === 'unknown' ? null : address.toLowerCase(),
    deviceToken: typeof deviceToken === 'string' && DEVICE_TOKEN.test(deviceToken) ? deviceToken : null,
  }
}

function addressHash(address: string): string {
  return sha256Hex(`address:${address}`)
}

function deviceHash(token: string): string {
  return sha256Hex(`device:${token}`)
}

/** The counter an attempt counts on, and its limit. */
export interface SignInCounter {
  key: string
  limit: ThrottleLimit
}

/**
 * The counter of a sign-in attempt on `nameKey` (the name's throttle key)
 * by `subject` (null when the name is nobody's), inside the caller's unit of
 * work: the known place's own when the attempt comes from one (a known
 * device first, then a known address), else the name's.
 */
export async function signInCounter(store: AuthStore, nameKey: string, subject: string | null, place: SignInPlace, now: Date): Promise<SignInCounter> {
  const device = place.deviceToken === null ? null : deviceHash(place.deviceToken)
  const address = place.address === null ? null : addressHash(place.address)
  const candidates = [device, address].filter((hash): hash is string => hash !== null)
  // Read for an unknown name too (a subject that has no places), so both take the same steps.
  const known = await store.knownPlaces(subject ?? `nobody:${nameKey}`, candidates, new Date(now.getTime() - KNOWN_PLACES.ttlMs))
  const hash = candidates.find((candidate) => known.includes(candidate))
  if (subject === null || hash === undefined) return { key: nameKey, limit: LOGIN_LIMITS.account }
  // The name's key with the place's hash: per name and place, deleted with neither.
  return { key: `${nameKey}@${hash.slice(0, 32)}`, limit: LOGIN_LIMITS.knownPlace }
}

/**
 * Remembers a successful sign-in's places, inside its unit of work, and
 * answers the device token the client should keep: the one it sent when that
 * one is already this subject's, else a new one.
 */
export async function rememberSignInPlace(store: AuthStore, subject: string, place: SignInPlace, now: Date): Promise<string> {
  const sent = place.deviceToken
  const known = sent !== null && (await store.knownPlaces(subject, [deviceHash(sent)], new Date(now.getTime() - KNOWN_PLACES.ttlMs))).length === 1
  const token = known ? sent : randomToken(32)
  await store.rememberPlace({ subject, kind: 'device', placeHash: deviceHash(token), lastSeenAt: now }, KNOWN_PLACES.perKind)
  if (place.address !== null) await store.rememberPlace({ subject, kind: 'address', placeHash: addressHash(place.address), lastSeenAt: now }, KNOWN_PLACES.perKind)
  return token
}

export function userSubject(userId: string): string {
  return `user:${userId}`
}

export function operatorSubject(operatorId: string): string {
  return `operator:${operatorId}`
}
