import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { CredentialHasher, parseCredential } from '../src/auth/credentials'
import { createHarness, DIALECTS, type Harness, TEST_SECRET } from './support/harness'

describe('credential format and hashing', () => {
  const hasher = new CredentialHasher(TEST_SECRET)

  test('issued tokens parse back to their kind and id', () => {
    for (const kind of ['api_key', 'session'] as const) {
      const issued = hasher.issue(kind)
      expect(issued.token).toStartWith(kind === 'api_key' ? 'gw-sk-' : 'gw-ses-')
      expect(issued.token.startsWith(`${issued.displayPrefix}_`)).toBe(true)
      const parsed = parseCredential(issued.token)
      expect(parsed).toMatchObject({ kind, id: issued.id })
      expect(parsed && hasher.matches(parsed, issued.secretHash)).toBe(true)
    }
  })

  test('a hash made under another server secret does not match', () => {
    const issued = hasher.issue('api_key')
    const parsed = parseCredential(issued.token)
    expect(parsed && new CredentialHasher(`${TEST_SECRET}-other`).matches(parsed, issued.secretHash)).toBe(false)
  })

  test('a hash is bound to its kind and id', () => {
    const issued = hasher.issue('api_key')
    const parsed = parseCredential(issued.token)
    if (!parsed) throw new Error('unparsable')
    expect(hasher.matches({ ...parsed, kind: 'session' }, issued.secretHash)).toBe(false)
    expect(hasher.matches({ ...parsed, id: 'BBBBBBBBBBBB' }, issued.secretHash)).toBe(false)
  })

  test('anything else does not parse', () => {
    for (const token of [
      '',
      'gw-sk-',
      'gw-sk-short_secret',
      `gw-xx-AAAAAAAAAAAA_${'a'.repeat(40)}`,
      `gw-sk-AAAAAAAAAAAA_${'a'.repeat(39)}!`,
    ]) {
      expect(parseCredential(token)).toBeUndefined()
    }
  })
})

for (const dialect of DIALECTS) {
  describe(`no plaintext credential is stored (${dialect})`, () => {
    let h: Harness
    beforeAll(async () => {
      h = await createHarness({ dialect })
    })
    afterAll(() => h.close())

    test('the raw rows of every table hold neither an API key nor a session token, nor their secret parts', async () => {
      const org = await h.org()
      const member = await h.member(org.orgId, 'member')
      const tokens = [org.apiKey, org.ownerSession, member.sessionToken]
      const secrets = tokens.map((t) => t.split('_')[1] as string)
      const tables = ['organizations', 'users', 'memberships', 'sessions', 'api_keys', 'audit_log']
      const dump = JSON.stringify(await Promise.all(tables.map((table) => h.db.query(`SELECT * FROM ${table}`))))
      for (const secret of secrets) expect(dump).not.toContain(secret)
      // The rows do hold what identifies a credential: its id and its HMAC.
      const [keyRow] = await h.db.query<{ prefix: string; secret_hash: string }>('SELECT prefix, secret_hash FROM api_keys')
      expect(org.apiKey.startsWith(`${keyRow?.prefix}_`)).toBe(true)
      expect(keyRow?.secret_hash).toMatch(/^[A-Za-z0-9_-]{43}$/)
    })
  })
}
