// Sealing secrets under the master key (ARENA_MASTER_KEY): AES-256-GCM through
// WebCrypto, so a database dump without the key reveals none of what the
// server keeps there (signing keys, the chain key, custody shares).
//
// A sealed value is `v1.<nonce>.<ciphertext and tag>`, both base64url. The
// nonce is 96 random bits, fresh for every seal: a few hundred thousand
// seals under one key stay far below the 2^32 at which random GCM nonces
// start to risk repeating. The secret's name is the additional data, so a
// sealed value copied into another name's row does not open (a swapped
// custody share cannot pose as another wallet's). The AES key is derived
// from the master key by HKDF with a label of its own, which leaves the
// master key free to key something else later without reusing this key.
const VERSION = 'v1'
const NONCE_BYTES = 12
const KEY_BYTES = 32
const HKDF_INFO = 'arena sealed secrets v1'

/** A sealed value that does not open: another master key, a value moved to another name, tampering or truncation. */
export class SealedOpenError extends Error {
  constructor(name: string, reason: string) {
    super(`the sealed secret "${name}" does not open: ${reason}`)
    this.name = 'SealedOpenError'
  }
}

/**
 * The master key: 32 bytes, given as 64 hex digits or as base64 (standard or
 * URL-safe, padding optional). It never prints itself: not through
 * JSON.stringify, String(...) or console.log, should a config object holding
 * it ever be logged.
 */
export class MasterKey {
  readonly #bytes: Uint8Array<ArrayBuffer>
  #key: Promise<CryptoKey> | undefined

  private constructor(bytes: Uint8Array<ArrayBuffer>) {
    this.#bytes = bytes
  }

  /** The key `text` spells, or null when it does not spell exactly 32 bytes. */
  static decode(text: string): MasterKey | null {
    const bytes = decodeKeyText(text.trim())
    return bytes && bytes.length === KEY_BYTES ? new MasterKey(bytes) : null
  }

  /**
   * A key of its own for one kind of secret, derived from the chain key
   * (HMAC-SHA256 under it, over `label`): every deployment has a chain key,
   * while a master key exists only with PostgreSQL. The chain key never
   * rotates, so what is sealed under a derived key stays readable.
   */
  static derivedFrom(chainKey: string, label: string): MasterKey {
    return MasterKey.decode(new Bun.CryptoHasher('sha256', chainKey).update(label).digest('hex'))!
  }

  /** A new random key, in hex (what an operator puts in ARENA_MASTER_KEY; tests). */
  static generateHex(): string {
    return Buffer.from(crypto.getRandomValues(new Uint8Array(KEY_BYTES))).toString('hex')
  }

  /** Seals `plaintext` as the secret `name`. */
  async seal(plaintext: string, name: string): Promise<string> {
    const nonce = crypto.getRandomValues(new Uint8Array(NONCE_BYTES))
    const ciphertext = await crypto.subtle.encrypt(
      { name: 'AES-GCM', iv: nonce, additionalData: encode(name) },
      await this.aesKey(),
      encode(plaintext),
    )
    return `${VERSION}.${Buffer.from(nonce).toString('base64url')}.${Buffer.from(ciphertext).toString('base64url')}`
  }

  /** Opens the secret `name` sealed as `sealed`; SealedOpenError when this key did not seal it for that name, or it was altered. */
  async open(sealed: string, name: string): Promise<string> {
    const parts = sealed.split('.')
    if (parts.length !== 3 || parts[0] !== VERSION) throw new SealedOpenError(name, `not a ${VERSION} sealed value`)
    const nonce = Buffer.from(parts[1]!, 'base64url')
    const ciphertext = Buffer.from(parts[2]!, 'base64url')
    if (nonce.length !== NONCE_BYTES || ciphertext.length < 16) throw new SealedOpenError(name, 'truncated')
    let plaintext: ArrayBuffer
    try {
      plaintext = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: nonce, additionalData: encode(name) }, await this.aesKey(), ciphertext)
    } catch {
      // GCM says only "the tag does not match": which of the causes, it cannot tell.
      throw new SealedOpenError(name, 'sealed under another master key, moved from another name, or altered')
    }
    return new TextDecoder('utf-8', { fatal: true }).decode(plaintext)
  }

  private aesKey(): Promise<CryptoKey> {
    this.#key ??= (async () => {
      const master = await crypto.subtle.importKey('raw', this.#bytes, 'HKDF', false, ['deriveKey'])
      return crypto.subtle.deriveKey(
        { name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info: encode(HKDF_INFO) },
        master,
        { name: 'AES-GCM', length: 256 },
        false,
        ['encrypt', 'decrypt'],
      )
    })()
    return this.#key
  }

  toJSON(): string {
    return '[master key]'
  }

  toString(): string {
    return '[master key]'
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return 'MasterKey [master key]'
  }
}

function encode(text: string): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(text)
}

/** Hex (exactly 64 digits) or base64 / base64url that round-trips (no stray characters, no non-zero trailing bits). */
function decodeKeyText(text: string): Uint8Array<ArrayBuffer> | null {
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex')
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) return null
  const unpadded = text.replace(/=+$/, '')
  if (/[+/]/.test(unpadded) && /[_-]/.test(unpadded)) return null
  const bytes = Buffer.from(unpadded.replaceAll('+', '-').replaceAll('/', '_'), 'base64url')
  return bytes.toString('base64url') === unpadded.replaceAll('+', '-').replaceAll('/', '_') ? bytes : null
}
