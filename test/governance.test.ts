import { afterAll, beforeAll, describe, expect, spyOn, test } from 'bun:test'
import fc from 'fast-check'
import { LocalInvalidationBus } from '../src/auth/invalidation'
import { type FakeProvider, providersAt, startFakeProvider } from './support/fake-provider'
import { createHarness, DIALECTS, type Harness, type Org } from './support/harness'

/**
 * The governance management API (spec 4.6 `governance.write`; reads and the dry run `org.read`) and
 * its agreement with enforcement: the dry run answers what the gateway then does, on every dialect
 * this run reaches.
 */

interface RuleView {
  id: string
  subject: { kind: string; id: string | null }
  resource: { kind: string; id: string }
  effect: 'allow' | 'deny'
  reason: string | null
  createdAt: string
  updatedAt: string
}
interface DryRunView {
  decision: 'allow' | 'deny'
  matchedRuleId: string | null
  rulesEvaluated: number
  reason: string | null
}
interface Failure {
  code: string
  message: string
}
type Subject = { kind: string; id?: string }

const RULES = '/v1/governance/access-rules'
const DEFAULTS = '/v1/governance/access-default'
const DRY_RUN = '/v1/governance/access-rules/audit'
const ALL_ALLOW = { provider: 'allow', model: 'allow', mcp_server: 'allow', mcp_tool: 'allow', agent: 'allow' }

const data = async <T>(response: Response, status = 200): Promise<T> => {
  const text = await response.text()
  expect(`${response.status} ${text}`).toStartWith(`${status} `)
  return (JSON.parse(text) as { data: T }).data
}
const failure = async (response: Response, status: number): Promise<Failure> => {
  const text = await response.text()
  expect(`${response.status} ${text}`).toStartWith(`${status} `)
  return (JSON.parse(text) as { error: Failure }).error
}
const chat = (model: string) => ({ model, messages: [{ role: 'user', content: 'hi' }] })

let fake: FakeProvider
beforeAll(async () => {
  fake = await startFakeProvider()
})
afterAll(() => fake.close())

describe.each(DIALECTS)('governance on %s', (dialect) => {
  let h: Harness
  beforeAll(async () => {
    h = await createHarness({ dialect, providers: providersAt(fake) })
  })
  afterAll(() => h.close())

  const as = (token: string) => ({
    create: (body: unknown) => h.request('POST', RULES, { token, body }),
    change: (id: string, body: unknown) => h.request('PATCH', `${RULES}/${id}`, { token, body }),
    remove: (id: string) => h.request('DELETE', `${RULES}/${id}`, { token }),
    list: () => h.request('GET', RULES, { token }),
    defaults: () => h.request('GET', DEFAULTS, { token }),
    putDefaults: (body: unknown) => h.request('PUT', DEFAULTS, { token, body }),
    dryRun: (subject: Subject, resource: { kind: string; id: string }) =>
      h.request('POST', DRY_RUN, { token, body: { subject, resource } }),
    entitlement: () => h.request('GET', '/v1/governance/entitlement', { token }),
  })
  const rule = async (org: Org, body: Record<string, unknown>) => data<RuleView>(await as(org.ownerSession).create(body), 201)
  const dryRun = async (org: Org, subject: Subject, resource: { kind: string; id: string }) =>
    data<DryRunView>(await as(org.ownerSession).dryRun(subject, resource))
  /** Everything a refused write could have touched. */
  const stored = async (org: Org) =>
    JSON.stringify([await h.store.org(org.orgId).accessRules.list(), await h.store.org(org.orgId).accessDefaults.list()])

  const freshOrg = async (tier: 'free' | 'enterprise' = 'enterprise') => {
    const org = await h.org(tier)
    await h.services.organizations.addCredits(org.orgId, 100)
    return org
  }
  const team = async (org: Org, name: string, members: string[]) => {
    const made = await data<{ id: string }>(await h.request('POST', '/v1/team', { token: org.ownerSession, body: { name } }), 201)
    for (const userId of members)
      await data(await h.request('POST', `/v1/team/${made.id}/member`, { token: org.ownerSession, body: { userId } }))
    return made.id
  }
  const customRole = async (org: Org, name: string, permissions: string[]) => {
    const path = `/v1/organization/${org.orgId}/roles`
    return (
      await data<{ id: string }>(await h.request('POST', path, { token: org.ownerSession, body: { name, permissions } }), 201)
    ).id
  }
  /**
   * A person of `role` with an API key of their own: made an Admin to create it (a Member may not), then
   * given their role, as a person whose role changed after making a key is.
   */
  const person = async (org: Org, role: string) => {
    const made = await h.member(org.orgId, 'admin')
    const key = await data<{ id: string; key: string }>(
      await h.request('POST', '/v1/api-keys', { token: made.sessionToken, body: { name: `key of a ${role}` } }),
      201,
    )
    if (role !== 'admin')
      await data(
        await h.request('POST', `/v1/organization/${org.orgId}/update_member`, {
          token: org.ownerSession,
          body: { userId: made.userId, role },
        }),
      )
    return { userId: made.userId, session: made.sessionToken, keyId: key.id, key: key.key }
  }
  /** The key the organisation was made with: the Owner's. */
  const ownerKeyId = async (org: Org) => {
    const keys = await h.store.org(org.orgId).apiKeys.list()
    return keys.find((k) => k.createdByUserId === org.ownerId)?.id ?? ''
  }
  const call = (token: string, model: string) => h.request('POST', '/v1/chat/completions', { token, body: chat(model) })

  describe('the happy path', () => {
    test('create, list in creation order, change, delete; every write audited and the compiled rules dropped', async () => {
      const org = await freshOrg()
      const changed = spyOn(h.services.accessPolicies, 'changed')
      const before = changed.mock.calls.length
      const teamId = await team(org, 'crud team', [])

      const first = await rule(org, {
        subject: { kind: 'org', id: 'ignored' },
        resource: { kind: 'model', id: 'gpt-4o*' },
        effect: 'deny',
        reason: 'too dear',
      })
      expect(first).toMatchObject({
        subject: { kind: 'org', id: null },
        resource: { kind: 'model', id: 'gpt-4o*' },
        effect: 'deny',
        reason: 'too dear',
      })
      expect(first.createdAt).toBe(first.updatedAt)
      const made = [first]
      for (const [kind, id] of [
        ['team', teamId],
        ['member', org.ownerId],
        ['role', 'admin'],
      ] as const)
        made.push(await rule(org, { subject: { kind, id }, resource: { kind: 'mcp_tool', id: 'github__*' }, effect: 'allow' }))
      expect(made.slice(1).map((r) => [r.subject, r.reason])).toEqual([
        [{ kind: 'team', id: teamId }, null],
        [{ kind: 'member', id: org.ownerId }, null],
        [{ kind: 'role', id: 'admin' }, null],
      ])
      expect((await data<RuleView[]>(await as(org.apiKey).list())).map((r) => r.id)).toEqual(made.map((r) => r.id))

      const changedRule = await data<RuleView>(
        await as(org.ownerSession).change(first.id, {
          effect: 'allow',
          reason: null,
          resource: { kind: 'provider', id: 'openai' },
        }),
      )
      expect(changedRule).toMatchObject({
        id: first.id,
        subject: { kind: 'org', id: null },
        resource: { kind: 'provider', id: 'openai' },
        effect: 'allow',
        reason: null,
        createdAt: first.createdAt,
      })
      // A change of the subject alone keeps the rest.
      const moved = await data<RuleView>(await as(org.ownerSession).change(first.id, { subject: { kind: 'team', id: teamId } }))
      expect(moved).toMatchObject({ subject: { kind: 'team', id: teamId }, resource: { kind: 'provider', id: 'openai' } })

      expect(await data(await as(org.ownerSession).remove(first.id))).toEqual({ id: first.id, deleted: true })
      expect((await data<RuleView[]>(await as(org.ownerSession).list())).map((r) => r.id)).toEqual(made.slice(1).map((r) => r.id))
      expect(changed.mock.calls.length - before).toBe(4 + 2 + 1)
      expect(changed.mock.calls.slice(before).every(([orgId]) => orgId === org.orgId)).toBe(true)

      const audit = await h.store.org(org.orgId).audit.list(100)
      const targets = (action: string) => audit.filter((e) => e.action === action).map((e) => e.target)
      expect(targets(`POST ${RULES}`).sort()).toEqual(made.map((r) => r.id).sort())
      expect(targets(`PATCH ${RULES}/:id`)).toEqual([first.id, first.id])
      expect(targets(`DELETE ${RULES}/:id`)).toEqual([first.id])
      changed.mockRestore()
    })

    test('defaults: allow where unset; a PUT of some kinds answers them all; audited against the organisation', async () => {
      const org = await freshOrg()
      expect(await data(await as(org.apiKey).defaults())).toEqual(ALL_ALLOW)
      const changed = spyOn(h.services.accessPolicies, 'changed')
      const before = changed.mock.calls.length
      expect(await data(await as(org.ownerSession).putDefaults({ mcp_tool: 'deny', agent: 'deny' }))).toEqual({
        ...ALL_ALLOW,
        mcp_tool: 'deny',
        agent: 'deny',
      })
      expect(await data(await as(org.ownerSession).putDefaults({ agent: 'allow', model: 'deny' }))).toEqual({
        ...ALL_ALLOW,
        model: 'deny',
        mcp_tool: 'deny',
      })
      expect(changed.mock.calls.slice(before).map(([orgId]) => orgId)).toEqual([org.orgId, org.orgId])
      changed.mockRestore()
      expect(await data(await as(org.apiKey).defaults())).toEqual({ ...ALL_ALLOW, model: 'deny', mcp_tool: 'deny' })
      const entries = (await h.store.org(org.orgId).audit.list(100)).filter((e) => e.action === `PUT ${DEFAULTS}`)
      expect(entries.map((e) => [e.target, e.outcome])).toEqual([
        [org.orgId, 'success'],
        [org.orgId, 'success'],
      ])
    })

    test('the entitlement: governance on every tier, free included', async () => {
      const org = await freshOrg('free')
      expect(await data(await as(org.apiKey).entitlement())).toEqual({
        tier: 'free',
        accessRules: true,
        mcpGateway: true,
        a2a: true,
        maxRules: 1000,
        requiredTier: 'free',
      })
      // Free or not, the rules are made and enforced.
      await rule(org, { subject: { kind: 'org' }, resource: { kind: 'model', id: 'gpt-4o' }, effect: 'deny' })
      expect((await failure(await call(org.apiKey, 'gpt-4o'), 403)).code).toBe('access_denied')
    })
  })

  describe('bad input: 400 naming the field, nothing stored', () => {
    let org: Org
    let other: Org
    let teamId: string
    let existing: RuleView
    const foreign: Record<string, string> = {}
    beforeAll(async () => {
      org = await freshOrg()
      other = await freshOrg()
      teamId = await team(org, 'bad-input team', [])
      foreign.team = await team(other, 'their team', [])
      foreign.member = other.ownerId
      foreign.key = (await person(other, 'member')).keyId
      foreign.role = await customRole(other, 'their role', ['org.read'])
      existing = await rule(org, { subject: { kind: 'team', id: teamId }, resource: { kind: 'model', id: 'm' }, effect: 'deny' })
    })

    const good = { subject: { kind: 'org' }, resource: { kind: 'model', id: 'gpt-4o' }, effect: 'deny' }
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['no subject', { ...good, subject: undefined }, 'subject'],
      ['a subject kind gw does not know', { ...good, subject: { kind: 'everyone' } }, 'subject.kind'],
      ['a subject with a field of its own', { ...good, subject: { kind: 'org', name: 'x' } }, 'subject'],
      ['a team without an id', { ...good, subject: { kind: 'team' } }, 'subject.id'],
      ['a made-up team', { ...good, subject: { kind: 'team', id: 'no-such-team' } }, 'subject.id'],
      ['a made-up member', { ...good, subject: { kind: 'member', id: 'no-such-user' } }, 'subject.id'],
      ['a made-up key', { ...good, subject: { kind: 'key', id: 'no-such-key' } }, 'subject.id'],
      ['a role that is none', { ...good, subject: { kind: 'role', id: 'superuser' } }, 'subject.id'],
      ['an empty subject id', { ...good, subject: { kind: 'team', id: '' } }, 'subject.id'],
      ['no resource', { ...good, resource: undefined }, 'resource'],
      ['a resource kind gw does not know', { ...good, resource: { kind: 'database', id: 'x' } }, 'resource.kind'],
      ['an empty resource id', { ...good, resource: { kind: 'model', id: '' } }, 'resource.id'],
      ['a resource id of 201 characters', { ...good, resource: { kind: 'model', id: 'm'.repeat(201) } }, 'resource.id'],
      ['a control character in the resource id', { ...good, resource: { kind: 'model', id: 'gpt\u0007' } }, 'resource.id'],
      ['a C1 control character in the resource id', { ...good, resource: { kind: 'model', id: 'gpt\u0085' } }, 'resource.id'],
      ['no effect', { ...good, effect: undefined }, 'effect'],
      ['an effect that is neither', { ...good, effect: 'maybe' }, 'effect'],
      ['a reason of 501 characters', { ...good, reason: 'r'.repeat(501) }, 'reason'],
      ['a reason that is not text', { ...good, reason: 42 }, 'reason'],
      ['a field gw does not know', { ...good, priority: 1 }, 'priority'],
    ]
    for (const [what, body, field] of cases) {
      test(`POST with ${what}`, async () => {
        const before = await stored(org)
        expect((await failure(await as(org.ownerSession).create(body), 400)).message).toContain(field)
        expect(await stored(org)).toBe(before)
      })
      if (body.subject !== undefined && body.resource !== undefined && body.effect !== undefined)
        test(`PATCH with ${what}`, async () => {
          const before = await stored(org)
          const { subject, resource, effect, ...rest } = body
          const change = field.startsWith('subject')
            ? { subject }
            : field.startsWith('resource')
              ? { resource }
              : { effect, ...rest }
          expect((await failure(await as(org.ownerSession).change(existing.id, change), 400)).message).toContain(field)
          expect(await stored(org)).toBe(before)
        })
    }

    for (const kind of ['team', 'member', 'key', 'role'] as const)
      test(`another organisation's ${kind} is as unknown as a made-up one, in a rule and in a dry run`, async () => {
        const before = await stored(org)
        const subject = { kind, id: foreign[kind] as string }
        const refused = await failure(await as(org.ownerSession).create({ ...good, subject }), 400)
        expect(refused.message).toContain('subject.id')
        expect(refused.message).toContain('this organization')
        await failure(await as(org.ownerSession).change(existing.id, { subject }), 400)
        await failure(await as(org.ownerSession).dryRun(subject, { kind: 'model', id: 'gpt-4o' }), 400)
        expect(await stored(org)).toBe(before)
      })

    test('a PATCH naming nothing to change, or a rule no longer valid as a whole', async () => {
      const before = await stored(org)
      expect((await failure(await as(org.ownerSession).change(existing.id, {}), 400)).message).toContain('nothing to change')
      // The rule's team is gone: a change of its reason alone is checked against the whole rule.
      const doomed = await team(org, 'doomed team', [])
      const stale = await rule(org, {
        subject: { kind: 'team', id: doomed },
        resource: { kind: 'agent', id: '*' },
        effect: 'deny',
      })
      expect((await h.request('DELETE', `/v1/team/${doomed}`, { token: org.ownerSession })).status).toBe(200)
      const staleBefore = await stored(org)
      expect((await failure(await as(org.ownerSession).change(stale.id, { reason: 'why' }), 400)).message).toContain('subject.id')
      expect(await stored(org)).toBe(staleBefore)
      expect((await data<{ deleted: boolean }>(await as(org.ownerSession).remove(stale.id))).deleted).toBe(true)
      expect(await stored(org)).toBe(before)
    })

    for (const [what, body] of [
      ['nothing', {}],
      ['a kind gw does not know', { database: 'deny' }],
      ['a value that is neither', { model: 'block' }],
      ['null', { model: null }],
      ['a known kind beside an unknown one', { model: 'deny', database: 'deny' }],
    ] as const)
      test(`PUT access-default with ${what}`, async () => {
        const before = await stored(org)
        await failure(await as(org.ownerSession).putDefaults(body), 400)
        expect(await stored(org)).toBe(before)
      })

    test('the dry run: an unknown subject, a missing or bad resource', async () => {
      await failure(await as(org.ownerSession).dryRun({ kind: 'member', id: 'nobody' }, { kind: 'model', id: 'x' }), 400)
      await failure(await as(org.ownerSession).dryRun({ kind: 'key' }, { kind: 'model', id: 'x' }), 400)
      await failure(await as(org.ownerSession).dryRun({ kind: 'org' }, { kind: 'tool', id: 'x' }), 400)
      await failure(await h.request('POST', DRY_RUN, { token: org.ownerSession, body: { subject: { kind: 'org' } } }), 400)
    })

    test('at most 1000 rules an organisation: the 1001st is refused, saying so', async () => {
      const full = await freshOrg()
      const rules = h.store.org(full.orgId).accessRules
      const at = new Date()
      for (let i = 0; i < 999; i++)
        await rules.create({
          id: `seeded-${full.orgId}-${i}`,
          subjectKind: 'org',
          subjectId: '',
          resourceKind: 'model',
          resourceId: `model-${i}`,
          effect: 'deny',
          reason: null,
          createdAt: at,
          updatedAt: at,
        })
      await rule(full, good)
      const before = await stored(full)
      expect((await failure(await as(full.ownerSession).create(good), 400)).message).toContain('1000')
      expect(await stored(full)).toBe(before)
    })
  })

  describe('security', () => {
    let org: Org
    let other: Org
    let theirs: RuleView
    beforeAll(async () => {
      org = await freshOrg()
      other = await freshOrg()
      theirs = await rule(other, { subject: { kind: 'org' }, resource: { kind: 'model', id: 'theirs-*' }, effect: 'deny' })
      await as(other.ownerSession).putDefaults({ agent: 'deny' })
    })

    test("another organisation's rule is 404 to PATCH and DELETE, absent from the list, and unchanged", async () => {
      const before = await stored(other)
      const patched = await as(org.ownerSession).change(theirs.id, { effect: 'allow' })
      expect((await failure(patched, 404)).code).toBe('not_found')
      // A bad body changes nothing either: the rule is not found before the body is looked at.
      await failure(await as(org.ownerSession).change(theirs.id, {}), 404)
      await failure(await as(org.ownerSession).remove(theirs.id), 404)
      await failure(await as(org.ownerSession).remove('no-such-rule'), 404)
      expect(await data<RuleView[]>(await as(org.ownerSession).list())).toEqual([])
      expect(await data(await as(org.ownerSession).defaults())).toEqual(ALL_ALLOW)
      expect(await stored(other)).toBe(before)
    })

    test('a role without governance.write: 403 on every write, and may read and dry-run', async () => {
      const member = await h.member(org.orgId, 'member')
      const reader = await h.member(org.orgId, await customRole(org, 'reader', ['org.read', 'traffic.read']))
      const mine = await rule(org, { subject: { kind: 'org' }, resource: { kind: 'model', id: 'x' }, effect: 'deny' })
      const before = await stored(org)
      for (const token of [member.sessionToken, reader.sessionToken, org.apiKey]) {
        const api = as(token)
        const body = { subject: { kind: 'org' }, resource: { kind: 'model', id: 'y' }, effect: 'deny' }
        for (const response of [
          await api.create(body),
          await api.change(mine.id, { effect: 'allow' }),
          await api.remove(mine.id),
          await api.putDefaults({ model: 'deny' }),
        ]) {
          const refused = await failure(response, 403)
          expect(refused.message).toContain('governance.write')
        }
        expect((await data<RuleView[]>(await api.list())).map((r) => r.id)).toEqual([mine.id])
        expect(await data(await api.defaults())).toEqual(ALL_ALLOW)
        await data(await api.entitlement())
        expect((await data<DryRunView>(await api.dryRun({ kind: 'org' }, { kind: 'model', id: 'x' }))).decision).toBe('deny')
      }
      expect(await stored(org)).toBe(before)
      // An Admin holds governance.write.
      const admin = await h.member(org.orgId, 'admin')
      await data(await as(admin.sessionToken).putDefaults({ mcp_server: 'allow' }))
    })

    test('no key, or a bad one: 401 on every route', async () => {
      for (const token of [undefined, 'gw-sk-not-a-real-key']) {
        for (const [method, path, body] of [
          ['GET', RULES, undefined],
          ['POST', RULES, {}],
          ['PATCH', `${RULES}/${theirs.id}`, {}],
          ['DELETE', `${RULES}/${theirs.id}`, undefined],
          ['POST', DRY_RUN, {}],
          ['GET', DEFAULTS, undefined],
          ['PUT', DEFAULTS, {}],
          ['GET', '/v1/governance/entitlement', undefined],
        ] as const)
          expect(`${method} ${path} ${(await h.request(method, path, { token, body })).status}`).toBe(`${method} ${path} 401`)
      }
    })
  })

  describe('the dry run', () => {
    test('org, team, member, role and key subjects against allows, denies and the defaults', async () => {
      const org = await freshOrg()
      const m = await person(org, 'member')
      const a = await person(org, 'admin')
      const t = await team(org, 'dry-run team', [m.userId])
      const ids: Record<string, string> = {}
      const add = async (name: string, subject: Subject, id: string, effect: 'allow' | 'deny', reason?: string) => {
        ids[name] = (await rule(org, { subject, resource: { kind: 'model', id }, effect, ...(reason ? { reason } : {}) })).id
      }
      await add('orgDeny', { kind: 'org' }, 'banned-*', 'deny', 'banned for all')
      await add('teamDeny', { kind: 'team', id: t }, 'team-denied', 'deny')
      await add('teamAllow', { kind: 'team', id: t }, 'banned-but-team', 'allow')
      await add('memberAllow', { kind: 'member', id: m.userId }, 'member-allowed', 'allow')
      await add('adminDeny', { kind: 'role', id: 'admin' }, 'shared-admin', 'deny')
      await add('keyDeny', { kind: 'key', id: m.keyId }, 'shared-secret', 'deny')
      await add('orgAllow', { kind: 'org' }, 'shared-*', 'allow', 'shared by all')
      await as(org.ownerSession).putDefaults({ model: 'deny' })
      const modelRules = Object.keys(ids).length

      const key = (of: { keyId: string }) => ({ kind: 'key', id: of.keyId })
      const member = (of: { userId: string }) => ({ kind: 'member', id: of.userId })
      const cases: Array<[string, Subject, string, 'allow' | 'deny', string | null]> = [
        ['the organisation, denied for all', { kind: 'org' }, 'banned-x', 'deny', 'orgDeny'],
        ['the organisation, allowed for all', { kind: 'org' }, 'shared-x', 'allow', 'orgAllow'],
        ['the organisation, a team rule is not its own', { kind: 'org' }, 'team-denied', 'deny', null],
        ['the team, its deny', { kind: 'team', id: t }, 'team-denied', 'deny', 'teamDeny'],
        ['the team, a deny for all wins over its allow', { kind: 'team', id: t }, 'banned-but-team', 'deny', 'orgDeny'],
        ["the team, a member's allow is not its own", { kind: 'team', id: t }, 'member-allowed', 'deny', null],
        ["the member, their team's deny", member(m), 'team-denied', 'deny', 'teamDeny'],
        ['the member, their own allow', member(m), 'member-allowed', 'allow', 'memberAllow'],
        ["the member, their key's deny is not theirs", member(m), 'shared-secret', 'allow', 'orgAllow'],
        ['an Admin member, their role', member(a), 'shared-admin', 'deny', 'adminDeny'],
        ['the role admin', { kind: 'role', id: 'admin' }, 'shared-admin', 'deny', 'adminDeny'],
        ['the role member', { kind: 'role', id: 'member' }, 'shared-admin', 'allow', 'orgAllow'],
        ['the role owner, the default', { kind: 'role', id: 'owner' }, 'unlisted', 'deny', null],
        ['a key, its own deny', key(m), 'shared-secret', 'deny', 'keyDeny'],
        ["a key, its creator's team", key(m), 'team-denied', 'deny', 'teamDeny'],
        ["a key, its creator's allow", key(m), 'member-allowed', 'allow', 'memberAllow'],
        ["an Admin's key, its creator's role", key(a), 'shared-admin', 'deny', 'adminDeny'],
        ["the Owner's key", { kind: 'key', id: await ownerKeyId(org) }, 'shared-admin', 'allow', 'orgAllow'],
      ]
      for (const [what, subject, model, decision, ruleName] of cases) {
        const answer = await dryRun(org, subject, { kind: 'model', id: model })
        expect({ what, decision: answer.decision, rule: answer.matchedRuleId }).toEqual({
          what,
          decision,
          rule: ruleName === null ? null : (ids[ruleName] as string),
        })
        if (ruleName === null) expect(answer.rulesEvaluated).toBe(modelRules)
        if (ruleName === 'orgDeny') expect(answer.reason).toBe('banned for all')
      }
      // A kind the organisation says nothing about: its default, allow, having looked at no rule.
      expect(await dryRun(org, key(m), { kind: 'provider', id: 'openai' })).toEqual({
        decision: 'allow',
        matchedRuleId: null,
        rulesEvaluated: 0,
        reason: null,
      })
      // What the dry run says of the keys is what the gateway does with them (a made-up model is routed
      // by naming its provider; the rules see the model's own name).
      expect((await failure(await call(m.key, 'openai/shared-secret'), 403)).code).toBe('access_denied')
      expect((await failure(await call(a.key, 'openai/shared-admin'), 403)).code).toBe('access_denied')
      expect((await call(m.key, 'openai/member-allowed')).status).toBe(200)
    })

    test('property: for random rules, defaults, keys and models, the dry run says what the gateway does', async () => {
      const org = await freshOrg()
      const custom = await customRole(org, 'custom for the property', ['org.read', 'traffic.read'])
      // Two Members (one in no team), an Admin in both teams, a custom role's holder, and the Owner.
      const member = await person(org, 'member')
      const admin = await person(org, 'admin')
      const holder = await person(org, custom)
      const loner = await person(org, 'member')
      const teamA = await team(org, 'team a', [member.userId, admin.userId])
      const teamB = await team(org, 'team b', [admin.userId, holder.userId])
      const owner = { userId: org.ownerId, key: org.apiKey, keyId: await ownerKeyId(org) }
      const people = [member, admin, holder, loner]
      const callers = [...people, owner]
      const subjects: Subject[] = [
        { kind: 'org' },
        { kind: 'team', id: teamA },
        { kind: 'team', id: teamB },
        ...['owner', 'admin', 'member', custom].map((id) => ({ kind: 'role', id })),
        ...callers.map((c) => ({ kind: 'member', id: c.userId })),
        ...callers.map((c) => ({ kind: 'key', id: c.keyId })),
      ]
      expect(subjects.length).toBe(17)
      const models = ['gpt-4o', 'gpt-4o-mini', 'claude-sonnet-4-5', 'claude-haiku-4-5']
      const globs = ['*', 'gpt-*', 'gpt-4o', 'gpt-4o-mini', '*-mini', 'claude-*', 'claude-haiku-4-5', '*4*5', 'nothing-*']
      const ruleArb = fc.record({
        subject: fc.constantFrom(...subjects),
        glob: fc.constantFrom(...globs),
        effect: fc.constantFrom('allow' as const, 'deny' as const),
      })
      const caseArb = fc.record({
        rules: fc.array(ruleArb, { maxLength: 8 }),
        modelDefault: fc.constantFrom('allow' as const, 'deny' as const),
        caller: fc.integer({ min: 0, max: callers.length - 1 }),
        model: fc.constantFrom(...models),
      })
      const api = as(org.ownerSession)
      let denied = 0
      await fc.assert(
        fc.asyncProperty(caseArb, async ({ rules, modelDefault, caller, model }) => {
          for (const old of await data<RuleView[]>(await api.list())) await data(await api.remove(old.id))
          for (const r of rules)
            await rule(org, { subject: r.subject, resource: { kind: 'model', id: r.glob }, effect: r.effect })
          await data(await api.putDefaults({ model: modelDefault }))
          const who = callers[caller] as (typeof callers)[number]
          const said = await dryRun(org, { kind: 'key', id: who.keyId }, { kind: 'model', id: model })
          const since = fake.calls.length
          const response = await call(who.key, model)
          const text = await response.text()
          if (said.decision === 'deny') {
            denied += 1
            expect(`${response.status} ${JSON.parse(text).error?.code}`).toBe('403 access_denied')
            if (said.matchedRuleId) expect(text).toContain(said.matchedRuleId)
            expect(fake.calls.length).toBe(since)
          } else expect(`${response.status}`).toBe('200')
        }),
        { numRuns: 30, seed: process.env.GW_FUZZ_SEED ? Number(process.env.GW_FUZZ_SEED) : undefined },
      )
      // The random cases were not all of one kind.
      expect(denied).toBeGreaterThan(0)
      expect(denied).toBeLessThan(30)
    }, 60_000)
  })

  describe('enforcement of what the routes write', () => {
    test("a deny on a team applies to a key its member created, and not to another's", async () => {
      const org = await freshOrg()
      const made = await h.member(org.orgId, 'admin')
      const teamId = await team(org, 'denied team', [made.userId])
      const key = await data<{ key: string }>(
        await h.request('POST', '/v1/api-keys', { token: made.sessionToken, body: { name: 'team member key' } }),
        201,
      )
      const denial = await rule(org, {
        subject: { kind: 'team', id: teamId },
        resource: { kind: 'model', id: 'gpt-4o-mini' },
        effect: 'deny',
        reason: 'not for this team',
      })
      const refused = await failure(await call(key.key, 'gpt-4o-mini'), 403)
      expect(refused.code).toBe('access_denied')
      expect(refused.message).toContain(denial.id)
      expect(refused.message).toContain('not for this team')
      expect((await call(org.apiKey, 'gpt-4o-mini')).status).toBe(200)
      expect((await call(key.key, 'gpt-4o')).status).toBe(200)
    })

    test('a change takes effect on the next call, on this instance and on another one sharing the bus', async () => {
      const org = await freshOrg()
      const bus = new LocalInvalidationBus()
      const here = await createHarness({ database: h, providers: providersAt(fake), invalidations: bus })
      const there = await createHarness({ database: h, providers: providersAt(fake), invalidations: bus })
      try {
        const through = (instance: Harness) =>
          instance.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat('gpt-4o') })
        // Both instances have read (and hold) the organisation's rules: none.
        expect((await through(here)).status).toBe(200)
        expect((await through(there)).status).toBe(200)
        const made = await data<RuleView>(
          await here.request('POST', RULES, {
            token: org.ownerSession,
            body: { subject: { kind: 'org' }, resource: { kind: 'model', id: 'gpt-4o' }, effect: 'deny' },
          }),
          201,
        )
        expect((await through(there)).status).toBe(403)
        expect((await through(here)).status).toBe(403)
        await data(await here.request('PATCH', `${RULES}/${made.id}`, { token: org.ownerSession, body: { effect: 'allow' } }))
        expect((await through(there)).status).toBe(200)
        await data(await here.request('PUT', DEFAULTS, { token: org.ownerSession, body: { model: 'deny' } }))
        // The allow still allows gpt-4o; any other model now meets the default.
        expect((await through(there)).status).toBe(200)
        expect(
          (await there.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat('gpt-4o-mini') })).status,
        ).toBe(403)
        await data(await here.request('DELETE', `${RULES}/${made.id}`, { token: org.ownerSession }))
        expect((await through(there)).status).toBe(403)
      } finally {
        await here.close()
        await there.close()
      }
    })

    test('a denied model is 403 before any provider call and before any budget hold', async () => {
      const org = await freshOrg()
      await data(
        await h.request('PUT', '/v1/budget/window-limit', {
          token: org.ownerSession,
          body: { scope: { kind: 'org' }, metric: 'requests', limit: 1, window: 'day' },
        }),
      )
      await rule(org, { subject: { kind: 'org' }, resource: { kind: 'model', id: 'gpt-4o*' }, effect: 'deny' })
      const since = fake.calls.length
      for (const model of ['gpt-4o', 'gpt-4o-mini', 'gpt-4o'])
        expect((await failure(await call(org.apiKey, model), 403)).code).toBe('access_denied')
      expect(fake.calls.length).toBe(since)
      // The one request the budget allows a day is still there.
      expect((await call(org.apiKey, 'claude-sonnet-4-5')).status).toBe(200)
      expect(fake.calls.length).toBe(since + 1)
      expect((await call(org.apiKey, 'claude-sonnet-4-5')).status).toBe(429)
    })
  })
})
