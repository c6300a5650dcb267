// Known sign-in places: where a player or an operator signed in before, so
// that strangers failing on their name elsewhere cannot lock them out
// (issue 33; docs/decisions.md, "Known sign-in places").
//
// A place is the client's address (as ARENA_TRUST_PROXY decides it) or a
// device token the client sends back on its sign-ins (the API's
// `x-arena-device` header, the console's `arena_device` cookie). Both are
// stored only as SHA-256.
//
// A player's device token is the client's own (issue 40; docs/decisions.md,
// "Device identity"): a well-formed one (43 base64url characters, what the SDK
// makes from 32 random bytes) is adopted at that player's successful sign-in,
// on every sign-in route, and answered back; a malformed one, or none, gets a
// new random token. So one device keeps one token across accounts, which the
// integrity signals read (`sharedPlaces`: two players signing in from one
// device). It is a signal, never proof: a client can send anything, or a new
// token each time. An operator's token stays the server's: one the operator
// sent is kept only when it is already that operator's, else replaced.
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
//   own place known for someone else's name. A token the client chose is no
//   exception: it becomes known for a subject only at that subject's own
//   successful sign-in, so choosing one gains a stranger nothing on a name
//   whose password they lack (and a token someone else's client uses is as
//   secret as a token the server would have handed out).
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

/** A device token: 43 base64url characters (32 random bytes, as the SDK and randomToken(32) make them). Anything else a client sends is ignored. */
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
 * Whose device token a sign-in keeps: a player's client chooses its own (a
 * well-formed token it sent is adopted); an operator's is the server's (a
 * sent token is kept only when already that operator's).
 */
export type DeviceTokenPolicy = 'adopt' | 'known-only'

/**
 * Remembers a successful sign-in's places, inside its unit of work, and
 * answers the device token the client should keep: the one it sent when the
 * policy keeps it (see DeviceTokenPolicy), else a new one.
 */
export async function rememberSignInPlace(store: AuthStore, subject: string, place: SignInPlace, now: Date, policy: DeviceTokenPolicy): Promise<string> {
  const sent = place.deviceToken
  const kept =
    sent !== null && (policy === 'adopt' || (await store.knownPlaces(subject, [deviceHash(sent)], new Date(now.getTime() - KNOWN_PLACES.ttlMs))).length === 1)
  const token = kept ? sent : randomToken(32)
  await store.rememberPlace({ subject, kind: 'device', placeHash: deviceHash(token), lastSeenAt: now }, KNOWN_PLACES.perKind)
  if (place.address !== null) await store.rememberPlace({ subject, kind: 'address', placeHash: addressHash(place.address), lastSeenAt: now }, KNOWN_PLACES.perKind)
  return token
}

/** The places two subjects both signed in from within KNOWN_PLACES.ttlMs of `now` (hashes only): the integrity signals' read. */
export function sharedPlaces(store: AuthStore, subjectA: string, subjectB: string, now: Date): Promise<Array<{ kind: 'address' | 'device'; placeHash: string }>> {
  return store.sharedPlaces(subjectA, subjectB, new Date(now.getTime() - KNOWN_PLACES.ttlMs))
}

export function userSubject(userId: string): string {
  return `user:${userId}`
}

export function operatorSubject(operatorId: string): string {
  return `operator:${operatorId}`
}
