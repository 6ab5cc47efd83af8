import { useEffect, useState } from 'preact/hooks'
import type { TeamMember as TeamMemberView, Team as TeamView, Visibility as VisibilityView } from '../modules/teams/model'
import { api } from './api'
import { type Member, membersPath } from './members'
import { ErrorNote, type PageProps, useList } from './ui'

type Team = typeof TeamView.static
type TeamMember = typeof TeamMemberView.static
type Visibility = (typeof VisibilityView.static)['mode']

const VISIBILITY: Record<Visibility, string> = {
  all: 'everyone sees every team',
  members: 'people see only their own teams (those who manage members see all)',
}

interface TeamCardProps {
  team: Team
  people: readonly Member[]
  canWrite: boolean
  onRename(name: string): Promise<boolean>
  onDelete(): void
}

/** One team with its members (named by their email), and for those who may, adding, removing, renaming and deleting. */
function TeamCard({ team, people, canWrite, onRename, onDelete }: TeamCardProps) {
  const teamPath = `/v1/team/${encodeURIComponent(team.id)}`
  const { items: members, error, change } = useList<TeamMember>(`${teamPath}/members`)
  const [renaming, setRenaming] = useState(false)
  const email = (userId: string) => people.find((person) => person.userId === userId)?.email ?? userId
  const addable = people.filter((person) => !members?.some((member) => member.userId === person.userId))
  const headingId = `team-${team.id}`

  const add = (event: Event) => {
    event.preventDefault()
    const userId = new FormData(event.currentTarget as HTMLFormElement).get('userId')
    change(() => api('POST', `${teamPath}/member`, { userId }))
  }
  const remove = (userId: string) => change(() => api('DELETE', `${teamPath}/member`, { userId }))
  const rename = async (event: Event) => {
    event.preventDefault()
    const name = String(new FormData(event.currentTarget as HTMLFormElement).get('name'))
    if (await onRename(name)) setRenaming(false)
  }

  return (
    <article class="card team" aria-labelledby={headingId}>
      <h2 id={headingId}>{team.name}</h2>
      <p class="muted">Created {new Date(team.createdAt).toLocaleString()}</p>
      <ErrorNote error={error} />
      {!members && !error && <p class="muted">Loading…</p>}
      {members && members.length === 0 && <p class="muted">No members yet.</p>}
      {members && members.length > 0 && (
        <ul class="team-members" aria-label={`Members of ${team.name}`}>
          {members.map((member) => (
            <li key={member.userId}>
              <span>{email(member.userId)}</span>
              {canWrite && (
                <button
                  type="button"
                  class="quiet"
                  onClick={() => remove(member.userId)}
                  aria-label={`Remove ${email(member.userId)} from ${team.name}`}
                >
                  Remove
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {canWrite && members && addable.length > 0 && (
        <form class="row-form" onSubmit={add}>
          <label>
            Add a member
            <select name="userId" aria-label={`Add a member to ${team.name}`}>
              {addable.map((person) => (
                <option key={person.userId} value={person.userId}>
                  {person.email}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" aria-label={`Add to ${team.name}`}>
            Add
          </button>
        </form>
      )}
      {canWrite && renaming && (
        <form class="row-form" onSubmit={rename}>
          <label>
            New name
            <input name="name" required maxLength={200} defaultValue={team.name} aria-label={`New name for ${team.name}`} />
          </label>
          <button type="submit">Save name</button>
          <button type="button" class="quiet" onClick={() => setRenaming(false)}>
            Cancel
          </button>
        </form>
      )}
      {canWrite && !renaming && (
        <div class="row-actions">
          <button type="button" class="quiet" onClick={() => setRenaming(true)} aria-label={`Rename ${team.name}`}>
            Rename
          </button>
          <button type="button" class="quiet" onClick={onDelete} aria-label={`Delete ${team.name}`}>
            Delete
          </button>
        </div>
      )}
    </article>
  )
}

/** Who sees which teams, picked then saved (a select's `defaultValue` is not applied by Preact, so the choice is held here). */
function VisibilityForm({ saved, onSave }: { saved: Visibility; onSave(mode: Visibility): void }) {
  const [mode, setMode] = useState(saved)
  return (
    <form
      class="inline"
      onSubmit={(event) => {
        event.preventDefault()
        onSave(mode)
      }}
    >
      <label>
        Who sees the teams
        <select value={mode} onChange={(event) => setMode(event.currentTarget.value as Visibility)}>
          <option value="all">Everyone sees every team</option>
          <option value="members">People see only their own teams</option>
        </select>
      </label>
      <button type="submit" class="quiet" disabled={mode === saved}>
        Save visibility
      </button>
    </form>
  )
}

/** The organisation's teams, who is in each, and who may see which. */
export function Teams({ orgId, can }: PageProps) {
  const { items: teams, error, change } = useList<Team>('/v1/team')
  const { items: people, error: peopleError } = useList<Member>(membersPath(orgId))
  const [visibility, setVisibility] = useState<Visibility>()
  useEffect(() => {
    api<typeof VisibilityView.static>('GET', '/v1/team/settings/visibility')
      .then((answer) => setVisibility(answer.mode))
      .catch(() => setVisibility(undefined))
  }, [])
  const canWrite = can('org.members.write')

  const create = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const name = new FormData(form).get('name')
    if (await change(() => api('POST', '/v1/team', { name }))) form.reset()
  }
  const rename = (team: Team, name: string) => change(() => api('PUT', `/v1/team/${encodeURIComponent(team.id)}`, { name }))
  const remove = (team: Team) => change(() => api('DELETE', `/v1/team/${encodeURIComponent(team.id)}`))
  const saveVisibility = (mode: Visibility) =>
    change(async () =>
      setVisibility((await api<typeof VisibilityView.static>('PUT', '/v1/team/settings/visibility', { mode })).mode),
    )

  return (
    <section class="people" aria-labelledby="teams">
      <h1 id="teams">Teams</h1>
      {visibility && !canWrite && <p class="muted">Visibility: {VISIBILITY[visibility]}.</p>}
      <ErrorNote error={error ?? peopleError} />
      {canWrite && visibility && <VisibilityForm key={visibility} saved={visibility} onSave={saveVisibility} />}
      {canWrite && (
        <form class="inline" onSubmit={create} aria-label="New team">
          <label>
            Team name
            <input name="name" required maxLength={200} />
          </label>
          <button type="submit">Create team</button>
        </form>
      )}
      {(!teams || !people) && !error && !peopleError && <p class="muted">Loading…</p>}
      {teams && teams.length === 0 && <p class="muted">No teams yet.</p>}
      {teams && people && teams.length > 0 && (
        <div class="teams">
          {teams.map((team) => (
            <TeamCard
              key={team.id}
              team={team}
              people={people}
              canWrite={canWrite}
              onRename={(name) => rename(team, name)}
              onDelete={() => remove(team)}
            />
          ))}
        </div>
      )}
    </section>
  )
}
