import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { randomUUID } from 'node:crypto'
import { customRolePermissions, PERMISSIONS } from '../src/auth/permissions'
import { requireTier, tierAtLeast } from '../src/auth/tiers'
import { ApiError } from '../src/errors'
import { createHarness, type Harness, type Org } from './support/harness'

describe('tiers', () => {
  test('are ordered free < pro < growth < enterprise', () => {
    expect(tierAtLeast('growth', 'growth')).toBe(true)
    expect(tierAtLeast('enterprise', 'growth')).toBe(true)
    expect(tierAtLeast('pro', 'growth')).toBe(false)
  })

  test('the gate answers 403 tier_required naming the tier needed', () => {
    expect(() => requireTier('enterprise', 'growth', 'Rate-limit rules')).not.toThrow()
    try {
      requireTier('pro', 'growth', 'Rate-limit rules')
      throw new Error('not refused')
    } catch (error) {
      expect(error).toBeInstanceOf(ApiError)
      const refusal = error as ApiError
      expect([refusal.status, refusal.code]).toEqual([403, 'tier_required'])
      expect(refusal.message).toBe('Rate-limit rules needs the growth tier or higher; this organization is on pro')
    }
  })
})

describe('custom roles (spec 2.4)', () => {
  test('never grant ownership and always grant org.read', () => {
    expect(customRolePermissions(['ownership', 'traffic.read', 'no.such'])).toEqual(['org.read', 'traffic.read'])
    expect(customRolePermissions([...PERMISSIONS])).not.toContain('ownership')
  })

  let h: Harness
  let org: Org
  beforeAll(async () => {
    h = await createHarness()
    org = await h.org('enterprise')
  })
  afterAll(() => h.close())

  const me = () => `/v1/organization/${org.orgId}/permissions/me`
  const permissionsOf = async (token: string) =>
    ((await (await h.request('GET', me(), { token })).json()) as { data: { permissions: string[] } }).data.permissions

  test("a member holding a custom role gets exactly the role's permissions, ownership never", async () => {
    const roleId = randomUUID()
    await h.store.org(org.orgId).roles.create({
      id: roleId,
      name: 'auditor',
      permissions: ['audit.read', 'ownership'],
      archivedAt: null,
      createdAt: new Date(),
    })
    const person = await h.member(org.orgId, roleId)
    expect(await permissionsOf(person.sessionToken)).toEqual(['org.read', 'audit.read'])
    expect((await h.request('GET', `/v1/organization/${org.orgId}/audit`, { token: person.sessionToken })).status).toBe(200)
    expect((await h.request('DELETE', '/v1/organization/delete', { token: person.sessionToken })).status).toBe(403)
  })

  test('a role of another organisation cannot be given', async () => {
    const other = await h.org('enterprise')
    const roleId = randomUUID()
    await h.store.org(other.orgId).roles.create({
      id: roleId,
      name: 'x',
      permissions: [],
      archivedAt: null,
      createdAt: new Date(),
    })
    await expect(h.member(org.orgId, roleId)).rejects.toThrow('is not admin, member or a custom role of this organization')
  })

  test('a second owner cannot be added', async () => {
    await expect(h.member(org.orgId, 'owner')).rejects.toThrow('already has an owner')
  })
})
