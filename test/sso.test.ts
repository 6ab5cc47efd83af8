import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { hashPassword } from '../src/auth/passwords'
import { rotateServerSecret } from '../src/auth/secret-rotation'
import { sealContexts, Vault } from '../src/auth/vault'
import { EgressPolicy, parseAllowList } from '../src/egress/policy'
import { createHarness, type Harness, type Org } from './support/harness'

const CLIENT_SECRET = 'oidc-client-secret-0123456789'
const txt = new Map<string, string[][]>()
let issuer: { url: string; stop(): void }
let h: Harness
let org: Org

beforeAll(async () => {
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(request): Response {
      const base = new URL(request.url).origin
      if (new URL(request.url).pathname === '/.well-known/openid-configuration') {
        return Response.json({
          issuer: base,
          authorization_endpoint: `${base}/authorize`,
          token_endpoint: `${base}/token`,
          jwks_uri: `${base}/jwks`,
        })
      }
      return new Response('not found', { status: 404 })
    },
  })
  issuer = { url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) }
  h = await createHarness({
    txtResolver: async (name) => txt.get(name) ?? [],
    // The stand-in issuer listens on loopback, which the operator allows here.
    egress: new EgressPolicy({ enabled: true, allow: parseAllowList('127.0.0.1') }),
  })
  org = await h.org('enterprise')
})
afterAll(async () => {
  await h.close()
  issuer.stop()
})

const path = (o: Org, action: string) => `/v1/organization/${o.orgId}/${action}`
const data = async <T>(response: Response) => ((await response.json()) as { data: T }).data
const configure = (o: Org, body: Record<string, unknown>) => h.request('PUT', path(o, 'sso'), { token: o.ownerSession, body })

describe('SSO configuration', () => {
  test('Enterprise only: the entitlement says so and a lower tier gets 403 tier_required', async () => {
    const growth = await h.org('growth')
    expect(
      await data<{ sso: boolean }>(await h.request('GET', path(growth, 'sso/entitlement'), { token: growth.apiKey })),
    ).toMatchObject({ sso: false })
    const refused = await configure(growth, { issuer: issuer.url, clientId: 'gw', clientSecret: CLIENT_SECRET })
    expect(refused.status).toBe(403)
  })

  test('stored with the client secret sealed; read back masked', async () => {
    expect((await configure(org, { issuer: issuer.url, clientId: 'gw' })).status).toBe(400)
    const saved = await data<{ clientSecret: string; domainVerified: boolean }>(
      await configure(org, { issuer: `${issuer.url}/`, clientId: 'gw', clientSecret: CLIENT_SECRET, domain: 'Acme.example' }),
    )
    expect(saved.clientSecret).toBe('oidc…6789')
    expect(JSON.stringify(await h.db.query('SELECT * FROM sso_configs'))).not.toContain(CLIENT_SECRET)
    expect(JSON.stringify(await h.db.query('SELECT * FROM audit_log'))).not.toContain(CLIENT_SECRET)
    const read = await data<{ issuer: string; domain: string }>(
      await h.request('GET', path(org, 'sso'), { token: org.ownerSession }),
    )
    expect(read).toMatchObject({ issuer: issuer.url, domain: 'acme.example' })
    expect((await h.request('GET', path(org, 'sso'), { token: org.apiKey })).status).toBe(403)
  })

  test('a domain that is not the part of an email address after the @ is 400 naming the rule, and nothing is stored', async () => {
    const org = await h.org('enterprise')
    for (const domain of [
      'localhost',
      'acme_corp.example',
      '-acme.example',
      'acme..example',
      'acme.example.',
      `${'a'.repeat(64)}.example`,
    ]) {
      const response = await configure(org, {
        issuer: 'https://id.example.test',
        clientId: 'gw',
        clientSecret: CLIENT_SECRET,
        domain,
      })
      expect(response.status).toBe(400)
      expect(((await response.json()) as { error: { message: string } }).error.message).toContain('domain must be a DNS name')
    }
    expect(await h.store.org(org.orgId).sso.get()).toBeUndefined()
    // A domain with digits and hyphens, as an address's domain may have.
    const valid = {
      issuer: 'https://id.example.test',
      clientId: 'gw',
      clientSecret: CLIENT_SECRET,
      domain: 'mail-1.acme.example',
    }
    expect((await configure(org, valid)).status).toBe(200)
  })

  test("sso/test fetches the issuer's discovery document and reports it", async () => {
    const report = await data<{ ok: boolean; tokenEndpoint: string }>(
      await h.request('POST', path(org, 'sso/test'), { token: org.ownerSession }),
    )
    expect(report).toMatchObject({ ok: true, tokenEndpoint: `${issuer.url}/token` })
    const other = await h.org('enterprise')
    await configure(other, { issuer: 'http://127.0.0.1:9', clientId: 'gw', clientSecret: CLIENT_SECRET })
    const unreachable = await data<{ ok: boolean; error: string }>(
      await h.request('POST', path(other, 'sso/test'), { token: other.ownerSession }),
    )
    expect(unreachable.ok).toBe(false)
    expect(unreachable.error.length).toBeGreaterThan(0)
  })

  test('sso/test never reaches an internal address the operator has not allowed (the cloud metadata service, say)', async () => {
    const guarded = await createHarness({ database: h })
    const owner = await guarded.org('enterprise')
    for (const issuerUrl of ['https://169.254.169.254/latest', 'http://127.0.0.1:9', 'https://10.0.0.8']) {
      const saved = await guarded.request('PUT', `/v1/organization/${owner.orgId}/sso`, {
        token: owner.ownerSession,
        body: { issuer: issuerUrl, clientId: 'gw', clientSecret: CLIENT_SECRET },
      })
      expect(saved.status).toBe(200)
      const report = await data<{ ok: boolean; error: string }>(
        await guarded.request('POST', `/v1/organization/${owner.orgId}/sso/test`, { token: owner.ownerSession }),
      )
      expect(report.ok).toBe(false)
      expect(report.error).toMatch(/https:\/\/|private, loopback or link-local/)
    }
  })

  test('verify-domain: a challenge first, verified once the TXT record holds it', async () => {
    const first = await data<{ verified: boolean; record: string; value: string }>(
      await h.request('POST', path(org, 'sso/verify-domain'), { token: org.ownerSession }),
    )
    expect(first).toMatchObject({ verified: false, record: '_gw-challenge.acme.example' })
    expect(first.value).toStartWith('gw-verify=')
    expect(
      (await data<{ verified: boolean }>(await h.request('POST', path(org, 'sso/verify-domain'), { token: org.ownerSession })))
        .verified,
    ).toBe(false)
    txt.set(first.record, [['unrelated'], [first.value]])
    expect(
      (await data<{ verified: boolean }>(await h.request('POST', path(org, 'sso/verify-domain'), { token: org.ownerSession })))
        .verified,
    ).toBe(true)
  })

  test('enforce: Owner only; then password login refuses the members', async () => {
    const admin = await h.member(org.orgId, 'admin')
    await h.store.users.setPasswordHash(admin.userId, await hashPassword('a long enough password'))
    const email = (await h.store.users.get(admin.userId))?.email
    const login = () => h.request('POST', '/v1/auth/login', { body: { email, password: 'a long enough password' } })
    expect((await login()).status).toBe(200)
    expect(
      (await h.request('PUT', path(org, 'sso/enforce'), { token: admin.sessionToken, body: { enforced: true } })).status,
    ).toBe(403)
    expect((await h.request('PUT', path(org, 'sso/enforce'), { token: org.ownerSession, body: { enforced: true } })).status).toBe(
      200,
    )
    const refused = await login()
    expect(refused.status).toBe(403)
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('single sign-on')
    await h.request('PUT', path(org, 'sso/enforce'), { token: org.ownerSession, body: { enforced: false } })
    expect((await login()).status).toBe(200)
  })

  test('enforcing without a configuration is refused; a rotation keeps the client secret readable', async () => {
    const bare = await h.org('enterprise')
    expect(
      (await h.request('PUT', path(bare, 'sso/enforce'), { token: bare.ownerSession, body: { enforced: true } })).status,
    ).toBe(400)
    const next = 'another-server-secret-of-enough-length-42'
    const moved = await rotateServerSecret(h.store, h.deps.vault, new Vault(next))
    expect(moved.ssoClientSecrets).toBeGreaterThan(0)
    const config = await h.store.org(org.orgId).sso.get()
    expect(await new Vault(next).open(config?.sealedClientSecret as string, sealContexts.ssoClientSecret(org.orgId))).toBe(
      CLIENT_SECRET,
    )
    await rotateServerSecret(h.store, new Vault(next), h.deps.vault)
  })
})
