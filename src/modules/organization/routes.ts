import { Elysia, t } from 'elysia'
import type { Authz } from '../../http/authz'
import type { OrganizationService } from './service'

export const organizationRoutes = (authz: Authz, organizations: OrganizationService) =>
  new Elysia({ name: 'organization-routes' })
    .use(authz)
    .get(
      '/v1/organization/:id/permissions/me',
      ({ principal }) => ({ data: organizations.permissionsOf(principal), error: null }),
      {
        permission: 'org.read',
        params: t.Object({ id: t.String() }),
        detail: { summary: "The caller's effective permissions in this organization" },
      },
    )
