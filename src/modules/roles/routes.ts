import { Elysia, t } from 'elysia'
import type { Authz } from '../../http/authz'
import type { RolesService } from './service'

const OrgParams = t.Object({ id: t.String() })
const RoleParams = t.Object({ id: t.String(), roleId: t.String({ minLength: 1, maxLength: 64 }) })
const Permissions = t.Array(t.String({ maxLength: 64 }), { maxItems: 32 })

/** Roles (spec 2.4, 4.6): listing under `org.read`, custom-role changes under `org.members.write` (Enterprise). */
export const roleRoutes = (authz: Authz, roles: RolesService) =>
  new Elysia({ name: 'role-routes' })
    .use(authz)
    .get('/v1/organization/:id/roles', async ({ principal }) => ({ data: await roles.list(principal), error: null }), {
      catalogued: true,
      params: OrgParams,
      detail: { summary: 'Built-in and custom roles with their permissions' },
    })
    .get('/v1/organization/:id/roles/entitlement', ({ principal }) => ({ data: roles.entitlement(principal), error: null }), {
      catalogued: true,
      params: OrgParams,
      detail: { summary: 'Whether custom roles are available on this tier' },
    })
    .post(
      '/v1/organization/:id/roles',
      async ({ principal, body, set }) => {
        set.status = 201
        return { data: await roles.create(principal, body), error: null }
      },
      {
        catalogued: true,
        params: OrgParams,
        body: t.Object(
          { name: t.String({ minLength: 1, maxLength: 200 }), permissions: Permissions },
          { additionalProperties: false },
        ),
        detail: { summary: 'Create a custom role (Enterprise tier)' },
      },
    )
    .patch(
      '/v1/organization/:id/roles/:roleId',
      async ({ principal, params, body }) => ({ data: await roles.update(principal, params.roleId, body), error: null }),
      {
        catalogued: true,
        params: RoleParams,
        body: t.Object(
          { name: t.Optional(t.String({ minLength: 1, maxLength: 200 })), permissions: t.Optional(Permissions) },
          { additionalProperties: false },
        ),
        detail: { summary: 'Rename a custom role or change its permissions' },
      },
    )
    .post(
      '/v1/organization/:id/roles/:roleId/archive',
      async ({ principal, params }) => ({ data: await roles.archive(principal, params.roleId), error: null }),
      {
        catalogued: true,
        params: RoleParams,
        detail: { summary: 'Archive a custom role; its holders fall back to Member' },
      },
    )
