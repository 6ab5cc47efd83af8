import { Elysia, t } from 'elysia'
import { answer, answerCreated } from '../../http/answer'
import type { Authz } from '../../http/authz'
import { Created, Ok } from '../../http/schema'
import { CreateRoleBody, CustomRole, OrgParams, Role, RoleEntitlement, RoleParams, UpdateRoleBody } from './model'
import type { RolesService } from './service'

/** Roles (spec 2.4, 4.6): listing under `org.read`, custom-role changes under `org.members.write` (Enterprise). */
export const roleRoutes = (authz: Authz, roles: RolesService) =>
  new Elysia({ name: 'role-routes' })
    .use(authz)
    .get('/v1/organization/:id/roles', ({ principal }) => answer(roles.list(principal)), {
      catalogued: true,
      params: OrgParams,
      response: Ok(t.Array(Role)),
      detail: { summary: 'Built-in and custom roles with their permissions' },
    })
    .get('/v1/organization/:id/roles/entitlement', ({ principal }) => answer(roles.entitlement(principal)), {
      catalogued: true,
      params: OrgParams,
      response: Ok(RoleEntitlement),
      detail: { summary: 'Whether custom roles are available on this tier' },
    })
    .post('/v1/organization/:id/roles', ({ principal, body }) => answerCreated(roles.create(principal, body)), {
      catalogued: true,
      params: OrgParams,
      body: CreateRoleBody,
      response: Created(CustomRole),
      detail: { summary: 'Create a custom role (Enterprise tier)' },
    })
    .patch(
      '/v1/organization/:id/roles/:roleId',
      ({ principal, params, body }) => answer(roles.update(principal, params.roleId, body)),
      {
        catalogued: true,
        params: RoleParams,
        body: UpdateRoleBody,
        response: Ok(CustomRole),
        detail: { summary: 'Rename a custom role or change its permissions' },
      },
    )
    .post(
      '/v1/organization/:id/roles/:roleId/archive',
      ({ principal, params }) => answer(roles.archive(principal, params.roleId)),
      {
        catalogued: true,
        params: RoleParams,
        response: Ok(CustomRole),
        detail: { summary: 'Archive a custom role; its holders fall back to Member' },
      },
    )
