import { useState } from 'preact/hooks'
import type { AddedMember, ListedMember } from '../modules/members/model'
import { api } from './api'
import { assignableRoles, type Role, roleName, rolesPath } from './roles'
import { ErrorNote, type PageProps, ShownOnce, useList } from './ui'

export type Member = typeof ListedMember.static

export const membersPath = (orgId: string) => `/v1/organization/${encodeURIComponent(orgId)}/members`

interface RoleChangeProps {
  member: Member
  options: ReadonlyArray<{ id: string; name: string }>
  current: string
  onSave(role: string): void
}

/** A role picked, then saved: a select that saved on change would save every role a keyboard passes through. */
function RoleChange({ member, options, current, onSave }: RoleChangeProps) {
  const [role, setRole] = useState(member.role)
  const held = options.some((option) => option.id === member.role)
  return (
    <form
      class="row-form"
      onSubmit={(event) => {
        event.preventDefault()
        onSave(role)
      }}
    >
      <select aria-label={`Role of ${member.email}`} value={role} onChange={(event) => setRole(event.currentTarget.value)}>
        {!held && (
          <option value={member.role} disabled>
            {current}
          </option>
        )}
        {options.map((option) => (
          <option key={option.id} value={option.id}>
            {option.name}
          </option>
        ))}
      </select>
      <button type="submit" class="quiet" disabled={role === member.role} aria-label={`Save the role of ${member.email}`}>
        Save
      </button>
    </form>
  )
}

/** The organisation's members: adding one (a new person's invite shown once), their roles, removing, and the Owner's transfer. */
export function Members({ orgId, userId, can, reloadPermissions }: PageProps) {
  const base = `/v1/organization/${encodeURIComponent(orgId)}`
  const { items: members, error, change } = useList<Member>(membersPath(orgId))
  const { items: roles, error: rolesError } = useList<Role>(rolesPath(orgId))
  const [invite, setInvite] = useState<{ email: string; token: string; expiresAt: string }>()
  const [notice, setNotice] = useState<string>()
  const [transferTo, setTransferTo] = useState<Member>()
  const canWrite = can('org.members.write')
  const canTransfer = can('ownership')
  const options = assignableRoles(roles)

  const act = async (action: () => Promise<unknown>, done: string) => {
    setNotice(undefined)
    if (await change(action)) setNotice(done)
  }
  const add = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const data = new FormData(form)
    const email = String(data.get('email'))
    setInvite(undefined)
    setNotice(undefined)
    const added = await change(async () => {
      const answer = await api<typeof AddedMember.static>('POST', `${base}/add_member`, { email, role: data.get('role') })
      if (answer.inviteToken && answer.inviteExpiresAt)
        setInvite({ email, token: answer.inviteToken, expiresAt: answer.inviteExpiresAt })
      else setNotice(`${email} was added; they sign in with the password they already have.`)
    })
    if (added) form.reset()
  }
  const updateRole = (member: Member, role: string) =>
    act(
      () => api('POST', `${base}/update_member`, { userId: member.userId, role }),
      `${member.email} is now ${roleName(role, roles)}.`,
    )
  const remove = (member: Member) =>
    act(() => api('DELETE', `${base}/remove_member`, { userId: member.userId }), `${member.email} was removed.`)
  const transfer = (member: Member) =>
    act(async () => {
      await api('POST', `${base}/update_owner`, { userId: member.userId })
      setTransferTo(undefined)
      // Ownership has moved: every page now shows what an Admin may do.
      reloadPermissions()
    }, `${member.email} is now the Owner; you are an Admin.`)

  const showActions = canWrite || canTransfer
  return (
    <section class="people" aria-labelledby="members">
      <h1 id="members">Members</h1>
      <ErrorNote error={error ?? rolesError} />
      {notice && (
        <p class="muted" role="status">
          {notice}
        </p>
      )}
      {invite && (
        <ShownOnce secret={invite.token} done="I have sent it" onDone={() => setInvite(undefined)}>
          <strong>{invite.email}</strong> has no password yet. This invite token is shown this once (gw keeps only its hash) and
          expires {new Date(invite.expiresAt).toLocaleString()}. Send it to them: they choose their password with it at{' '}
          <code>POST /v1/auth/accept-invite</code>.
        </ShownOnce>
      )}
      {transferTo && (
        <div class="card confirm">
          <p>
            Transfer ownership to <strong>{transferTo.email}</strong>? They alone will be able to transfer it again or delete the
            organization, and you become an Admin.
          </p>
          <div class="actions">
            <button type="button" class="danger" onClick={() => transfer(transferTo)}>
              Confirm transfer to {transferTo.email}
            </button>
            <button type="button" class="quiet" onClick={() => setTransferTo(undefined)}>
              Cancel
            </button>
          </div>
        </div>
      )}
      {canWrite && (
        <form class="inline" onSubmit={add} aria-label="Add a member">
          <label>
            Email
            <input name="email" type="email" required maxLength={320} />
          </label>
          <label>
            Role
            <select name="role">
              {options.map((option) => (
                <option key={option.id} value={option.id}>
                  {option.name}
                </option>
              ))}
            </select>
          </label>
          <button type="submit">Add member</button>
        </form>
      )}
      {!members && !error && <p class="muted">Loading…</p>}
      {members && (
        <table class="stack">
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Joined</th>
              {showActions && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {members.map((member) => {
              const isOwner = member.role === 'owner'
              const isSelf = member.userId === userId
              return (
                <tr key={`${member.userId}:${member.role}`}>
                  <td data-label="Email">
                    {member.email}
                    {isSelf && <span class="muted"> (you)</span>}
                  </td>
                  <td data-label="Role">
                    {canWrite && !isOwner && !isSelf ? (
                      <RoleChange
                        member={member}
                        options={options}
                        current={roleName(member.role, roles)}
                        onSave={(role) => updateRole(member, role)}
                      />
                    ) : (
                      roleName(member.role, roles)
                    )}
                  </td>
                  <td data-label="Joined">{new Date(member.joinedAt).toLocaleString()}</td>
                  {showActions && (
                    <td data-label="Actions">
                      {!isOwner && (
                        <div class="row-actions">
                          {canWrite && !isSelf && (
                            <button
                              type="button"
                              class="quiet"
                              onClick={() => remove(member)}
                              aria-label={`Remove ${member.email}`}
                            >
                              Remove
                            </button>
                          )}
                          {canTransfer && (
                            <button
                              type="button"
                              class="quiet"
                              onClick={() => setTransferTo(member)}
                              aria-label={`Transfer ownership to ${member.email}`}
                            >
                              Make Owner
                            </button>
                          )}
                        </div>
                      )}
                    </td>
                  )}
                </tr>
              )
            })}
          </tbody>
        </table>
      )}
    </section>
  )
}
