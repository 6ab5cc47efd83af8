import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import type { Principal } from '../src/auth/principal'
import type { GatewayMeta } from '../src/gateway/meta/store'
import type { AccessRuleRow } from '../src/store/repositories/access-rules'
import { type FakeProvider, providersAt, startFakeProvider } from './support/fake-provider'
import { createHarness, type Harness, type Org } from './support/harness'

/**
 * Access rules as the gateway enforces them, with rules written straight to the store (the management
 * routes are tested in governance.test.ts): a denied model is refused in the caller's format before
 * any provider call or budget hold, a denied fallback step is skipped, a denied alias stops the chain.
 */

let fake: FakeProvider
let h: Harness
let org: Org

beforeAll(async () => {
  fake = await startFakeProvider()
  h = await createHarness({ providers: providersAt(fake) })
})
afterAll(async () => {
  await h.close()
  await fake.close()
})
afterEach(() => fake.unsteer())

let rules = 0
async function rule(target: Org, fields: Partial<AccessRuleRow> & Pick<AccessRuleRow, 'resourceKind' | 'resourceId'>) {
  rules += 1
  const now = new Date()
  await h.store.org(target.orgId).accessRules.create({
    id: `rule-${rules}`,
    subjectKind: 'org',
    subjectId: '',
    effect: 'deny',
    reason: null,
    createdAt: now,
    updatedAt: now,
    ...fields,
  })
  await h.services.accessPolicies.changed(target.orgId)
  return `rule-${rules}`
}

async function freshOrg(): Promise<Org> {
  const made = await h.org('growth')
  await h.services.organizations.addCredits(made.orgId, 100)
  return made
}

const chat = (model: string) => ({ model, messages: [{ role: 'user', content: 'hi' }] })

describe('access rules, read by the gateway', () => {
  test('an organisation whose rules govern none of the resources is answered at once; held rules decide at once; rules on a team wait for its members', async () => {
    const own = await freshOrg()
    const principal: Principal = {
      kind: 'api_key',
      orgId: own.orgId,
      tier: 'growth',
      actorId: 'key-of-the-test',
      permissions: new Set(),
    }
    const resources = [{ kind: 'model' as const, id: 'gpt-4o' }]
    await h.services.accessPolicies.require(principal, resources)
    expect(h.services.accessPolicies.require(principal, resources)).toBeUndefined()
    await rule(own, { resourceKind: 'model', resourceId: 'gpt-4o' })
    await expect(h.services.accessPolicies.require(principal, resources) as Promise<void>).rejects.toMatchObject({
      status: 403,
    })
    // The rules are held now, and name no team or role: the denial comes without a promise.
    expect(() => h.services.accessPolicies.require(principal, resources)).toThrow('access rule rule-')
    expect(h.services.accessPolicies.require(principal, [{ kind: 'model', id: 'gpt-4o-mini' }])).toBeUndefined()
    // A rule on a team needs the caller's teams, which are looked up: the answer is a promise again.
    await rule(own, { resourceKind: 'model', resourceId: 'gpt-4o-mini', subjectKind: 'team', subjectId: 'team-x' })
    await (h.services.accessPolicies.require(principal, resources) as Promise<void>).catch(() => undefined)
    const withTeams = h.services.accessPolicies.require(principal, [{ kind: 'model', id: 'gpt-4o-mini' }])
    expect(withTeams).toBeInstanceOf(Promise)
    await withTeams
  })
})

describe('access rules in the gateway', () => {
  test('a denied model is a 403 access_denied in the caller format, before any provider call or budget hold', async () => {
    org = await freshOrg()
    const limit = await h.request('PUT', '/v1/budget/window-limit', {
      token: org.ownerSession,
      body: { scope: { kind: 'org' }, metric: 'requests', limit: 1, window: 'day' },
    })
    expect(limit.status).toBe(200)
    const id = await rule(org, { resourceKind: 'model', resourceId: 'gpt-4o*', reason: 'too dear' })
    const since = fake.calls.length
    const openai = await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat('gpt-4o-mini') })
    expect(openai.status).toBe(403)
    const openaiError = ((await openai.json()) as { error: { type: string; code: string; message: string } }).error
    expect(openaiError).toMatchObject({ type: 'permission_error', code: 'access_denied' })
    expect(openaiError.message).toContain(id)
    expect(openaiError.message).toContain('too dear')
    expect(openai.headers.get('gw-status')).toBe('error')
    const anthropic = await h.request('POST', '/v1/messages', {
      token: org.apiKey,
      body: { model: 'gpt-4o', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
    })
    expect(anthropic.status).toBe(403)
    expect(await anthropic.json()).toMatchObject({ type: 'error', error: { type: 'permission_error' } })
    expect(fake.calls.length).toBe(since)
    // Nothing was held: the one call the budget allows still goes through.
    const allowed = await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat('claude-sonnet-4-5') })
    expect(allowed.status).toBe(200)
  })

  test('a provider denied by default, one model of it allowed', async () => {
    const own = await freshOrg()
    await h.store.org(own.orgId).accessDefaults.set('model', 'deny', new Date())
    await rule(own, { resourceKind: 'model', resourceId: 'gpt-4o', effect: 'allow' })
    const allowed = await h.request('POST', '/v1/chat/completions', { token: own.apiKey, body: chat('gpt-4o') })
    expect(allowed.status).toBe(200)
    const denied = await h.request('POST', '/v1/chat/completions', { token: own.apiKey, body: chat('gpt-4o-mini') })
    expect(denied.status).toBe(403)
    expect(((await denied.json()) as { error: { message: string } }).error.message).toContain('default')
  })

  test('a denied fallback step is skipped; a denied alias stops the chain', async () => {
    const own = await freshOrg()
    const created = await h.request('POST', '/v1/gateway/fallback-chains', {
      token: own.ownerSession,
      body: { name: 'governed', match: { model: 'governed' }, steps: [{ model: 'gpt-4o-mini' }, { model: 'gpt-4o' }] },
    })
    expect(created.status).toBe(201)
    await rule(own, { resourceKind: 'model', resourceId: 'gpt-4o-mini' })
    const since = fake.calls.length
    const served = await h.request('POST', '/v1/chat/completions', { token: own.apiKey, body: chat('governed') })
    expect(served.status).toBe(200)
    expect(fake.calls.slice(since).map((call) => call.body.model)).toEqual(['gpt-4o'])
    const lookup = await h.request('GET', `/gateway/v1/meta/${served.headers.get('gw-id')}`, { token: own.apiKey })
    const meta = (await lookup.json()) as GatewayMeta
    expect(meta.attempts?.[0]?.error).toContain('denied')

    await rule(own, { resourceKind: 'model', resourceId: 'governed' })
    const stopped = await h.request('POST', '/v1/chat/completions', { token: own.apiKey, body: chat('governed') })
    expect(stopped.status).toBe(403)
  })

  test("rules follow the caller: a key's own rule, another organisation untouched", async () => {
    const own = await freshOrg()
    const other = await freshOrg()
    const created = await h.request('POST', '/v1/api-keys', { token: own.ownerSession, body: { name: 'second' } })
    const second = ((await created.json()) as { data: { id: string; key: string } }).data
    await rule(own, { subjectKind: 'key', subjectId: second.id, resourceKind: 'provider', resourceId: 'anthropic' })
    const denied = await h.request('POST', '/v1/chat/completions', { token: second.key, body: chat('claude-sonnet-4-5') })
    expect(denied.status).toBe(403)
    const firstKey = await h.request('POST', '/v1/chat/completions', { token: own.apiKey, body: chat('claude-sonnet-4-5') })
    expect(firstKey.status).toBe(200)
    const theirs = await h.request('POST', '/v1/chat/completions', { token: other.apiKey, body: chat('claude-sonnet-4-5') })
    expect(theirs.status).toBe(200)
  })
})
