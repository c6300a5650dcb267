// An operator's second factor: TOTP (RFC 6238: SHA-1, 6 digits, 30 s steps,
// what every authenticator app reads from an otpauth:// URI) through the
// `otpauth` package. The secret is kept SEALED in operators.totp_secret_sealed:
// AES-256-GCM (src/shared/sealed.ts) under a key derived from the chain key
// by HMAC-SHA256 with a label of its own, and the operator's id as the
// additional data, so a sealed secret copied onto another operator does not
// open. Why the chain key and not ARENA_MASTER_KEY: every deployment has a
// chain key (the data dir's secrets.json or the database's vault), while a
// master key exists only with PostgreSQL; the chain key never rotates, so a
// sealed secret stays readable for as long as the audit chain verifies.
import * as OTPAuth from 'otpauth'
import { MasterKey } from '../../shared/sealed'

const ISSUER = 'arena'
const PERIOD_S = 30
/** Codes one step either side of now are accepted: an authenticator's clock a little off, or a code typed as it changed. */
const WINDOW = 1
const SEAL_LABEL = 'arena operator TOTP seal v1'

/** The sealing key for TOTP secrets, derived from the chain key. */
export function totpSealKey(chainKey: string): MasterKey {
  return MasterKey.derivedFrom(chainKey, SEAL_LABEL)
}

/** The additional data of an operator's sealed secret: it opens only as this operator's. */
export function sealedName(operatorId: string): string {
  return `operator-totp:${operatorId}`
}

/** A fresh secret (160 random bits, RFC 4226's recommended length) in base32. */
export function newTotpSecret(): string {
  return new OTPAuth.Secret({ size: 20 }).base32
}

function totpOf(secret: string, label: string): OTPAuth.TOTP {
  return new OTPAuth.TOTP({ issuer: ISSUER, label, algorithm: 'SHA1', digits: 6, period: PERIOD_S, secret: OTPAuth.Secret.fromBase32(secret) })
}

/** The otpauth:// URI an authenticator app enrols from (shown once, as text or a QR code). */
export function totpUri(secret: string, operatorName: string): string {
  return totpOf(secret, operatorName).toString()
}

/**
 * The time step `code` belongs to when it is valid at `now` (within one step
 * either side), or null. The caller accepts it only above the last step it
 * accepted, so a code is never used twice.
 */
export function totpStep(secret: string, code: string, now: Date): number | null {
  const token = code.replace(/\s+/g, '')
  if (!/^[0-9]{6}$/.test(token)) return null
  const totp = totpOf(secret, 'check')
  const delta = totp.validate({ token, timestamp: now.getTime(), window: WINDOW })
  if (delta === null) return null
  return Math.floor(now.getTime() / 1000 / PERIOD_S) + delta
}

/** The code for `now` (tests, and nothing else: the server never needs to produce one). */
export function totpCode(secret: string, at: Date): string {
  return totpOf(secret, 'code').generate({ timestamp: at.getTime() })
}
