import type { Principal } from '../../auth/principal'
import { conflict, notFound } from '../../errors'
import type { TeamVisibility } from '../../store/repositories/organizations'
import type { Team } from '../../store/repositories/teams'
import type { Store } from '../../store/store'

const view = (team: Team) => ({ id: team.id, name: team.name, createdAt: team.createdAt.toISOString() })

/**
 * Teams and who sees them. Visibility `all`: every member sees every team. `members`: a person sees
 * the teams they belong to, while those who manage members (`org.members.write`) see all of them.
 */
export class TeamsService {
  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
  ) {}

  async list(principal: Principal) {
    const org = await this.store.organizations.get(principal.orgId)
    const teams = (await this.seesAll(principal, org?.teamVisibility))
      ? await this.store.org(principal.orgId).teams.list()
      : await this.store.org(principal.orgId).teams.listForUser(principal.userId ?? '')
    return teams.map(view)
  }

  async members(principal: Principal, teamId: string) {
    const team = await this.visibleTeam(principal, teamId)
    return (await this.store.org(principal.orgId).teams.members(team.id)).map((m) => ({
      userId: m.userId,
      addedAt: m.createdAt.toISOString(),
    }))
  }

  async create(principal: Principal, name: string) {
    if (await this.store.org(principal.orgId).teams.findByName(name)) throw conflict(`a team named "${name}" exists already`)
    const team: Team = { id: crypto.randomUUID(), orgId: principal.orgId, name, createdAt: new Date(this.now()) }
    await this.store.org(principal.orgId).teams.create(team)
    return view(team)
  }

  async rename(principal: Principal, teamId: string, name: string) {
    const clash = await this.store.org(principal.orgId).teams.findByName(name)
    if (clash && clash.id !== teamId) throw conflict(`a team named "${name}" exists already`)
    const team = await this.store.org(principal.orgId).teams.rename(teamId, name)
    if (!team) throw notFound('team')
    return view(team)
  }

  async remove(principal: Principal, teamId: string) {
    if (!(await this.store.transaction((tx) => tx.org(principal.orgId).teams.delete(teamId)))) throw notFound('team')
    return { id: teamId, deleted: true as const }
  }

  /** Only members of the organisation can be in its teams. */
  async addMember(principal: Principal, teamId: string, userId: string) {
    const team = await this.store.org(principal.orgId).teams.get(teamId)
    if (!team) throw notFound('team')
    if (!(await this.store.org(principal.orgId).memberships.get(userId))) throw notFound('member')
    await this.store.org(principal.orgId).teams.addMember(team.id, userId)
    return { id: team.id, userId }
  }

  async removeMember(principal: Principal, teamId: string, userId: string) {
    const team = await this.store.org(principal.orgId).teams.get(teamId)
    if (!team) throw notFound('team')
    if (!(await this.store.org(principal.orgId).teams.removeMember(team.id, userId))) throw notFound('team member')
    return { id: team.id, userId, removed: true as const }
  }

  async visibility(principal: Principal) {
    const org = await this.store.organizations.get(principal.orgId)
    return { mode: org?.teamVisibility ?? 'all' }
  }

  async setVisibility(principal: Principal, mode: TeamVisibility) {
    await this.store.organizations.setTeamVisibility(principal.orgId, mode)
    return { mode }
  }

  private async seesAll(principal: Principal, mode: TeamVisibility | undefined): Promise<boolean> {
    return mode !== 'members' || principal.permissions.has('org.members.write')
  }

  /** A team the caller may not see is "not found", like another organisation's. */
  private async visibleTeam(principal: Principal, teamId: string): Promise<Team> {
    const team = await this.store.org(principal.orgId).teams.get(teamId)
    if (!team) throw notFound('team')
    const org = await this.store.organizations.get(principal.orgId)
    if (
      !(await this.seesAll(principal, org?.teamVisibility)) &&
      !(await this.store.org(principal.orgId).teams.isMember(team.id, principal.userId ?? ''))
    )
      throw notFound('team')
    return team
  }
}
