import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHarness, type Harness, type Org } from './support/harness'

let h: Harness
let org: Org
beforeAll(async () => {
  h = await createHarness()
  org = await h.org('enterprise')
})
afterAll(() => h.close())

const path = (o: Org, action: string) => `/v1/organization/${o.orgId}/${action}`
const permissionsOf = async (o: Org, token: string) =>
  ((await (await h.request('GET', path(o, 'permissions/me'), { token })).json()) as { data: { permissions: string[] } }).data
    .permissions
type RoleView = { id: string; name: string; builtIn: boolean; permissions: string[] }

async function createRole(o: Org, permissions: string[], token = o.ownerSession): Promise<Response> {
  return h.request('POST', path(o, 'roles'), { token, body: { name: 'analyst', permissions } })
}

describe('custom roles', () => {
  test('need the Enterprise tier: 403 tier_required below it', async () => {
    const growth = await h.org('growth')
    const response = await createRole(growth, ['reports.read'])
    expect(response.status).toBe(403)
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('tier_required')
    const entitlement = (await (await h.request('GET', path(growth, 'roles/entitlement'), { token: growth.apiKey })).json()) as {
      data: { customRoles: boolean }
    }
    expect(entitlement.data.customRoles).toBe(false)
  })

  test('can hold any permission but ownership; org.read always; unknown permissions refused', async () => {
    const withOwnership = await createRole(org, ['reports.read', 'ownership'])
    expect(withOwnership.status).toBe(400)
    expect((await createRole(org, ['reports.write'])).status).toBe(400)
    const created = await createRole(org, ['reports.read'])
    expect(created.status).toBe(201)
    expect(((await created.json()) as { data: RoleView }).data.permissions).toEqual(['org.read', 'reports.read'])
  })

  test('an Admin cannot create a role holding ownership either', async () => {
    const admin = await h.member(org.orgId, 'admin')
    expect((await createRole(org, ['ownership'], admin.sessionToken)).status).toBe(400)
  })

  test('given, changed and archived: the holder follows on the next request, falling back to Member', async () => {
    const role = ((await (await createRole(org, ['audit.read'])).json()) as { data: RoleView }).data
    const person = await h.member(org.orgId, 'member')
    await h.request('POST', path(org, 'update_member'), {
      token: org.ownerSession,
      body: { userId: person.userId, role: role.id },
    })
    expect(await permissionsOf(org, person.sessionToken)).toEqual(['org.read', 'audit.read'])
    await h.request('PATCH', path(org, `roles/${role.id}`), {
      token: org.ownerSession,
      body: { permissions: ['audit.read', 'reports.read'] },
    })
    expect(await permissionsOf(org, person.sessionToken)).toEqual(['org.read', 'reports.read', 'audit.read'])
    const archived = (await (
      await h.request('POST', path(org, `roles/${role.id}/archive`), { token: org.ownerSession })
    ).json()) as { data: { archivedAt: string } }
    expect(await permissionsOf(org, person.sessionToken)).toEqual(['org.read', 'traffic.read', 'traffic.annotate'])
    // Archived once: asked again, the role is answered as it is, its archive time unmoved.
    await Bun.sleep(5)
    const again = (await (
      await h.request('POST', path(org, `roles/${role.id}/archive`), { token: org.ownerSession })
    ).json()) as { data: { archivedAt: string } }
    expect(again.data.archivedAt).toBe(archived.data.archivedAt)
    const assign = await h.request('POST', path(org, 'update_member'), {
      token: org.ownerSession,
      body: { userId: person.userId, role: role.id },
    })
    expect(assign.status).toBe(400)
  })

  test('the list shows the three built-in roles and the custom ones, to any member', async () => {
    const list = (await (await h.request('GET', path(org, 'roles'), { token: org.apiKey })).json()) as { data: RoleView[] }
    expect(list.data.slice(0, 3).map((r) => r.id)).toEqual(['owner', 'admin', 'member'])
    expect(list.data.find((r) => r.id === 'admin')?.permissions).not.toContain('ownership')
    expect(list.data.some((r) => !r.builtIn)).toBe(true)
  })

  test("another organisation's role: 404 on change and archive", async () => {
    const role = ((await (await createRole(org, ['reports.read'])).json()) as { data: RoleView }).data
    const other = await h.org('enterprise')
    expect(
      (await h.request('PATCH', path(other, `roles/${role.id}`), { token: other.ownerSession, body: { name: 'x' } })).status,
    ).toBe(404)
    expect((await h.request('POST', path(other, `roles/${role.id}/archive`), { token: other.ownerSession })).status).toBe(404)
  })
})

describe('ownership transfer', () => {
  test('exactly one Owner before and after; the old Owner becomes Admin', async () => {
    const o = await h.org('growth')
    const heir = await h.member(o.orgId, 'member')
    const response = await h.request('POST', path(o, 'update_owner'), { token: o.ownerSession, body: { userId: heir.userId } })
    expect(response.status).toBe(200)
    const owners = (await h.store.org(o.orgId).memberships.list()).filter((m) => m.role === 'owner')
    expect(owners.map((m) => m.userId)).toEqual([heir.userId])
    expect((await h.store.org(o.orgId).memberships.get(o.ownerId))?.role).toBe('admin')
    expect(await permissionsOf(o, heir.sessionToken)).toContain('ownership')
    expect(await permissionsOf(o, o.ownerSession)).not.toContain('ownership')
  })

  test('only the Owner may transfer; not to themselves; not to a stranger', async () => {
    const o = await h.org('growth')
    const admin = await h.member(o.orgId, 'admin')
    expect(
      (await h.request('POST', path(o, 'update_owner'), { token: admin.sessionToken, body: { userId: admin.userId } })).status,
    ).toBe(403)
    expect(
      (await h.request('POST', path(o, 'update_owner'), { token: o.ownerSession, body: { userId: o.ownerId } })).status,
    ).toBe(400)
    expect(
      (await h.request('POST', path(o, 'update_owner'), { token: o.ownerSession, body: { userId: 'stranger' } })).status,
    ).toBe(404)
    expect((await h.store.org(o.orgId).memberships.owner())?.userId).toBe(o.ownerId)
  })
})

describe('deleting the organisation', () => {
  test('its keys and sessions stop at once, its data is gone, other organisations are untouched', async () => {
    const doomed = await h.org('growth')
    const bystander = await h.org('growth')
    const member = await h.member(doomed.orgId, 'member')
    await h.request('POST', '/v1/vault/add', {
      token: doomed.ownerSession,
      body: { provider: 'openai', name: 'k', secret: 'sk-doomed-0000000000' },
    })
    expect((await h.request('DELETE', '/v1/organization/delete', { token: member.sessionToken })).status).toBe(403)
    const deleted = await h.request('DELETE', '/v1/organization/delete', { token: doomed.ownerSession })
    expect(deleted.status).toBe(200)
    for (const token of [doomed.ownerSession, doomed.apiKey, member.sessionToken]) {
      expect((await h.request('GET', '/v1/api-keys', { token })).status).toBe(401)
    }
    expect(await h.store.organizations.get(doomed.orgId)).toBeUndefined()
    expect(await h.store.org(doomed.orgId).providerKeys.list()).toEqual([])
    expect(await h.store.org(doomed.orgId).memberships.list()).toEqual([])
    expect((await h.request('GET', '/v1/api-keys', { token: bystander.apiKey })).status).toBe(200)
  })
})
