// 2-of-3 FROST (RFC 9591, FROST-ED25519-SHA512-v1) threshold custody for the
// wallet: the transport-free core. Invariants that must stay true:
// - No function here ever holds more than one participant's secret share, and
//   nothing reconstructs the group secret key. Shares come from the DKG, never
//   from a trusted dealer.
// - Every input and output is plain JSON (strings, numbers, arrays, objects;
//   bytes as lowercase hex), so each participant can persist its own state in
//   its own file and send round messages to the others over HTTP.
// - The aggregated signature is an ordinary 64-byte Ed25519 signature (R || S)
//   that plain `ed25519.verify` accepts under the 32-byte group public key.
// The wrapped library (@noble/curves ed25519_FROST) does the cryptography; this
// file maps participant names to identifiers, converts bytes <-> hex, and
// refuses malformed or misrouted messages before they reach the library.
// Signing runs the library's same suite built with a point decoder that
// checks each encoding once (see "The signing suite" below), and the final
// signature check is the runtime's native Ed25519 verifier behind the
// canonical-encoding and small-order checks of ed25519.verify({ zip215: false }).
//
// Secrecy: DkgRound1State, DkgRound2State, DkgRound2Package, KeyShare.secret
// and SigningNonces are secret. Round-2 DKG packages carry the recipient's
// share in the clear: the transport must encrypt and authenticate them. Round-1
// broadcasts must reach every participant identically (compare the resulting
// group public key out of band before funding the address).
import { createHash, createPublicKey, verify as nativeVerify } from 'node:crypto'
import { ed25519, ed25519_FROST } from '@noble/curves/ed25519.js'
import { createFROST, type DKG_Round1, type DKG_Round2, type DKG_Secret, type FrostPublic, type FrostSecret, type NonceCommitments } from '@noble/curves/abstract/frost.js'
import { bytesToHex, bytesToNumberLE, concatBytes, hexToBytes } from '@noble/curves/utils.js'
import { base58 } from '@scure/base'

export const THRESHOLD = { min: 2, max: 3 } as const
export const PARTICIPANTS = ['server', 'cosigner', 'recovery'] as const
export type ParticipantName = (typeof PARTICIPANTS)[number]

const Fn = ed25519_FROST.utils.Fn
const SCALAR_BYTES = 32
const POINT_BYTES = 32

// Identifiers are the RFC 9591 scalars 1, 2, 3. Shares are bound to them: this
// mapping must never change once a key set exists, or every share breaks.
const IDENTIFIERS: Record<ParticipantName, string> = {
  server: ed25519_FROST.Identifier.fromNumber(1),
  cosigner: ed25519_FROST.Identifier.fromNumber(2),
  recovery: ed25519_FROST.Identifier.fromNumber(3),
}

export function identifierOf(name: ParticipantName): string {
  return IDENTIFIERS[name]
}

// ---------------------------------------------------------------------------
// JSON-safe message and state types (bytes are lowercase hex)

/** Public round-1 broadcast: the sender's VSS commitment and proof of knowledge. Send to both others. */
export interface DkgRound1Package {
  from: ParticipantName
  identifier: string
  /** THRESHOLD.min points; the first commits to the sender's secret contribution. */
  commitment: string[]
  proofOfKnowledge: string
}

/** SECRET. The participant's own polynomial between round 1 and round 2. */
export interface DkgRound1State {
  step: 1
  name: ParticipantName
  identifier: string
  /** SECRET polynomial coefficients, 32-byte little-endian scalars. */
  coefficients: string[]
  commitment: string[]
}

/** SECRET. As round 1, plus the round-1 broadcasts that round 2 authenticated; round 3 insists on the same ones. */
export interface DkgRound2State {
  step: 2
  name: ParticipantName
  identifier: string
  coefficients: string[]
  commitment: string[]
  /** The others' round-1 packages as checked in round 2, sorted by identifier. */
  round1Transcript: DkgRound1Package[]
}

/** SECRET, point-to-point: the share of the sender's polynomial meant for `to` alone. */
export interface DkgRound2Package {
  from: ParticipantName
  to: ParticipantName
  /** The sender's identifier (the library keys round-2 packages by sender). */
  identifier: string
  signingShare: string
}

/** Public part of a key set: identical for every holder. `commitments[0]` is the group public key. */
export interface PublicKeyPackage {
  signers: { min: number; max: number }
  commitments: string[]
  /** Identifier -> that participant's verifying share (a point). */
  verifyingShares: Record<string, string>
}

/** SECRET: one participant's signing share. */
export interface SecretSharePackage {
  identifier: string
  signingShare: string
}

export interface KeyShare {
  name: ParticipantName
  public: PublicKeyPackage
  secret: SecretSharePackage
}

/** SECRET and single-use: consumed (zeroed in place) by signRound2. */
export interface SigningNonces {
  signer: ParticipantName
  hiding: string
  binding: string
}

/** Public round-1 signing message. */
export interface SigningCommitment {
  signer: ParticipantName
  identifier: string
  hiding: string
  binding: string
}

/** Round-2 signing output, sent to whoever aggregates. */
export interface SignatureShare {
  signer: ParticipantName
  identifier: string
  share: string
}

// ---------------------------------------------------------------------------
// Parsing helpers: one canonical hex form, so identifiers and bytes compare as strings

const HEX = /^(?:[0-9a-f]{2})*$/

function hexOf(value: unknown, length: number, what: string): Uint8Array<ArrayBuffer> {
  if (typeof value !== 'string' || !HEX.test(value) || value.length !== length * 2) {
    throw new Error(`${what}: expected ${length} bytes as lowercase hex`)
  }
  return hexToBytes(value)
}

function hexList(value: unknown, count: number, length: number, what: string): Uint8Array<ArrayBuffer>[] {
  if (!Array.isArray(value) || value.length !== count) throw new Error(`${what}: expected ${count} entries`)
  return value.map((v, i) => hexOf(v, length, `${what}[${i}]`))
}

function participant(value: unknown, what: string): ParticipantName {
  if (typeof value !== 'string' || !(PARTICIPANTS as readonly string[]).includes(value)) {
    throw new Error(`${what}: unknown participant ${String(value)}`)
  }
  return value as ParticipantName
}

/** A message's claimed sender must carry that sender's identifier: a mismatch is a misrouted or forged message. */
function checkIdentity(name: unknown, identifier: unknown, what: string): ParticipantName {
  const p = participant(name, what)
  if (identifier !== IDENTIFIERS[p]) throw new Error(`${what}: identifier does not belong to ${p}`)
  return p
}

function nameOfIdentifier(identifier: string): ParticipantName {
  const name = PARTICIPANTS.find((p) => IDENTIFIERS[p] === identifier)
  if (!name) throw new Error(`unknown identifier ${identifier}`)
  return name
}

function scalarToHex(n: bigint): string {
  return bytesToHex(Fn.toBytes(n))
}

function hexToScalar(hex: unknown, what: string): bigint {
  const n = Fn.fromBytes(hexOf(hex, SCALAR_BYTES, what))
  if (scalarToHex(n) !== hex) throw new Error(`${what}: non-canonical scalar`)
  return n
}

function round1FromLib(p: DKG_Round1): DkgRound1Package {
  return {
    from: nameOfIdentifier(p.identifier),
    identifier: p.identifier,
    commitment: p.commitment.map(bytesToHex),
    proofOfKnowledge: bytesToHex(p.proofOfKnowledge),
  }
}

function round1ToLib(p: DkgRound1Package, what: string): DKG_Round1 {
  checkIdentity(p.from, p.identifier, what)
  return {
    identifier: p.identifier,
    commitment: hexList(p.commitment, THRESHOLD.min, POINT_BYTES, `${what}.commitment`),
    proofOfKnowledge: hexOf(p.proofOfKnowledge, POINT_BYTES + SCALAR_BYTES, `${what}.proofOfKnowledge`),
  }
}

/** The other two participants' round-1 packages, exactly one from each. */
function othersRound1(me: ParticipantName, packages: readonly DkgRound1Package[]): DKG_Round1[] {
  if (!Array.isArray(packages) || packages.length !== THRESHOLD.max - 1) {
    throw new Error(`expected ${THRESHOLD.max - 1} round-1 packages from the other participants`)
  }
  const seen = new Set<ParticipantName>()
  return packages.map((p, i) => {
    const lib = round1ToLib(p, `round1[${i}]`)
    if (p.from === me) throw new Error(`round1[${i}]: own package passed as another participant's`)
    if (seen.has(p.from)) throw new Error(`round1[${i}]: duplicate package from ${p.from}`)
    seen.add(p.from)
    return lib
  })
}

function dkgSecretToLib(state: DkgRound1State | DkgRound2State): DKG_Secret {
  checkIdentity(state.name, state.identifier, 'dkg state')
  if (!Array.isArray(state.coefficients) || state.coefficients.length !== THRESHOLD.min) {
    throw new Error('dkg state: wrong number of coefficients')
  }
  const coefficients = state.coefficients.map((c, i) => hexToScalar(c, `dkg state.coefficients[${i}]`))
  return {
    identifier: Fn.fromBytes(hexToBytes(state.identifier)),
    coefficients,
    commitment: hexList(state.commitment, THRESHOLD.min, POINT_BYTES, 'dkg state.commitment'),
    signers: { min: THRESHOLD.min, max: THRESHOLD.max },
    step: state.step,
  }
}

function publicToLib(pub: PublicKeyPackage): FrostPublic {
  if (pub.signers?.min !== THRESHOLD.min || pub.signers?.max !== THRESHOLD.max) {
    throw new Error('key share: not a 2-of-3 key set')
  }
  const verifyingShares: Record<string, Uint8Array<ArrayBuffer>> = {}
  for (const name of PARTICIPANTS) {
    const id = IDENTIFIERS[name]
    verifyingShares[id] = hexOf(pub.verifyingShares?.[id], POINT_BYTES, `key share.verifyingShares.${name}`)
  }
  if (Object.keys(pub.verifyingShares).length !== PARTICIPANTS.length) {
    throw new Error('key share: unexpected verifying shares')
  }
  return {
    signers: { min: THRESHOLD.min, max: THRESHOLD.max },
    commitments: hexList(pub.commitments, THRESHOLD.min, POINT_BYTES, 'key share.commitments'),
    verifyingShares,
  }
}

function secretToLib(share: KeyShare): FrostSecret {
  checkIdentity(share.name, share.secret?.identifier, 'key share')
  hexToScalar(share.secret.signingShare, 'key share.signingShare')
  return { identifier: share.secret.identifier, signingShare: hexToBytes(share.secret.signingShare) }
}

function publicFromLib(pub: FrostPublic): PublicKeyPackage {
  return {
    signers: { min: pub.signers.min, max: pub.signers.max },
    commitments: pub.commitments.map(bytesToHex),
    verifyingShares: Object.fromEntries(Object.entries(pub.verifyingShares).map(([id, p]) => [id, bytesToHex(p)])),
  }
}

function commitmentsToLib(commitments: readonly SigningCommitment[]): NonceCommitments[] {
  // RFC 9591: between min and max distinct signers. Duplicates would let one
  // holder count twice, so they are refused here and again by the library.
  if (!Array.isArray(commitments) || commitments.length < THRESHOLD.min || commitments.length > THRESHOLD.max) {
    throw new Error(`expected ${THRESHOLD.min} to ${THRESHOLD.max} signing commitments`)
  }
  const seen = new Set<ParticipantName>()
  return commitments.map((c, i) => {
    const name = checkIdentity(c.signer, c.identifier, `commitments[${i}]`)
    if (seen.has(name)) throw new Error(`commitments[${i}]: duplicate signer ${name}`)
    seen.add(name)
    return {
      identifier: c.identifier,
      hiding: hexOf(c.hiding, POINT_BYTES, `commitments[${i}].hiding`),
      binding: hexOf(c.binding, POINT_BYTES, `commitments[${i}].binding`),
    }
  })
}

// ---------------------------------------------------------------------------
// Distributed key generation: three steps per participant, no dealer

/** Round 1: pick this participant's random polynomial. Keep `state` secret; broadcast `broadcast` to both others. */
export function dkgRound1(name: ParticipantName): { state: DkgRound1State; broadcast: DkgRound1Package } {
  const identifier = IDENTIFIERS[participant(name, 'dkgRound1')]
  const { public: pub, secret } = ed25519_FROST.DKG.round1(identifier, { min: THRESHOLD.min, max: THRESHOLD.max })
  const coefficients = secret.coefficients
  if (!coefficients) throw new Error('dkgRound1: library returned no coefficients')
  return {
    state: {
      step: 1,
      name,
      identifier,
      coefficients: coefficients.map(scalarToHex),
      commitment: secret.commitment.map(bytesToHex),
    },
    broadcast: round1FromLib(pub),
  }
}

/**
 * Round 2: check the others' proofs of knowledge and evaluate this
 * participant's polynomial at each of them. `packagesFor[x]` goes to x alone,
 * encrypted; there is no entry for the participant itself.
 */
export function dkgRound2(
  state: DkgRound1State,
  othersRound1Broadcasts: readonly DkgRound1Package[],
): { state: DkgRound2State; packagesFor: Partial<Record<ParticipantName, DkgRound2Package>> } {
  if (state.step !== 1) throw new Error('dkgRound2: expects the state from dkgRound1')
  const secret = dkgSecretToLib(state)
  const out = ed25519_FROST.DKG.round2(secret, othersRound1(state.name, othersRound1Broadcasts))
  const transcript = secret.round1Cache
  if (!transcript) throw new Error('dkgRound2: library kept no round-1 transcript')
  const packagesFor: Partial<Record<ParticipantName, DkgRound2Package>> = {}
  for (const [recipientId, p] of Object.entries(out)) {
    const to = nameOfIdentifier(recipientId)
    packagesFor[to] = { from: state.name, to, identifier: p.identifier, signingShare: bytesToHex(p.signingShare) }
  }
  ed25519_FROST.DKG.clean(secret)
  return {
    state: {
      step: 2,
      name: state.name,
      identifier: state.identifier,
      coefficients: [...state.coefficients],
      commitment: [...state.commitment],
      round1Transcript: transcript.map(round1FromLib),
    },
    packagesFor,
  }
}

/**
 * Round 3: verify each received share against its sender's commitment and sum
 * them into this participant's signing share. `othersRound1Broadcasts` must be
 * the same packages round 2 saw. Delete the DKG state afterwards.
 */
export function dkgRound3(
  state: DkgRound2State,
  othersRound1Broadcasts: readonly DkgRound1Package[],
  round2PackagesForMe: readonly DkgRound2Package[],
): KeyShare {
  if (state.step !== 2) throw new Error('dkgRound3: expects the state from dkgRound2')
  const secret = dkgSecretToLib(state)
  // The library compares round 3's round-1 packages with those round 2
  // authenticated; restore that transcript exactly (it is sorted by identifier).
  secret.round1Cache = othersRound1(state.name, state.round1Transcript)
  const round1 = othersRound1(state.name, othersRound1Broadcasts)
  if (!Array.isArray(round2PackagesForMe) || round2PackagesForMe.length !== THRESHOLD.max - 1) {
    throw new Error(`expected ${THRESHOLD.max - 1} round-2 packages`)
  }
  const seen = new Set<ParticipantName>()
  const round2: DKG_Round2[] = round2PackagesForMe.map((p, i) => {
    const from = checkIdentity(p.from, p.identifier, `round2[${i}]`)
    if (p.to !== state.name) throw new Error(`round2[${i}]: addressed to ${String(p.to)}, not ${state.name}`)
    if (from === state.name || seen.has(from)) throw new Error(`round2[${i}]: unexpected sender ${from}`)
    seen.add(from)
    hexToScalar(p.signingShare, `round2[${i}].signingShare`)
    return { identifier: p.identifier, signingShare: hexToBytes(p.signingShare) }
  })
  const key = ed25519_FROST.DKG.round3(secret, round1, round2)
  // Belt and braces: the finished share must match the joint commitment.
  ed25519_FROST.validateSecret(key.secret, key.public)
  return {
    name: state.name,
    public: publicFromLib(key.public),
    secret: { identifier: key.secret.identifier, signingShare: bytesToHex(key.secret.signingShare) },
  }
}

/** Convenience for tests and local mode: the full DKG among three in-memory participants (three separate states; no dealer). */
export function runLocalDkg(): Record<ParticipantName, KeyShare> {
  const r1 = {
    server: dkgRound1('server'),
    cosigner: dkgRound1('cosigner'),
    recovery: dkgRound1('recovery'),
  }
  const others = (me: ParticipantName) => PARTICIPANTS.filter((p) => p !== me).map((p) => r1[p].broadcast)
  const r2 = {
    server: dkgRound2(r1.server.state, others('server')),
    cosigner: dkgRound2(r1.cosigner.state, others('cosigner')),
    recovery: dkgRound2(r1.recovery.state, others('recovery')),
  }
  const inbox = (me: ParticipantName): DkgRound2Package[] =>
    PARTICIPANTS.filter((p) => p !== me).map((p) => {
      const pkg = r2[p].packagesFor[me]
      if (!pkg) throw new Error(`runLocalDkg: ${p} produced no package for ${me}`)
      return pkg
    })
  const shares = {
    server: dkgRound3(r2.server.state, others('server'), inbox('server')),
    cosigner: dkgRound3(r2.cosigner.state, others('cosigner'), inbox('cosigner')),
    recovery: dkgRound3(r2.recovery.state, others('recovery'), inbox('recovery')),
  }
  const pk = bytesToHex(groupPublicKey(shares.server))
  for (const p of PARTICIPANTS) {
    if (bytesToHex(groupPublicKey(shares[p])) !== pk) throw new Error('runLocalDkg: participants disagree on the group key')
  }
  return shares
}

/** The 32-byte Ed25519 group public key (RFC 8032 point encoding). */
export function groupPublicKey(share: KeyShare): Uint8Array {
  return hexOf(share.public.commitments[0], POINT_BYTES, 'key share.commitments[0]')
}

// ---------------------------------------------------------------------------
// Addresses

/** Solana-style address: base58 of the 32-byte public key. */
export function addressOf(publicKey: Uint8Array): string {
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== POINT_BYTES) {
    throw new Error('addressOf: expected a 32-byte public key')
  }
  return base58.encode(publicKey)
}

// base58 of 32 bytes is at most 44 characters; the cap keeps hostile input
// away from base58's quadratic decoder.
const MAX_ADDRESS_LENGTH = 44

/**
 * True when the string is the canonical base58 of 32 bytes that decode
 * (strictly, RFC 8032: y < p) to an Ed25519 point outside the small-order
 * subgroup. Small-order points (the identity among them) are refused: nobody
 * holds a key for them and anyone can forge signatures for them, so money sent
 * there is lost. Solana program-derived addresses are off-curve by design and
 * are refused too.
 */
export function isValidAddress(address: string): boolean {
  if (typeof address !== 'string' || address.length === 0 || address.length > MAX_ADDRESS_LENGTH) return false
  try {
    const bytes = base58.decode(address)
    if (bytes.length !== POINT_BYTES) return false
    if (base58.encode(bytes) !== address) return false
    return !ed25519.Point.fromBytes(bytes, false).isSmallOrder()
  } catch {
    return false
  }
}

// ---------------------------------------------------------------------------
// The signing suite: FROST-ED25519-SHA512-v1 as the library builds it, with a
// point decoder that checks each encoding once
//
// RFC 9591 has every signer and the aggregator deserialize the group key and
// every nonce commitment and refuse any element that is off the curve, the
// identity or outside the prime-order subgroup. The library does so on every
// call (ed25519_FROST even twice: its validatePoint hook repeats the checks
// its decoder just made), and the subgroup check is a full scalar
// multiplication (~0.26 ms here). One signature decodes the group key three
// times and each of the four commitments three times: 30 such checks, about
// 8 ms of the ~9 ms a signature cost. Whether an encoding passes these checks
// depends on the encoding alone, so an encoding that passed once passes
// again: CheckedPoint remembers the points that passed (bounded, most
// recently used kept) and answers a repeat with the same point. Every
// encoding it has not seen is checked in full, exactly as before.

/** Encodings that passed the checks, in least recently used order. The group keys of the wallets in use, and the commitments of signatures in progress. */
const checkedPoints = new Map<string, CheckedPoint>()
/** The points that passed; a point is frozen, so its verdict is kept here. */
const passed = new WeakSet<object>()
/** The encoding each decoded, not yet checked point came from. */
const encodingOf = new WeakMap<object, string>()
/** ~0.5 KB a point: the group keys of a thousand busy wallets. */
export const CHECKED_POINTS_MAX = 1024

class CheckedPoint extends ed25519.Point {
  static override fromBytes(bytes: Uint8Array, zip215 = false): CheckedPoint {
    // The suite decodes strictly (RFC 8032: y < p); nothing here caches another mode.
    if (zip215) throw new Error('CheckedPoint decodes strictly only')
    const encoding = bytesToHex(bytes)
    const hit = checkedPoints.get(encoding)
    if (hit) {
      checkedPoints.delete(encoding)
      checkedPoints.set(encoding, hit)
      return hit
    }
    const p = ed25519.Point.fromBytes(bytes, false)
    const point = new CheckedPoint(p.X, p.Y, p.Z, p.T)
    encodingOf.set(point, encoding)
    return point
  }

  override isTorsionFree(): boolean {
    return passed.has(this) || super.isTorsionFree()
  }
}

/**
 * The suite's validatePoint hook: the library calls it on a decoded element
 * after its own checks (on the curve, not the identity, prime-order subgroup)
 * passed, and only then; ed25519_FROST's hook repeats those checks, this one
 * records the verdict instead.
 */
function remember(point: CheckedPoint): void {
  passed.add(point)
  const encoding = encodingOf.get(point)
  if (encoding === undefined || checkedPoints.has(encoding)) return
  checkedPoints.set(encoding, point)
  if (checkedPoints.size > CHECKED_POINTS_MAX) checkedPoints.delete(checkedPoints.keys().next().value!)
}

/**
 * A commitment this process just computed (nonce × base point): in the
 * prime-order subgroup by construction, so it is decoded and checked for the
 * curve and the identity, and the subgroup check is skipped. Only for
 * commit()'s own output, never for a commitment that came from elsewhere.
 */
function rememberOwnCommitment(bytes: Uint8Array): void {
  const point = CheckedPoint.fromBytes(bytes)
  if (passed.has(point)) return
  point.assertValidity()
  if (point.is0()) throw new Error('signRound1: identity commitment')
  remember(point)
}

/** The commitments of a finished signature are never used again: they leave the cache with it. */
function forgetCommitments(commitments: readonly SigningCommitment[]): void {
  for (const c of commitments) {
    checkedPoints.delete(c.hiding)
    checkedPoints.delete(c.binding)
  }
}

/** Empties the cache of checked points (tests). */
export function forgetCheckedPoints(): void {
  checkedPoints.clear()
}

/** Whether the encoding is in the cache of checked points (tests). */
export function isCheckedPoint(encoding: string): boolean {
  return checkedPoints.has(encoding)
}

/** How many points the cache holds (tests). */
export function checkedPointCount(): number {
  return checkedPoints.size
}

/** SHA-512 by the runtime (the same function as the library's; test/wallet/frost.test.ts compares the suites' outputs). */
function sha512(message: Uint8Array): Uint8Array<ArrayBuffer> {
  return new Uint8Array(createHash('sha512').update(message).digest())
}

// The parameters of ed25519_FROST (@noble/curves ed25519.ts) but the point
// type and the hook; test/wallet/frost.test.ts checks that both suites give
// the same signature shares and signatures from the same nonces.
const signing = createFROST({
  name: 'FROST-ED25519-SHA512-v1',
  Point: CheckedPoint as unknown as typeof ed25519.Point,
  validatePoint: remember as (point: unknown) => void,
  hash: sha512,
  H2: '',
})

// ---------------------------------------------------------------------------
// Strict Ed25519 verification, natively

const ED25519_SPKI_PREFIX = hexToBytes('302a300506032b6570032100')
const GROUP_ORDER = ed25519.Point.Fn.ORDER

/** A strictly decoded (y < p) point outside the small-order subgroup; a checked point is one. */
function strictNotSmallOrder(bytes: Uint8Array): boolean {
  if (checkedPoints.has(bytesToHex(bytes))) return true
  try {
    return !ed25519.Point.fromBytes(bytes, false).isSmallOrder()
  } catch {
    return false
  }
}

/**
 * Ed25519 verification that accepts no signature ed25519.verify(…, { zip215:
 * false }) refuses, at a tenth of its cost. Here: 64 bytes, S < L (canonical),
 * A and R canonical encodings (y < p) of points outside the small-order
 * subgroup. Then the runtime's native RFC 8032 verifier (BoringSSL's
 * ED25519_verify in Bun), which checks [S]B = R + [k]A exactly, without the
 * cofactor: whatever it accepts the cofactored equation accepts too.
 * test/wallet/ed25519-verify.test.ts holds it to that.
 */
export function verifyEd25519(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  if (!(signature instanceof Uint8Array) || signature.length !== 64 || !(publicKey instanceof Uint8Array) || publicKey.length !== POINT_BYTES) return false
  if (bytesToNumberLE(signature.subarray(POINT_BYTES)) >= GROUP_ORDER) return false
  if (!strictNotSmallOrder(publicKey) || !strictNotSmallOrder(signature.subarray(0, POINT_BYTES))) return false
  try {
    const key = createPublicKey({ key: Buffer.from(concatBytes(ED25519_SPKI_PREFIX, publicKey)), format: 'der', type: 'spki' })
    return nativeVerify(null, message, key, signature)
  } catch {
    return false
  }
}

// ---------------------------------------------------------------------------
// Signing: any two holders, two rounds each, then one aggregation

/**
 * Round 1: fresh nonces for ONE signing session. Keep `nonces` secret and use
 * them for exactly one signRound2; send `commitment` to the aggregator.
 */
export function signRound1(share: KeyShare): { nonces: SigningNonces; commitment: SigningCommitment } {
  const { nonces, commitments } = ed25519_FROST.commit(secretToLib(share))
  rememberOwnCommitment(commitments.hiding)
  rememberOwnCommitment(commitments.binding)
  return {
    nonces: { signer: share.name, hiding: bytesToHex(nonces.hiding), binding: bytesToHex(nonces.binding) },
    commitment: {
      signer: share.name,
      identifier: commitments.identifier,
      hiding: bytesToHex(commitments.hiding),
      binding: bytesToHex(commitments.binding),
    },
  }
}

const USED_NONCE = '00'.repeat(SCALAR_BYTES)

/**
 * Round 2: this holder's signature share over `message` for the session whose
 * commitments (this holder's included) are listed. Signing two different
 * messages (or commitment lists) with the same nonces reveals the signing
 * share, so `nonces` is consumed: zeroed in place here, and a zeroed object is
 * refused. A persisted copy must be deleted by the caller BEFORE calling this.
 */
export function signRound2(
  share: KeyShare,
  nonces: SigningNonces,
  commitments: readonly SigningCommitment[],
  message: Uint8Array,
): SignatureShare {
  const secret = secretToLib(share)
  if (nonces.signer !== share.name) throw new Error(`signRound2: nonces belong to ${String(nonces.signer)}, not ${share.name}`)
  if (nonces.hiding === USED_NONCE || nonces.binding === USED_NONCE) throw new Error('signRound2: nonces already used')
  const list = commitmentsToLib(commitments)
  if (!commitments.some((c) => c.signer === share.name)) throw new Error('signRound2: own commitment missing')
  const lib = {
    hiding: Uint8Array.from(hexOf(nonces.hiding, SCALAR_BYTES, 'nonces.hiding')),
    binding: Uint8Array.from(hexOf(nonces.binding, SCALAR_BYTES, 'nonces.binding')),
  }
  // The library checks that the listed own commitment matches these nonces.
  const sig = signing.signShare(secret, publicToLib(share.public), lib, list, message)
  nonces.hiding = USED_NONCE
  nonces.binding = USED_NONCE
  return { signer: share.name, identifier: secret.identifier, share: bytesToHex(sig) }
}

/**
 * Combines the signature shares into a 64-byte Ed25519 signature. Any holder's
 * public package suffices (no secret is read). Throws when a share is missing,
 * duplicated or invalid; the library's error carries `cheaters` (identifiers of
 * the shares that failed per-share verification).
 */
export function aggregate(
  share: KeyShare,
  commitments: readonly SigningCommitment[],
  message: Uint8Array,
  signatureShares: readonly SignatureShare[],
): Uint8Array {
  const pub = publicToLib(share.public)
  const list = commitmentsToLib(commitments)
  const shares: Record<string, Uint8Array> = {}
  for (const [i, s] of signatureShares.entries()) {
    checkIdentity(s.signer, s.identifier, `signatureShares[${i}]`)
    if (s.identifier in shares) throw new Error(`signatureShares[${i}]: duplicate share from ${s.signer}`)
    shares[s.identifier] = hexOf(s.share, SCALAR_BYTES, `signatureShares[${i}].share`)
  }
  const signature = signing.aggregate(pub, list, message, shares)
  forgetCommitments(commitments)
  // The library already verified the sum; re-check with the verifier the
  // chain uses so a suite mismatch can never produce an unspendable signature.
  if (signature.length !== 64 || !verifyEd25519(signature, message, groupPublicKey(share))) {
    throw new Error('aggregate: signature does not verify')
  }
  return signature
}

// ---------------------------------------------------------------------------
// What gets signed

const WITHDRAWAL_DOMAIN = 'arena-withdrawal-v1'
// Ledger amounts are integer minor units; one spelling per amount ('5', not '05').
const AMOUNT = /^(?:0|[1-9][0-9]*)$/

/**
 * Canonical withdrawal message: UTF-8 of
 * 'arena-withdrawal-v1\n' + [id, asset, amount, destinationAddress].join('\n').
 * Unambiguous because the field count and order are fixed and no field may be
 * empty or contain '\n': splitting on '\n' recovers exactly these five parts,
 * so two different withdrawals never share a message. The domain line keeps
 * these signatures from being valid for any other message format.
 */
export function withdrawalMessage(w: { id: string; asset: string; amount: string; destinationAddress: string }): Uint8Array {
  const fields = [w.id, w.asset, w.amount, w.destinationAddress] as const
  const labels = ['id', 'asset', 'amount', 'destinationAddress'] as const
  fields.forEach((f, i) => {
    if (typeof f !== 'string' || f.length === 0) throw new Error(`withdrawalMessage: ${labels[i]} must be a non-empty string`)
    if (f.includes('\n')) throw new Error(`withdrawalMessage: ${labels[i]} must not contain a newline`)
  })
  if (!AMOUNT.test(w.amount)) throw new Error('withdrawalMessage: amount must be integer minor units without leading zeros')
  return new TextEncoder().encode([WITHDRAWAL_DOMAIN, ...fields].join('\n'))
}
