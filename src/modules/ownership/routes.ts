import { Elysia, t } from 'elysia'
import type { Authz } from '../../http/authz'
import type { OwnershipService } from './service'

/** Ownership transfer (spec 4.6 `ownership`). */
export const ownershipRoutes = (authz: Authz, ownership: OwnershipService) =>
  new Elysia({ name: 'ownership-routes' })
    .use(authz)
    .post(
      '/v1/organization/:id/update_owner',
      async ({ principal, body }) => ({ data: await ownership.transfer(principal, body.userId), error: null }),
      {
        permission: 'ownership',
        params: t.Object({ id: t.String() }),
        body: t.Object({ userId: t.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
        detail: { summary: 'Transfer ownership to another member; the old Owner becomes Admin' },
      },
    )
