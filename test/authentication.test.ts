import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { CredentialHasher } from '../src/auth/credentials'
import { CredentialIssuer } from '../src/auth/issuer'
import { hashPassword } from '../src/auth/passwords'
import { createHarness, type Harness, type Org } from './support/harness'

let h: Harness
let org: Org
let clock = Date.now()

beforeAll(async () => {
  h = await createHarness({ now: () => clock })
  org = await h.org('growth')
})
afterAll(() => h.close())

const ME = () => `/v1/organization/${org.orgId}/permissions/me`

async function errorOf(response: Response): Promise<{ code: string; message: string }> {
  return ((await response.json()) as { error: { code: string; message: string } }).error
}

describe('authentication (spec 5)', () => {
  test('a valid API key and a valid session are accepted', async () => {
    expect((await h.request('GET', ME(), { token: org.apiKey })).status).toBe(200)
    expect((await h.request('GET', ME(), { token: org.ownerSession })).status).toBe(200)
  })

  test('the scheme in any case and spaces around the token are accepted, as HTTP allows', async () => {
    for (const authorization of [`bearer ${org.apiKey}`, `BEARER  ${org.apiKey} `, `\tBearer ${org.apiKey}`]) {
      expect((await h.request('GET', ME(), { headers: { authorization } })).status).toBe(200)
    }
  })

  const refused: Array<[string, Record<string, string>, string]> = [
    ['two tokens', { authorization: 'Bearer gw-sk-abc extra' }, 'must be "Bearer <API_KEY>"'],
    ['a scheme without a token', { authorization: 'Bearer ' }, 'must be "Bearer <API_KEY>"'],
    ['no header', {}, 'missing Authorization header'],
    ['another scheme', { authorization: 'Basic dXNlcjpwYXNz' }, 'must be "Bearer <API_KEY>"'],
    ['a bare token', { authorization: 'gw-sk-abc' }, 'must be "Bearer <API_KEY>"'],
    ['a token that is not ours', { authorization: 'Bearer sk-proj-123' }, 'not a gw API key'],
    ['an unknown key', { authorization: `Bearer gw-sk-AAAAAAAAAAAA_${'a'.repeat(40)}` }, 'unknown, revoked or expired'],
    ['the legacy Gw-Auth header alone', { 'gw-auth': 'Bearer whatever' }, 'send the key as "Authorization: Bearer'],
    ["Google's SDK with gw's key as its own", { 'x-goog-api-key': 'gw-sk-abc' }, 'the x-goog-api-key header is not accepted'],
  ]
  for (const [what, headers, message] of refused) {
    test(`${what}: 401 with a message that says so`, async () => {
      const response = await h.request('GET', ME(), { headers })
      expect(response.status).toBe(401)
      const error = await errorOf(response)
      expect(error.code).toBe('unauthorized')
      expect(error.message).toContain(message)
    })
  }

  test('the legacy header is refused even when it carries a valid key', async () => {
    const response = await h.request('GET', ME(), { headers: { 'gw-auth': `Bearer ${org.apiKey}` } })
    expect(response.status).toBe(401)
  })

  test('a key whose secret part is wrong is refused', async () => {
    const forged = `${org.apiKey.slice(0, -1)}${org.apiKey.endsWith('A') ? 'B' : 'A'}`
    expect((await h.request('GET', ME(), { token: forged })).status).toBe(401)
  })

  test('a revoked key is refused once the credential cache lapses (at most one second)', async () => {
    const victim = await h.services.organizations.bootstrap({ orgName: 'revoked', email: 'rev@example.test', tier: 'free' })
    const me = `/v1/organization/${victim.orgId}/permissions/me`
    expect((await h.request('GET', me, { token: victim.apiKey })).status).toBe(200)
    const keyId = victim.apiKey.slice('gw-sk-'.length, 'gw-sk-'.length + 12)
    await h.store.org(victim.orgId).apiKeys.update(keyId, { revokedAt: new Date(clock) })
    clock += 1_001
    expect((await h.request('GET', me, { token: victim.apiKey })).status).toBe(401)
  })

  test('an expired key is refused', async () => {
    const issuer = new CredentialIssuer(new CredentialHasher(h.credentialKey), () => clock)
    const key = await issuer.apiKey(h.store.org(org.orgId), {
      name: 'short-lived',
      scopes: [],
      createdByUserId: null,
      expiresAt: new Date(clock + 500),
    })
    expect((await h.request('GET', ME(), { token: key.apiKey })).status).toBe(200)
    clock += 1_001
    expect((await h.request('GET', ME(), { token: key.apiKey })).status).toBe(401)
  })

  test('an expired session is refused', async () => {
    const member = await h.member(org.orgId, 'member')
    expect((await h.request('GET', ME(), { token: member.sessionToken })).status).toBe(200)
    clock += 15 * 24 * 3600 * 1000
    expect((await h.request('GET', ME(), { token: member.sessionToken })).status).toBe(401)
  })
})

describe('authentication comes before validation', () => {
  test('no credentials and a malformed body: 401, not a parse error', async () => {
    const response = await h.request('POST', '/v1/rate-limits', { body: '{not json' })
    expect(response.status).toBe(401)
  })

  test('a caller without the permission and an invalid body: 403, not a validation error', async () => {
    const response = await h.request('POST', `/v1/organization/${org.orgId}/add_member`, {
      token: org.apiKey,
      body: { nonsense: true },
    })
    expect(response.status).toBe(403)
  })

  test('an unauthenticated request with invalid params: 401, not 400', async () => {
    const response = await h.request('GET', '/gateway/v1/meta/not-a-uuid')
    expect(response.status).toBe(401)
  })
})

describe('sessions: login and logout', () => {
  const password = 'correct horse battery staple'
  let email: string

  beforeAll(async () => {
    const member = await h.member(org.orgId, 'admin')
    const user = await h.store.users.get(member.userId)
    email = user?.email ?? ''
    await h.store.users.setPasswordHash(member.userId, await hashPassword(password))
  })

  test('login with the right password returns a session with the role of the member', async () => {
    const response = await h.request('POST', '/v1/auth/login', { body: { email: email.toUpperCase(), password } })
    expect(response.status).toBe(200)
    const { data } = (await response.json()) as { data: { sessionToken: string; orgId: string } }
    expect(data.sessionToken).toStartWith('gw-ses-')
    expect(data.orgId).toBe(org.orgId)
    const me = (await (await h.request('GET', ME(), { token: data.sessionToken })).json()) as { data: { role: string } }
    expect(me.data.role).toBe('admin')
  })

  test('a wrong password and an unknown email get the same 401', async () => {
    const wrong = await h.request('POST', '/v1/auth/login', { body: { email, password: 'not the password' } })
    const unknown = await h.request('POST', '/v1/auth/login', { body: { email: 'nobody@example.test', password } })
    expect(wrong.status).toBe(401)
    expect(unknown.status).toBe(401)
    expect(await errorOf(wrong)).toEqual(await errorOf(unknown))
  })

  test('a login body without a password is a 400 that names the field', async () => {
    const response = await h.request('POST', '/v1/auth/login', { body: { email } })
    expect(response.status).toBe(400)
    expect((await errorOf(response)).message).toContain('password')
  })

  test('logout ends the session at once and leaves an audit entry', async () => {
    const login = (await (await h.request('POST', '/v1/auth/login', { body: { email, password } })).json()) as {
      data: { sessionToken: string }
    }
    const token = login.data.sessionToken
    expect((await h.request('GET', ME(), { token })).status).toBe(200)
    expect((await h.request('POST', '/v1/auth/logout', { token })).status).toBe(200)
    expect((await h.request('GET', ME(), { token })).status).toBe(401)
    const actions = (await h.store.org(org.orgId).audit.list()).map((e) => e.action)
    expect(actions).toContain('POST /v1/auth/logout')
    expect(actions).toContain('auth.login')
  })

  test('an API key cannot log out', async () => {
    expect((await h.request('POST', '/v1/auth/logout', { token: org.apiKey })).status).toBe(400)
  })
})
