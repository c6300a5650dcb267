// Invariants of sealing (ARENA_MASTER_KEY, src/shared/sealed.ts): a sealed
// value opens only under the key that sealed it and only as the secret it was
// sealed as; any altered byte is refused; no two seals share a nonce; the key
// text is 32 bytes exactly and the key never prints itself.
import { describe, expect, test } from 'bun:test'
import { inspect } from 'node:util'
import { MasterKey, SealedOpenError } from '../../src/shared/sealed'

const key = () => MasterKey.decode(MasterKey.generateHex())!

describe('seal and open', () => {
  test('a value sealed as a name opens as that name, to the same text (unicode included)', async () => {
    const k = key()
    for (const plaintext of ['', 'x', 'signing key ✓ — 鍵', JSON.stringify({ share: 'ab'.repeat(500) })]) {
      expect(await k.open(await k.seal(plaintext, 'chain-key'), 'chain-key')).toBe(plaintext)
    }
  })

  test('is v1.<nonce>.<ciphertext>, the plaintext nowhere in it', async () => {
    const secret = 'a'.repeat(40)
    const sealed = await key().seal(secret, 'chain-key')
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/)
    expect(sealed).not.toContain(secret)
    expect(sealed).not.toContain(Buffer.from(secret).toString('base64url'))
  })

  test('another master key does not open it', async () => {
    const sealed = await key().seal('secret', 'chain-key')
    await expect(key().open(sealed, 'chain-key')).rejects.toThrow(SealedOpenError)
    await expect(key().open(sealed, 'chain-key')).rejects.toThrow(/"chain-key" does not open: sealed under another master key/)
  })

  test('a value moved to another name does not open there (rows swapped)', async () => {
    const k = key()
    const server = await k.seal('server share', 'custody/key_a/server')
    const recovery = await k.seal('recovery share', 'custody/key_a/recovery')
    await expect(k.open(server, 'custody/key_a/recovery')).rejects.toThrow(SealedOpenError)
    await expect(k.open(recovery, 'custody/key_a/server')).rejects.toThrow(SealedOpenError)
    await expect(k.open(server, 'custody/key_b/server')).rejects.toThrow(SealedOpenError)
  })

  test('any changed byte, a cut value, another version or garbage is refused', async () => {
    const k = key()
    const sealed = await k.seal('some secret value', 'n')
    const [version, nonce, body] = sealed.split('.') as [string, string, string]
    const flip = (text: string, at: number) => {
      const bytes = Buffer.from(text, 'base64url')
      bytes[at] = bytes[at]! ^ 1
      return bytes.toString('base64url')
    }
    const ciphertextLength = Buffer.from(body, 'base64url').length
    const altered = [
      `${version}.${flip(nonce, 0)}.${body}`,
      ...Array.from({ length: ciphertextLength }, (_, i) => `${version}.${nonce}.${flip(body, i)}`),
      `${version}.${nonce}.${Buffer.from(body, 'base64url').subarray(0, ciphertextLength - 1).toString('base64url')}`,
      `v2.${nonce}.${body}`,
      `${version}.${nonce}`,
      `${version}.${nonce}.`,
      'not sealed at all',
    ]
    for (const value of altered) await expect(k.open(value, 'n')).rejects.toThrow(SealedOpenError)
    expect(await k.open(sealed, 'n')).toBe('some secret value')
  })

  test('every seal draws a fresh nonce: the same text sealed twice never looks the same', async () => {
    const k = key()
    const sealed = await Promise.all(Array.from({ length: 2000 }, () => k.seal('same', 'same-name')))
    expect(new Set(sealed.map((s) => s.split('.')[1])).size).toBe(sealed.length)
    expect(new Set(sealed).size).toBe(sealed.length)
  })
})

describe('the master key', () => {
  const bytes = Buffer.from(Array.from({ length: 32 }, (_, i) => i * 7))

  test('is 32 bytes as 64 hex digits, or as base64 / base64url with or without padding', async () => {
    const spellings = [
      bytes.toString('hex'),
      bytes.toString('hex').toUpperCase(),
      bytes.toString('base64'),
      bytes.toString('base64').replace(/=+$/, ''),
      bytes.toString('base64url'),
      `  ${bytes.toString('hex')}\n`,
    ]
    const sealed = await MasterKey.decode(spellings[0]!)!.seal('same key', 'n')
    for (const text of spellings) {
      const decoded = MasterKey.decode(text)
      expect(decoded).not.toBeNull()
      expect(await decoded!.open(sealed, 'n')).toBe('same key')
    }
  })

  test('anything but exactly 32 bytes is refused', () => {
    for (const text of [
      '',
      bytes.toString('hex').slice(0, 62),
      bytes.toString('hex') + '00',
      Buffer.alloc(31).toString('base64'),
      Buffer.alloc(33).toString('base64'),
      'g'.repeat(64),
      bytes.toString('base64').slice(0, 42) + '!=',
      // Standard and URL-safe alphabets mixed.
      `+_${bytes.toString('base64url').slice(2)}`,
      // Trailing bits that a canonical encoding never sets.
      bytes.toString('base64url').slice(0, 42) + 'B',
      'correct horse battery staple correct horse battery staple',
    ]) {
      expect(MasterKey.decode(text)).toBeNull()
    }
  })

  test('never prints itself', () => {
    const hex = bytes.toString('hex')
    const k = MasterKey.decode(hex)!
    const shown = [JSON.stringify({ masterKey: k }), String(k), `${k}`, inspect(k), inspect({ config: { masterKey: k } }, { depth: 5, showHidden: true })]
    for (const text of shown) {
      expect(text).not.toContain(hex)
      expect(text).not.toContain(bytes.toString('base64'))
      expect(text).toContain('[master key]')
    }
  })
})
