import { Elysia } from 'elysia'
import type { Authz } from '../../http/authz'
import { AddMemberBody, OrgParams, RemoveMemberBody, UpdateMemberBody } from './model'
import type { MembersService } from './service'

/** Members of an organisation (spec 4.6 `org.members.write`). */
export const memberRoutes = (authz: Authz, members: MembersService) =>
  new Elysia({ name: 'member-routes' })
    .use(authz)
    .post(
      '/v1/organization/:id/add_member',
      async ({ principal, body, set }) => {
        set.status = 201
        return { data: await members.invite(principal, body), error: null }
      },
      {
        catalogued: true,
        params: OrgParams,
        body: AddMemberBody,
        detail: { summary: 'Add a member; a new person gets a one-time invite token' },
      },
    )
    .post(
      '/v1/organization/:id/update_member',
      async ({ principal, body }) => ({ data: await members.updateRole(principal, body), error: null }),
      {
        catalogued: true,
        params: OrgParams,
        body: UpdateMemberBody,
        detail: { summary: "Change a member's role" },
      },
    )
    .delete(
      '/v1/organization/:id/remove_member',
      async ({ principal, body }) => ({ data: await members.remove(principal, body.userId), error: null }),
      {
        catalogued: true,
        params: OrgParams,
        body: RemoveMemberBody,
        detail: { summary: 'Remove a member; their sessions end at once' },
      },
    )
