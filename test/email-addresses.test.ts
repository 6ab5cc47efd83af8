import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import { DomainName, EmailAddress } from '../src/http/schema'
import { emailProblem } from '../src/util/email'
import { createHarness, type Harness } from './support/harness'

/**
 * One rule for email addresses, the WHATWG one a browser's `<input type="email">` applies, with SMTP's
 * length bounds: the function the CLI and the account store use and the schema the routes use agree,
 * and an SSO domain is always the part of an address after its `@`.
 */

/** Addresses a browser's email field takes. */
const TAKEN = [
  'name@example.com',
  'Name.Surname+tag@sub.example.co.uk',
  'admin@localhost',
  "o'brien!#$%&*/=?^_`{|}~-@example.test",
  '.dots..anywhere.@example.test',
  '1@2',
  `${'a'.repeat(64)}@example.test`,
  `a@${'b'.repeat(63)}.example`,
]

/** Addresses it refuses, or that no mail can reach (over SMTP's bounds). */
const REFUSED = [
  '',
  'not an email',
  'no-at-sign',
  '@example.com',
  'name@',
  'a@b@example.com',
  ' name@example.com',
  'name@example.com ',
  'name@exa mple.com',
  '"quoted"@example.com',
  'é@example.com',
  'name@exämple.com',
  'name@-example.com',
  'name@example-.com',
  'name@example..com',
  'name@example.com.',
  'name@exa_mple.com',
  'name@[127.0.0.1]',
  'a\u0000b@example.com',
  `${'a'.repeat(65)}@example.test`,
  `a@${'b'.repeat(64)}.example`,
  // 259 characters, every part within its own bound.
  `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.ex`,
]

describe('an email address', () => {
  test.each(TAKEN)('%p is taken by the function and by the schema', (address) => {
    expect(emailProblem(address)).toBeUndefined()
    expect(Value.Check(EmailAddress, address)).toBe(true)
  })

  test.each(REFUSED)('%p is refused by both, and the refusal names it', (address) => {
    const named =
      address.length > 80 ? `${JSON.stringify(address.slice(0, 80))}... (${address.length} characters)` : JSON.stringify(address)
    expect(emailProblem(address)).toStartWith(`${named} is not an email address`)
    expect(Value.Check(EmailAddress, address)).toBe(false)
  })

  test('a very long value is named by its start and its length, not printed whole', () => {
    expect(emailProblem('x'.repeat(10_000))).toStartWith(`${JSON.stringify('x'.repeat(80))}... (10000 characters) is not`)
  })
})

describe('an SSO domain', () => {
  const domains = ['example.com', 'mail-1.acme.example', 'xn--bcher-kva.example', `${'a'.repeat(63)}.example`]
  test.each(domains)('%p is a domain, and the domain of an address', (domain) => {
    expect(Value.Check(DomainName, domain)).toBe(true)
    expect(emailProblem(`someone@${domain}`)).toBeUndefined()
  })

  // `localhost` is an address's domain, but no DNS record can prove it is the organisation's.
  test.each(['localhost', 'exa_mple.com', '-example.com', 'example..com', 'example.com.', `${'a'.repeat(64)}.example`])(
    '%p is refused',
    (domain) => {
      expect(Value.Check(DomainName, domain)).toBe(false)
    },
  )
})

describe('signing in', () => {
  let h: Harness
  beforeAll(async () => {
    h = await createHarness()
  })
  afterAll(() => h.close())

  test('an Owner made with an address the browser takes, without a dot in its domain, signs in with it', async () => {
    const password = 'a long enough password'
    await h.services.organizations.bootstrap({ orgName: 'local', email: 'Admin@localhost', tier: 'free', password })
    const response = await h.request('POST', '/v1/auth/login', { body: { email: 'admin@localhost', password } })
    expect(response.status).toBe(200)
  })

  test('an address the browser refuses is never stored, whichever door it comes by', async () => {
    const people = async () => (await h.db.query<{ n: number }>('SELECT count(*) AS n FROM users'))[0]?.n
    const before = await people()
    await expect(h.services.organizations.bootstrap({ orgName: 'nobody', email: 'not an email', tier: 'free' })).rejects.toThrow(
      '"not an email" is not an email address',
    )
    expect(await people()).toBe(before)
    expect(await h.db.query("SELECT * FROM organizations WHERE name = 'nobody'")).toEqual([])
  })
})
