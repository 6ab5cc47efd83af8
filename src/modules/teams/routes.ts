import { Elysia, t } from 'elysia'
import { answer, answerCreated } from '../../http/answer'
import type { Authz } from '../../http/authz'
import { Created, Deleted, Ok } from '../../http/schema'
import {
  RemovedTeamMember,
  Team,
  TeamMember,
  TeamMemberBody,
  TeamMembership,
  TeamNameBody,
  TeamParams,
  Visibility,
  VisibilityBody,
} from './model'
import type { TeamsService } from './service'

/** Teams (spec 4.6): reading under `org.read`, changes under `org.members.write`. */
export const teamRoutes = (authz: Authz, teams: TeamsService) =>
  new Elysia({ name: 'team-routes' })
    .use(authz)
    .get('/v1/team', ({ principal }) => answer(teams.list(principal)), {
      catalogued: true,
      response: Ok(t.Array(Team)),
      detail: { summary: 'Teams the caller can see' },
    })
    .get('/v1/team/settings/visibility', ({ principal }) => answer(teams.visibility(principal)), {
      catalogued: true,
      response: Ok(Visibility),
      detail: { summary: 'Who sees which teams: all or members' },
    })
    .put('/v1/team/settings/visibility', ({ principal, body }) => answer(teams.setVisibility(principal, body.mode)), {
      catalogued: true,
      body: VisibilityBody,
      response: Ok(Visibility),
      detail: { summary: 'Set who sees which teams' },
    })
    .get('/v1/team/:teamId/members', ({ principal, params }) => answer(teams.members(principal, params.teamId)), {
      catalogued: true,
      params: TeamParams,
      response: Ok(t.Array(TeamMember)),
      detail: { summary: "A team's members" },
    })
    .post('/v1/team', ({ principal, body }) => answerCreated(teams.create(principal, body.name)), {
      catalogued: true,
      body: TeamNameBody,
      response: Created(Team),
      detail: { summary: 'Create a team' },
    })
    .put('/v1/team/:teamId', ({ principal, params, body }) => answer(teams.rename(principal, params.teamId, body.name)), {
      catalogued: true,
      params: TeamParams,
      body: TeamNameBody,
      response: Ok(Team),
      detail: { summary: 'Rename a team' },
    })
    .delete('/v1/team/:teamId', ({ principal, params }) => answer(teams.remove(principal, params.teamId)), {
      catalogued: true,
      params: TeamParams,
      response: Ok(Deleted),
      detail: { summary: 'Delete a team' },
    })
    .post(
      '/v1/team/:teamId/member',
      ({ principal, params, body }) => answer(teams.addMember(principal, params.teamId, body.userId)),
      {
        catalogued: true,
        params: TeamParams,
        body: TeamMemberBody,
        response: Ok(TeamMembership),
        detail: { summary: 'Add a member of the organization to a team' },
      },
    )
    .delete(
      '/v1/team/:teamId/member',
      ({ principal, params, body }) => answer(teams.removeMember(principal, params.teamId, body.userId)),
      {
        catalogued: true,
        params: TeamParams,
        body: TeamMemberBody,
        response: Ok(RemovedTeamMember),
        detail: { summary: 'Remove someone from a team' },
      },
    )
