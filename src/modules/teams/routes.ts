import { Elysia, t } from 'elysia'
import type { Authz } from '../../http/authz'
import type { TeamsService } from './service'

const TeamParams = t.Object({ teamId: t.String({ minLength: 1, maxLength: 64 }) })
const Name = t.Object({ name: t.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false })
const Member = t.Object({ userId: t.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false })

/** Teams (spec 4.6): reading under `org.read`, changes under `org.members.write`. */
export const teamRoutes = (authz: Authz, teams: TeamsService) =>
  new Elysia({ name: 'team-routes' })
    .use(authz)
    .get('/v1/team', async ({ principal }) => ({ data: await teams.list(principal), error: null }), {
      catalogued: true,
      detail: { summary: 'Teams the caller can see' },
    })
    .get('/v1/team/settings/visibility', async ({ principal }) => ({ data: await teams.visibility(principal), error: null }), {
      catalogued: true,
      detail: { summary: 'Who sees which teams: all or members' },
    })
    .put(
      '/v1/team/settings/visibility',
      async ({ principal, body }) => ({ data: await teams.setVisibility(principal, body.mode), error: null }),
      {
        catalogued: true,
        body: t.Object(
          { mode: t.Union([t.Literal('all'), t.Literal('members')], { error: 'mode must be all or members' }) },
          { additionalProperties: false },
        ),
        detail: { summary: 'Set who sees which teams' },
      },
    )
    .get(
      '/v1/team/:teamId/members',
      async ({ principal, params }) => ({ data: await teams.members(principal, params.teamId), error: null }),
      {
        catalogued: true,
        params: TeamParams,
        detail: { summary: "A team's members" },
      },
    )
    .post(
      '/v1/team',
      async ({ principal, body, set }) => {
        set.status = 201
        return { data: await teams.create(principal, body.name), error: null }
      },
      { catalogued: true, body: Name, detail: { summary: 'Create a team' } },
    )
    .put(
      '/v1/team/:teamId',
      async ({ principal, params, body }) => ({ data: await teams.rename(principal, params.teamId, body.name), error: null }),
      {
        catalogued: true,
        params: TeamParams,
        body: Name,
        detail: { summary: 'Rename a team' },
      },
    )
    .delete(
      '/v1/team/:teamId',
      async ({ principal, params }) => ({ data: await teams.remove(principal, params.teamId), error: null }),
      {
        catalogued: true,
        params: TeamParams,
        detail: { summary: 'Delete a team' },
      },
    )
    .post(
      '/v1/team/:teamId/member',
      async ({ principal, params, body }) => ({
        data: await teams.addMember(principal, params.teamId, body.userId),
        error: null,
      }),
      {
        catalogued: true,
        params: TeamParams,
        body: Member,
        detail: { summary: 'Add a member of the organization to a team' },
      },
    )
    .delete(
      '/v1/team/:teamId/member',
      async ({ principal, params, body }) => ({
        data: await teams.removeMember(principal, params.teamId, body.userId),
        error: null,
      }),
      { catalogued: true, params: TeamParams, body: Member, detail: { summary: 'Remove someone from a team' } },
    )
