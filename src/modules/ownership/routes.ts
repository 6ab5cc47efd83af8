import { Elysia } from 'elysia'
import { answer } from '../../http/answer'
import type { Authz } from '../../http/authz'
import { Deleted, Ok } from '../../http/schema'
import { OrgParams, OwnershipTransfer, TransferOwnerBody } from './model'
import type { OwnershipService } from './service'

/** The Owner's actions (spec 4.6 `ownership`): transfer and deletion. */
export const ownershipRoutes = (authz: Authz, ownership: OwnershipService) =>
  new Elysia({ name: 'ownership-routes' })
    .use(authz)
    .delete('/v1/organization/delete', ({ principal }) => answer(ownership.deleteOrganization(principal)), {
      catalogued: true,
      response: Ok(Deleted),
      detail: { summary: "Delete the caller's organization and all its data; its keys and sessions stop at once" },
    })
    .post('/v1/organization/:id/update_owner', ({ principal, body }) => answer(ownership.transfer(principal, body.userId)), {
      catalogued: true,
      params: OrgParams,
      body: TransferOwnerBody,
      response: Ok(OwnershipTransfer),
      detail: { summary: 'Transfer ownership to another member; the old Owner becomes Admin' },
    })
