import { PERMISSIONS } from '../../auth/permissions'
import { TIERS } from '../../auth/tiers'
import { oneOf, t } from '../../util/typebox'

export const OrgParams = t.Object({ id: t.String() })
export const RoleParams = t.Object({ id: t.String(), roleId: t.String({ minLength: 1, maxLength: 64 }) })

const Permissions = t.Array(t.String({ maxLength: 64 }), { maxItems: 32 })

export const CreateRoleBody = t.Object(
  { name: t.String({ minLength: 1, maxLength: 200 }), permissions: Permissions },
  { additionalProperties: false },
)
export type CreateRoleInput = typeof CreateRoleBody.static

export const UpdateRoleBody = t.Object(
  { name: t.Optional(t.String({ minLength: 1, maxLength: 200 })), permissions: t.Optional(Permissions) },
  { additionalProperties: false },
)
export type UpdateRoleInput = typeof UpdateRoleBody.static

const roleFields = {
  id: t.String({ description: 'owner, admin or member for a built-in role; a UUID for a custom one' }),
  name: t.String(),
  permissions: t.Array(oneOf(PERMISSIONS), { description: 'what the role grants, in catalogue order' }),
  archivedAt: t.Nullable(t.String({ format: 'date-time' })),
}

/** A custom role, as created, changed or archived. */
export const CustomRole = t.Object({
  id: roleFields.id,
  name: roleFields.name,
  builtIn: t.Literal(false),
  permissions: roleFields.permissions,
  archivedAt: roleFields.archivedAt,
  createdAt: t.String({ format: 'date-time' }),
})

/** A role in the list: one of the three built-in ones (never archived, no creation time) or a custom one. */
export const Role = t.Object({
  id: roleFields.id,
  name: roleFields.name,
  builtIn: t.Boolean(),
  permissions: roleFields.permissions,
  archivedAt: roleFields.archivedAt,
  createdAt: t.Nullable(t.String({ format: 'date-time' }), { description: 'null for a built-in role' }),
})

export const RoleEntitlement = t.Object({
  customRoles: t.Boolean({ description: 'whether this tier may have custom roles' }),
  requiredTier: t.Literal('enterprise'),
  tier: oneOf(TIERS),
})
