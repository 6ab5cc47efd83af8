import type { Authenticator } from '../../auth/authenticator'
import { BUILT_IN_ROLE_PERMISSIONS, BUILT_IN_ROLES, customRolePermissions, isPermission } from '../../auth/permissions'
import type { Principal } from '../../auth/principal'
import { requireTier, tierAtLeast } from '../../auth/tiers'
import { badRequest, notFound, nothingToChange } from '../../errors'
import type { CustomRole } from '../../store/repositories/roles'
import type { Store } from '../../store/store'
import type { CreateRoleInput, UpdateRoleInput } from './model'

const view = (role: CustomRole) => ({
  id: role.id,
  name: role.name,
  builtIn: false as const,
  permissions: customRolePermissions(role.permissions),
  archivedAt: role.archivedAt?.toISOString() ?? null,
  createdAt: role.createdAt.toISOString(),
})

/** What a custom role may hold: every catalogue permission but `ownership` (spec 2.4); `org.read` always. */
function permissionsFor(requested: readonly string[]): string[] {
  for (const p of requested) {
    if (!isPermission(p)) throw badRequest(`unknown permission "${p}"`)
    if (p === 'ownership') throw badRequest('no role can hold the ownership permission; ownership moves only by transfer')
  }
  return customRolePermissions(requested)
}

/** Custom roles (spec 2.4): an Enterprise feature; the built-in three are listed with them and never change. */
export class RolesService {
  constructor(
    private readonly store: Store,
    private readonly authenticator: Authenticator,
    private readonly now: () => number = Date.now,
  ) {}

  async list(principal: Principal) {
    const builtIn = BUILT_IN_ROLES.map((name) => ({
      id: name,
      name,
      builtIn: true,
      permissions: [...BUILT_IN_ROLE_PERMISSIONS[name]],
      archivedAt: null,
      createdAt: null,
    }))
    const custom = (await this.store.org(principal.orgId).roles.list()).map(view)
    return [...builtIn, ...custom]
  }

  entitlement(principal: Principal) {
    return { customRoles: tierAtLeast(principal.tier, 'enterprise'), requiredTier: 'enterprise' as const, tier: principal.tier }
  }

  async create(principal: Principal, input: CreateRoleInput) {
    requireTier(principal.tier, 'enterprise', 'Custom roles')
    const role: CustomRole = {
      id: crypto.randomUUID(),
      orgId: principal.orgId,
      name: input.name,
      permissions: permissionsFor(input.permissions),
      archivedAt: null,
      createdAt: new Date(this.now()),
    }
    await this.store.org(principal.orgId).roles.create(role)
    return view(role)
  }

  async update(principal: Principal, id: string, input: UpdateRoleInput) {
    requireTier(principal.tier, 'enterprise', 'Custom roles')
    if (input.name === undefined && input.permissions === undefined) throw nothingToChange('name, permissions')
    const existing = await this.store.org(principal.orgId).roles.get(id)
    if (!existing) throw notFound('role')
    if (existing.archivedAt !== null) throw badRequest('an archived role cannot be changed')
    const updated = await this.store.org(principal.orgId).roles.update(id, {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.permissions !== undefined ? { permissions: permissionsFor(input.permissions) } : {}),
    })
    if (!updated) throw notFound('role')
    await this.forgetHolders(principal.orgId, id)
    return view(updated)
  }

  /** Archived: it can no longer be given, and its holders fall back to Member on their next request. */
  async archive(principal: Principal, id: string) {
    requireTier(principal.tier, 'enterprise', 'Custom roles')
    // Archiving is done once: asked again, the role is answered as it is, archived when it first was.
    const existing = await this.store.org(principal.orgId).roles.get(id)
    if (existing?.archivedAt) return view(existing)
    const updated = await this.store.org(principal.orgId).roles.update(id, { archivedAt: new Date(this.now()) })
    if (!updated) throw notFound('role')
    await this.forgetHolders(principal.orgId, id)
    return view(updated)
  }

  private async forgetHolders(orgId: string, roleId: string): Promise<void> {
    for (const holder of await this.store.org(orgId).memberships.listWithRole(roleId)) {
      await this.authenticator.forgetSessions(await this.store.org(orgId).sessions.listLiveOf(holder.userId))
    }
  }
}
