import { Elysia, t } from 'elysia'
import { answer, answerCreated } from '../../http/answer'
import type { Authz } from '../../http/authz'
import { Created, Ok } from '../../http/schema'
import {
  AddedMember,
  AddMemberBody,
  ListedMember,
  Member,
  OrgParams,
  RemovedMember,
  RemoveMemberBody,
  UpdateMemberBody,
} from './model'
import type { MembersService } from './service'

/** Members of an organisation (spec 4.6 `org.members.write`; the list, gw's own, `org.read`). */
export const memberRoutes = (authz: Authz, members: MembersService) =>
  new Elysia({ name: 'member-routes' })
    .use(authz)
    .get('/v1/organization/:id/members', ({ principal }) => answer(members.list(principal)), {
      catalogued: true,
      params: OrgParams,
      response: Ok(t.Array(ListedMember)),
      detail: { summary: 'The members, with their email and role: the Owner first, then oldest first' },
    })
    .post('/v1/organization/:id/add_member', ({ principal, body }) => answerCreated(members.invite(principal, body)), {
      catalogued: true,
      params: OrgParams,
      body: AddMemberBody,
      response: Created(AddedMember),
      detail: { summary: 'Add a member; a new person gets a one-time invite token' },
    })
    .post('/v1/organization/:id/update_member', ({ principal, body }) => answer(members.updateRole(principal, body)), {
      catalogued: true,
      params: OrgParams,
      body: UpdateMemberBody,
      response: Ok(Member),
      detail: { summary: "Change a member's role" },
    })
    .delete('/v1/organization/:id/remove_member', ({ principal, body }) => answer(members.remove(principal, body.userId)), {
      catalogued: true,
      params: OrgParams,
      body: RemoveMemberBody,
      response: Ok(RemovedMember),
      detail: { summary: 'Remove a member; their sessions end at once' },
    })
