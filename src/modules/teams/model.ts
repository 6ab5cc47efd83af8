import { TEAM_VISIBILITY } from '../../store/repositories/organizations'
import { oneOf, t } from '../../util/typebox'

export const TeamParams = t.Object({ teamId: t.String({ minLength: 1, maxLength: 64 }) })

export const TeamNameBody = t.Object({ name: t.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false })

export const TeamMemberBody = t.Object({ userId: t.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false })

export const VisibilityBody = t.Object(
  { mode: t.Union([t.Literal('all'), t.Literal('members')], { error: 'mode must be all or members' }) },
  { additionalProperties: false },
)

export const Team = t.Object({ id: t.String(), name: t.String(), createdAt: t.String({ format: 'date-time' }) })

export const TeamMember = t.Object({ userId: t.String(), addedAt: t.String({ format: 'date-time' }) })

export const Visibility = t.Object({
  mode: oneOf(TEAM_VISIBILITY, { description: 'all: everyone sees every team; members: a person sees their own teams' }),
})

export const TeamMembership = t.Object({ id: t.String({ description: 'the team id' }), userId: t.String() })

export const RemovedTeamMember = t.Object({
  id: t.String({ description: 'the team id' }),
  userId: t.String(),
  removed: t.Literal(true),
})
