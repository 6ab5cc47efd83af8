import { describe, expect, test } from 'bun:test'
import { createHash, createHmac, hkdfSync } from 'node:crypto'
import { crc32 as zlibCrc32 } from 'node:zlib'
import fc from 'fast-check'
import { hkdfSha256Key } from '../src/auth/vault'
import { crc32, equalInConstantTime, hmacSha256, hmacSha256Keyed, sha256 } from '../src/util/digest'
import { randomBytes } from '../src/util/random'

/**
 * gw hashes with Bun's native hasher and draws random bytes from Web Crypto, so that start-up needs no
 * node:crypto (test/lazy-loading.test.ts); what they answer must be what node:crypto answers.
 */
const text = fc.string({ unit: 'grapheme', maxLength: 200 })
const data = fc.oneof(text, fc.uint8Array({ maxLength: 300 }))

describe('digests', () => {
  test('SHA-256 and HMAC-SHA256 answer what node:crypto answers, as bytes and encoded', () => {
    fc.assert(
      fc.property(data, data, (key, message) => {
        expect(sha256(message).equals(createHash('sha256').update(message).digest())).toBe(true)
        expect(sha256(message, 'hex')).toBe(createHash('sha256').update(message).digest('hex'))
        expect(hmacSha256(key, message).equals(createHmac('sha256', key).update(message).digest())).toBe(true)
        expect(hmacSha256(key, message, 'base64url')).toBe(createHmac('sha256', key).update(message).digest('base64url'))
      }),
      { numRuns: 300 },
    )
  })

  test('an HMAC keyed once signs each of many messages as a fresh HMAC does', () => {
    fc.assert(
      fc.property(data, fc.array(data, { minLength: 1, maxLength: 5 }), (key, messages) => {
        const sign = hmacSha256Keyed(key)
        for (const message of messages) expect(sign(message)).toBe(createHmac('sha256', key).update(message).digest('hex'))
      }),
      { numRuns: 300 },
    )
  })

  test("CRC-32 is zlib's", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => expect(crc32(bytes)).toBe(zlibCrc32(bytes))),
      { numRuns: 300 },
    )
  })

  test("the vault's key derivation is HKDF-SHA256 as node:crypto's hkdfSync derives it", () => {
    fc.assert(
      fc.property(text, text, text, (secret, salt, info) => {
        const expected = Buffer.from(hkdfSync('sha256', secret, salt, info, 32))
        expect(Buffer.from(hkdfSha256Key(secret, salt, info)).equals(expected)).toBe(true)
      }),
      { numRuns: 300 },
    )
  })

  test('equality in constant time: equal strings only, whatever their length', () => {
    expect(equalInConstantTime('Bearer abc', 'Bearer abc')).toBe(true)
    expect(equalInConstantTime('', '')).toBe(true)
    expect(equalInConstantTime('Bearer abc', 'Bearer abd')).toBe(false)
    expect(equalInConstantTime('Bearer ab', 'Bearer abc')).toBe(false)
    expect(equalInConstantTime('Bearer abcd', 'Bearer abc')).toBe(false)
    fc.assert(fc.property(text, text, (a, b) => expect(equalInConstantTime(a, b)).toBe(a === b)))
  })
})

test('random bytes: the size asked for, and not the same twice', () => {
  const a = randomBytes(32)
  expect(a.length).toBe(32)
  expect(a.equals(randomBytes(32))).toBe(false)
  expect(randomBytes(0).length).toBe(0)
  expect(randomBytes(16).toString('hex')).toMatch(/^[0-9a-f]{32}$/)
})
