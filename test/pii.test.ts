import { describe, expect, test } from 'bun:test'
import { redactPii } from '../src/security/pii'

describe('PII redaction', () => {
  const found: Array<[string, string, string]> = [
    ['an email', 'write to jane.doe+x@example.co.uk today', 'write to [redacted:email] today'],
    ['a phone number with a country code', 'call +44 20 7946 0958 now', 'call [redacted:phone] now'],
    ['a phone number with separators', 'call (555) 123-4567', 'call [redacted:phone]'],
    ['a card number that passes Luhn', 'card 4111 1111 1111 1111 exp', 'card [redacted:card] exp'],
    ['a card number with dashes', 'paid with 4111-1111-1111-1111.', 'paid with [redacted:card].'],
    ['a 15-digit card number, unbroken', 'amex 378282246310005', 'amex [redacted:card]'],
    ['a 19-digit card number in groups', 'card 6011 0009 9013 9424 009', 'card [redacted:card]'],
    ['an OpenAI-style key', 'key sk-proj-abcdefghijklmnopqrstuvwx', 'key [redacted:secret]'],
    ['an AWS key id', 'AKIAIOSFODNN7EXAMPLE', '[redacted:secret]'],
  ]
  for (const [what, input, expected] of found) {
    test(`${what} is redacted`, () => {
      expect(redactPii(input).text).toBe(expected)
    })
  }

  const kept = [
    '"created":1700000000,"prompt_tokens":1000',
    'order 1234567890123 shipped',
    'version 1.2.3',
    'room 101',
    // Passes Luhn, but 20 digits are longer than any card number.
    'twenty digits 12345678901234567894 are no card',
  ]
  for (const input of kept) {
    test(`"${input}" is left alone`, () => {
      expect(redactPii(input)).toEqual({ text: input, counts: {} })
    })
  }

  test('counts by kind, never the values', () => {
    const { counts } = redactPii('a@b.io and c@d.io, 4111111111111111')
    expect(counts).toEqual({ email: 2, card: 1 })
  })

  test('a long run of letters or dots beside an @ costs time in proportion to its length, not its square', () => {
    // 64 KB, the most of a body that is kept: unbounded, the email pattern took 0.7 to 1.2 s of the writer here.
    for (const text of [`${'a'.repeat(65_536)}@`, `a@${'a.'.repeat(32_768)}`, `${'.'.repeat(65_536)}@`]) {
      const started = performance.now()
      redactPii(text)
      expect(performance.now() - started).toBeLessThan(250)
    }
    // A local part longer than an address may have: its last 64 characters are taken for the address.
    expect(redactPii(`${'x'.repeat(100)}@example.com`).text).toBe(`${'x'.repeat(36)}[redacted:email]`)
  })
})
