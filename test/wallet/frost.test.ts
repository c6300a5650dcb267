// Invariant: the 2-of-3 FROST wallet key is made by a dealerless DKG whose
// every message and state is plain JSON; any two of the three holders (and no
// single one) can produce a signature that plain Ed25519 verification accepts
// for exactly the withdrawal that was signed, and nothing else.
import { describe, expect, test } from 'bun:test'
import { ed25519, ed25519_FROST } from '@noble/curves/ed25519.js'
import { bytesToHex, hexToBytes } from '@noble/curves/utils.js'
import { base58 } from '@scure/base'
import {
  addressOf,
  aggregate,
  CHECKED_POINTS_MAX,
  checkedPointCount,
  dkgRound1,
  dkgRound2,
  dkgRound3,
  forgetCheckedPoints,
  groupPublicKey,
  identifierOf,
  isCheckedPoint,
  isValidAddress,
  type KeyShare,
  type ParticipantName,
  runLocalDkg,
  signRound1,
  signRound2,
  type SigningCommitment,
  THRESHOLD,
  withdrawalMessage,
} from '../../src/modules/wallet/frost'

const NAMES: ParticipantName[] = ['server', 'cosigner', 'recovery']

/** Fails unless the value is made only of JSON primitives, arrays and plain objects (no bytes, no bigints). */
function expectPlainJson(value: unknown, path = '$'): void {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return
  if (typeof value === 'number') {
    expect(Number.isFinite(value)).toBe(true)
    return
  }
  if (Array.isArray(value)) {
    value.forEach((v, i) => expectPlainJson(v, `${path}[${i}]`))
    return
  }
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    for (const [k, v] of Object.entries(value)) expectPlainJson(v, `${path}.${k}`)
    return
  }
  throw new Error(`${path} is not plain JSON: ${Object.prototype.toString.call(value)}`)
}

/** Crosses a process boundary: the value must be plain JSON and survive the trip unchanged. */
function wire<T>(value: T): T {
  expectPlainJson(value)
  const copy = JSON.parse(JSON.stringify(value)) as T
  expect(copy).toEqual(value)
  return copy
}

function others(me: ParticipantName): ParticipantName[] {
  return NAMES.filter((n) => n !== me)
}

/** The DKG as three processes would run it: every state and message is written out as JSON and read back. */
function distributedDkg(): Record<ParticipantName, KeyShare> {
  const r1 = Object.fromEntries(NAMES.map((n) => [n, wire(dkgRound1(n))])) as Record<ParticipantName, ReturnType<typeof dkgRound1>>
  const broadcastsFor = (me: ParticipantName) => others(me).map((o) => wire(r1[o].broadcast))
  const r2 = Object.fromEntries(NAMES.map((n) => [n, wire(dkgRound2(wire(r1[n].state), broadcastsFor(n)))])) as Record<
    ParticipantName,
    ReturnType<typeof dkgRound2>
  >
  const inbox = (me: ParticipantName) =>
    others(me).map((o) => {
      const pkg = r2[o].packagesFor[me]
      if (!pkg) throw new Error(`no package from ${o} for ${me}`)
      return wire(pkg)
    })
  return Object.fromEntries(NAMES.map((n) => [n, wire(dkgRound3(wire(r2[n].state), broadcastsFor(n), inbox(n)))])) as Record<
    ParticipantName,
    KeyShare
  >
}

/** Two holders sign as two processes with an aggregator: everything between steps goes through JSON. */
function signWith(shares: Record<ParticipantName, KeyShare>, pair: [ParticipantName, ParticipantName], message: Uint8Array): Uint8Array {
  const round1 = pair.map((n) => wire(signRound1(wire(shares[n]))))
  const commitments = round1.map((r) => wire(r.commitment))
  const sigShares = pair.map((n, i) => {
    const nonces = wire(round1[i]!.nonces)
    return wire(signRound2(wire(shares[n]), nonces, wire(commitments), message))
  })
  return aggregate(wire(shares.recovery), wire(commitments), message, wire(sigShares))
}

const withdrawal = {
  id: 'wd_01HZX3',
  asset: 'SOL',
  amount: '1500000000',
  destinationAddress: addressOf(ed25519.getPublicKey(new Uint8Array(32).fill(7))),
}

// One DKG shared by the signing tests keeps the file fast; it is itself run as three processes.
const shares = distributedDkg()

describe('distributed key generation', () => {
  test('three shares, one group key, distinct secrets, a valid point, a round-tripping address', () => {
    const local = runLocalDkg()
    for (const set of [shares, local]) {
      const pk = bytesToHex(groupPublicKey(set.server))
      for (const n of NAMES) {
        expect(set[n].name).toBe(n)
        expect(set[n].secret.identifier).toBe(identifierOf(n))
        expect(bytesToHex(groupPublicKey(set[n]))).toBe(pk)
        expect(set[n].public).toEqual(set.server.public)
        expect(set[n].public.signers).toEqual({ min: THRESHOLD.min, max: THRESHOLD.max })
      }
      const secrets = new Set(NAMES.map((n) => set[n].secret.signingShare))
      expect(secrets.size).toBe(3)
      const key = groupPublicKey(set.server)
      expect(key.length).toBe(32)
      const point = ed25519.Point.fromBytes(key, false)
      expect(point.isSmallOrder()).toBe(false)
      expect(point.isTorsionFree()).toBe(true)
      const address = addressOf(key)
      expect(isValidAddress(address)).toBe(true)
      expect(bytesToHex(base58.decode(address))).toBe(pk)
    }
    // Two runs never produce the same key: no fixed or derived secret.
    expect(bytesToHex(groupPublicKey(local.server))).not.toBe(bytesToHex(groupPublicKey(shares.server)))
  })

  test('round 3 refuses a round-2 share that does not match its sender\'s commitment', () => {
    const r1 = Object.fromEntries(NAMES.map((n) => [n, dkgRound1(n)])) as Record<ParticipantName, ReturnType<typeof dkgRound1>>
    const b = (me: ParticipantName) => others(me).map((o) => r1[o].broadcast)
    const server = dkgRound2(r1.server.state, b('server'))
    const cosigner = dkgRound2(r1.cosigner.state, b('cosigner'))
    const recovery = dkgRound2(r1.recovery.state, b('recovery'))
    const fromCosigner = cosigner.packagesFor.server!
    const fromRecovery = recovery.packagesFor.server!
    // A valid scalar, but not the cosigner's polynomial evaluated at the server.
    const forged = { ...fromCosigner, signingShare: fromRecovery.signingShare }
    expect(() => dkgRound3(server.state, b('server'), [forged, fromRecovery])).toThrow()
    // A package addressed to someone else is refused before any math.
    expect(() => dkgRound3(server.state, b('server'), [cosigner.packagesFor.recovery!, fromRecovery])).toThrow('addressed to')
    // Round 3 must see the same round-1 broadcasts that round 2 checked (the
    // transcript persisted in the round-2 state), even across a process restart.
    const swapped = [dkgRound1('cosigner').broadcast, r1.recovery.broadcast]
    expect(() => dkgRound3(JSON.parse(JSON.stringify(server.state)), swapped, [fromCosigner, fromRecovery])).toThrow(
      'authenticated transcript',
    )
    // The untampered inputs do finish, so the refusals above are about the tampering.
    expect(dkgRound3(server.state, b('server'), [fromCosigner, fromRecovery]).name).toBe('server')
  })

  test('round 2 refuses a broadcast whose sender name and identifier disagree, and a duplicate sender', () => {
    const server = dkgRound1('server')
    const cosigner = dkgRound1('cosigner').broadcast
    const recovery = dkgRound1('recovery').broadcast
    expect(() => dkgRound2(server.state, [cosigner, { ...recovery, from: 'cosigner' }])).toThrow()
    expect(() => dkgRound2(server.state, [cosigner, cosigner])).toThrow()
    expect(() => dkgRound2(server.state, [cosigner, server.broadcast])).toThrow()
    expect(dkgRound2(server.state, [cosigner, recovery]).state.step).toBe(2)
  })
})

describe('signing', () => {
  const message = withdrawalMessage(withdrawal)
  const pairs: [ParticipantName, ParticipantName][] = [
    ['server', 'cosigner'],
    ['server', 'recovery'],
    ['cosigner', 'recovery'],
  ]

  for (const pair of pairs) {
    test(`${pair.join(' + ')} sign a withdrawal that plain ed25519.verify accepts`, () => {
      const signature = signWith(shares, pair, message)
      expect(signature.length).toBe(64)
      expect(ed25519.verify(signature, message, groupPublicKey(shares.server))).toBe(true)
      expect(ed25519.verify(signature, message, groupPublicKey(shares.server), { zip215: false })).toBe(true)
    })
  }

  test('a signature covers exactly one withdrawal: changing any single field breaks it', () => {
    const key = groupPublicKey(shares.server)
    const signature = signWith(shares, ['server', 'cosigner'], message)
    expect(ed25519.verify(signature, withdrawalMessage({ ...withdrawal }), key)).toBe(true)
    const variants = [
      { ...withdrawal, id: 'wd_01HZX4' },
      { ...withdrawal, asset: 'USDC' },
      { ...withdrawal, amount: '1500000001' },
      { ...withdrawal, destinationAddress: addressOf(ed25519.getPublicKey(new Uint8Array(32).fill(8))) },
    ]
    for (const v of variants) expect(ed25519.verify(signature, withdrawalMessage(v), key)).toBe(false)
  })

  test('one holder alone cannot sign: a lone, duplicated, forged or tampered second share is refused', () => {
    const server = shares.server
    const own = signRound1(server)
    // Alone: the threshold is two signers.
    expect(() => signRound2(server, signRound1(server).nonces, [own.commitment], message)).toThrow()
    expect(() => aggregate(server, [own.commitment], message, [])).toThrow()

    // Counting itself twice.
    const a = signRound1(server)
    const b = signRound1(server)
    expect(() => signRound2(server, a.nonces, [a.commitment, b.commitment], message)).toThrow('duplicate')

    // Posing as the cosigner with its own secret: the library finds the bad share.
    const impostor: KeyShare = {
      name: 'cosigner',
      public: server.public,
      secret: { identifier: identifierOf('cosigner'), signingShare: server.secret.signingShare },
    }
    const mine = signRound1(server)
    const fake = signRound1(impostor)
    const commitments = [mine.commitment, fake.commitment]
    const sigShares = [signRound2(server, mine.nonces, commitments, message), signRound2(impostor, fake.nonces, commitments, message)]
    let failure: unknown
    try {
      aggregate(server, commitments, message, sigShares)
    } catch (e) {
      failure = e
    }
    expect(failure).toBeInstanceOf(Error)
    expect((failure as { cheaters?: string[] }).cheaters).toEqual([identifierOf('cosigner')])

    // A genuine pair whose cosigner share is altered by one bit in transit also fails.
    const s = signRound1(server)
    const c = signRound1(shares.cosigner)
    const list = [s.commitment, c.commitment]
    const good = [signRound2(server, s.nonces, list, message), signRound2(shares.cosigner, c.nonces, list, message)]
    const flipped = good[1]!.share.slice(0, -2) + (good[1]!.share.endsWith('00') ? '01' : '00')
    expect(() => aggregate(server, list, message, [good[0]!, { ...good[1]!, share: flipped }])).toThrow()
    // ...while the unaltered shares aggregate, so the refusal is about the alteration.
    expect(ed25519.verify(aggregate(server, list, message, good), message, groupPublicKey(server))).toBe(true)
  })

  test('nonces are single-use and bound to their own commitment', () => {
    const s = signRound1(shares.server)
    const c = signRound1(shares.cosigner)
    const list: SigningCommitment[] = [s.commitment, c.commitment]
    signRound2(shares.server, s.nonces, list, message)
    expect(() => signRound2(shares.server, s.nonces, list, withdrawalMessage({ ...withdrawal, amount: '1' }))).toThrow('already used')

    // A commitment list that misstates the signer's own commitment is refused.
    const s2 = signRound1(shares.server)
    const other = signRound1(shares.server)
    const misstated = [{ ...s2.commitment, hiding: other.commitment.hiding }, c.commitment]
    expect(() => signRound2(shares.server, s2.nonces, misstated, message)).toThrow()
    // Someone else's nonces are refused too.
    expect(() => signRound2(shares.server, signRound1(shares.cosigner).nonces, list, message)).toThrow()
  })
})

describe('addresses', () => {
  const valid = addressOf(groupPublicKey(shares.server))

  /** 32 bytes that are not the encoding of any curve point: the first y (little-endian, sign bit clear) with no x. */
  function offCurveBytes(): Uint8Array {
    for (let y = 2; y < 256; y++) {
      const bytes = new Uint8Array(32)
      bytes[0] = y
      try {
        ed25519.Point.fromBytes(bytes, true)
      } catch {
        return bytes
      }
    }
    throw new Error('no off-curve y below 256')
  }

  test('accepts the group key address and a regular Ed25519 key', () => {
    expect(isValidAddress(valid)).toBe(true)
    expect(isValidAddress(withdrawal.destinationAddress)).toBe(true)
  })

  test('refuses empty, non-base58, wrong-length, off-curve and small-order inputs', () => {
    const key = groupPublicKey(shares.server)
    expect(isValidAddress('')).toBe(false)
    expect(isValidAddress('0OIl')).toBe(false)
    expect(isValidAddress(`${valid.slice(0, -1)}0`)).toBe(false)
    expect(isValidAddress(base58.encode(key.slice(0, 31)))).toBe(false)
    expect(isValidAddress(base58.encode(Uint8Array.of(...key, 1)))).toBe(false)
    expect(isValidAddress(base58.encode(Uint8Array.of(0, ...key)))).toBe(false)
    const offCurve = offCurveBytes()
    expect(offCurve.length).toBe(32)
    expect(isValidAddress(base58.encode(offCurve))).toBe(false)
    // The identity point decodes, but nobody holds its key and anyone can forge for it.
    const identity = new Uint8Array(32)
    identity[0] = 1
    expect(isValidAddress(base58.encode(identity))).toBe(false)
  })
})

describe('withdrawal message', () => {
  test('is the domain line and the four fields, newline-separated, in fixed order', () => {
    const text = new TextDecoder().decode(withdrawalMessage(withdrawal))
    expect(text).toBe(`arena-withdrawal-v1\nwd_01HZX3\nSOL\n1500000000\n${withdrawal.destinationAddress}`)
  })

  test('refuses a newline in any field, an empty field and a non-canonical amount', () => {
    for (const field of ['id', 'asset', 'amount', 'destinationAddress'] as const) {
      expect(() => withdrawalMessage({ ...withdrawal, [field]: `${withdrawal[field]}\nx` })).toThrow('newline')
      expect(() => withdrawalMessage({ ...withdrawal, [field]: '' })).toThrow()
    }
    for (const amount of ['01', '1.5', '-1', ' 1', '1e9']) expect(() => withdrawalMessage({ ...withdrawal, amount })).toThrow('amount')
  })
})

describe('the signing suite and its cache of checked points', () => {
  const message = withdrawalMessage(withdrawal)
  /** A point of order 8: added to a valid point, it gives one outside the prime-order subgroup. */
  const T8 = ed25519.Point.fromBytes(hexToBytes('c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a'))
  const withTorsion = (hex: string) => bytesToHex(ed25519.Point.fromBytes(hexToBytes(hex)).add(T8).toBytes())
  const libPublic = (share: KeyShare) => ({
    signers: share.public.signers,
    commitments: share.public.commitments.map(hexToBytes),
    verifyingShares: Object.fromEntries(Object.entries(share.public.verifyingShares).map(([id, p]) => [id, hexToBytes(p)])),
  })
  const libCommitments = (list: SigningCommitment[]) => list.map((c) => ({ identifier: c.identifier, hiding: hexToBytes(c.hiding), binding: hexToBytes(c.binding) }))

  test('gives the same signature shares and signature as the library\'s ed25519_FROST, cold and warm', () => {
    forgetCheckedPoints()
    for (let round = 0; round < 2; round++) {
      const s = signRound1(shares.server)
      const c = signRound1(shares.cosigner)
      const list = [s.commitment, c.commitment]
      const nonceBytes = (n: { hiding: string; binding: string }) => ({ hiding: hexToBytes(n.hiding), binding: hexToBytes(n.binding) })
      const libShares = [
        [shares.server, nonceBytes(s.nonces)],
        [shares.cosigner, nonceBytes(c.nonces)],
      ].map(([share, nonces]) => {
        const k = share as KeyShare
        return ed25519_FROST.signShare({ identifier: k.secret.identifier, signingShare: hexToBytes(k.secret.signingShare) }, libPublic(k), nonces as { hiding: Uint8Array; binding: Uint8Array }, libCommitments(list), message)
      })
      const ours = [signRound2(shares.server, s.nonces, list, message), signRound2(shares.cosigner, c.nonces, list, message)]
      expect(ours.map((o) => o.share)).toEqual(libShares.map(bytesToHex))
      const signature = aggregate(shares.server, list, message, ours)
      const libSignature = ed25519_FROST.aggregate(libPublic(shares.server), libCommitments(list), message, Object.fromEntries(ours.map((o) => [o.identifier, hexToBytes(o.share)])))
      expect(bytesToHex(signature)).toBe(bytesToHex(libSignature))
    }
  })

  test('remembers a key set\'s group key once checked, never a finished signature\'s commitments', () => {
    forgetCheckedPoints()
    const key = shares.server.public.commitments[0]!
    expect(isCheckedPoint(key)).toBe(false)
    const s = signRound1(shares.server)
    const c = signRound1(shares.cosigner)
    const list = [s.commitment, c.commitment]
    const sigShares = [signRound2(shares.server, s.nonces, list, message), signRound2(shares.cosigner, c.nonces, list, message)]
    expect(isCheckedPoint(key)).toBe(true)
    const signature = aggregate(shares.server, list, message, sigShares)
    expect(ed25519.verify(signature, message, groupPublicKey(shares.server), { zip215: false })).toBe(true)
    for (const commitment of list) {
      expect(isCheckedPoint(commitment.hiding)).toBe(false)
      expect(isCheckedPoint(commitment.binding)).toBe(false)
    }
    expect(isCheckedPoint(key)).toBe(true)
  })

  test('keeps two key sets apart: each signature, made from a warm cache, verifies under its own key only', () => {
    const other = runLocalDkg()
    for (let i = 0; i < 3; i++) {
      for (const [set, foreign] of [
        [shares, other],
        [other, shares],
      ] as const) {
        const signature = signWith(set, ['server', 'cosigner'], message)
        expect(ed25519.verify(signature, message, groupPublicKey(set.server), { zip215: false })).toBe(true)
        expect(ed25519.verify(signature, message, groupPublicKey(foreign.server), { zip215: false })).toBe(false)
      }
    }
    expect(isCheckedPoint(other.server.public.commitments[0]!)).toBe(true)
    expect(isCheckedPoint(shares.server.public.commitments[0]!)).toBe(true)
  })

  test('refuses a commitment or a group key outside the prime-order subgroup every time, and never remembers it', () => {
    forgetCheckedPoints()
    const identity = bytesToHex(ed25519.Point.ZERO.toBytes())
    const smallOrder = bytesToHex(T8.toBytes())
    for (let attempt = 0; attempt < 2; attempt++) {
      const c = signRound1(shares.cosigner)
      for (const bad of [withTorsion(c.commitment.hiding), smallOrder, identity]) {
        for (const field of ['hiding', 'binding'] as const) {
          const s = signRound1(shares.server)
          const list = [s.commitment, { ...c.commitment, [field]: bad }]
          expect(() => signRound2(shares.server, s.nonces, list, message)).toThrow()
          expect(isCheckedPoint(bad)).toBe(false)
        }
      }
      // A key share whose group key carries a small-order component (a tampered share file).
      const key = shares.server.public.commitments[0]!
      const tampered: KeyShare = { ...shares.server, public: { ...shares.server.public, commitments: [withTorsion(key), shares.server.public.commitments[1]!] } }
      const s = signRound1(tampered)
      const list = [s.commitment, signRound1(shares.cosigner).commitment]
      expect(() => signRound2(tampered, s.nonces, list, message)).toThrow()
      expect(isCheckedPoint(withTorsion(key))).toBe(false)
    }
  })

  test('is bounded, and the least recently used points leave it first', () => {
    forgetCheckedPoints()
    const key = shares.server.public.commitments[0]!
    signWith(shares, ['server', 'cosigner'], message)
    // Round 1 remembers its own two commitments: ~3/5 of the bound, the key is still in.
    const batch = Math.ceil((CHECKED_POINTS_MAX * 3) / 10)
    for (let i = 0; i < batch; i++) signRound1(shares.recovery)
    expect(isCheckedPoint(key)).toBe(true)
    // Used again: it moves to the most recent end, so the next batch pushes the older commitments out, not it.
    signWith(shares, ['server', 'cosigner'], message)
    for (let i = 0; i < batch; i++) signRound1(shares.recovery)
    expect(checkedPointCount()).toBeLessThanOrEqual(CHECKED_POINTS_MAX)
    expect(isCheckedPoint(key)).toBe(true)
    // Unused while more than the bound arrives, it leaves, and the next signature checks it again.
    for (let i = 0; i < CHECKED_POINTS_MAX / 2 + 1; i++) signRound1(shares.recovery)
    expect(checkedPointCount()).toBe(CHECKED_POINTS_MAX)
    expect(isCheckedPoint(key)).toBe(false)
    expect(ed25519.verify(signWith(shares, ['server', 'cosigner'], message), message, groupPublicKey(shares.server), { zip215: false })).toBe(true)
    expect(isCheckedPoint(key)).toBe(true)
  })
})
