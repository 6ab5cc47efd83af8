import { Elysia, t } from 'elysia'
import type { Authz } from '../../http/authz'
import type { OwnershipService } from './service'

/** The Owner's actions (spec 4.6 `ownership`): transfer and deletion. */
export const ownershipRoutes = (authz: Authz, ownership: OwnershipService) =>
  new Elysia({ name: 'ownership-routes' })
    .use(authz)
    .delete(
      '/v1/organization/delete',
      async ({ principal }) => ({ data: await ownership.deleteOrganization(principal), error: null }),
      {
        catalogued: true,
        detail: { summary: "Delete the caller's organization and all its data; its keys and sessions stop at once" },
      },
    )
    .post(
      '/v1/organization/:id/update_owner',
      async ({ principal, body }) => ({ data: await ownership.transfer(principal, body.userId), error: null }),
      {
        catalogued: true,
        params: t.Object({ id: t.String() }),
        body: t.Object({ userId: t.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
        detail: { summary: 'Transfer ownership to another member; the old Owner becomes Admin' },
      },
    )
