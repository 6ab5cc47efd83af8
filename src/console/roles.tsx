import { useEffect, useState } from 'preact/hooks'
import type { RoleEntitlement, Role as RoleView } from '../modules/roles/model'
import { api } from './api'
import { ErrorNote, type PageProps, useList } from './ui'

export type Role = typeof RoleView.static
type Entitlement = typeof RoleEntitlement.static

const BUILT_IN_NAMES: Record<string, string> = { owner: 'Owner', admin: 'Admin', member: 'Member' }

export const rolesPath = (orgId: string) => `/v1/organization/${encodeURIComponent(orgId)}/roles`

/** A role as people read it: a built-in one by its name, a custom one by the name it was given. */
export function roleName(roleId: string, roles: readonly Role[] | undefined): string {
  const builtIn = BUILT_IN_NAMES[roleId]
  if (builtIn) return builtIn
  const custom = roles?.find((role) => role.id === roleId)
  if (!custom) return roleId
  // The API lets holders of an archived role keep it, with a Member's permissions.
  return custom.archivedAt ? `${custom.name} (archived: acts as Member)` : custom.name
}

/** The roles a member can be given, the least first: never the Owner's, which moves only by transfer, nor an archived one. */
export const assignableRoles = (roles: readonly Role[] | undefined): Array<{ id: string; name: string }> => [
  { id: 'member', name: 'Member' },
  { id: 'admin', name: 'Admin' },
  ...(roles ?? []).filter((role) => !role.builtIn && !role.archivedAt),
]

function PermissionList({ permissions }: { permissions: readonly string[] }) {
  return (
    <ul class="perms">
      {permissions.map((permission) => (
        <li key={permission}>
          <code>{permission}</code>
        </li>
      ))}
    </ul>
  )
}

interface RoleFormProps {
  label: string
  choices: readonly string[]
  name?: string
  permissions?: readonly string[]
  submit: string
  onSubmit(name: string, permissions: string[]): Promise<boolean>
  onCancel?(): void
}

/** The name and permissions of a custom role; `org.read` is shown held, since the API adds it to every role. */
function RoleForm({ label, choices, name, permissions = [], submit, onSubmit, onCancel }: RoleFormProps) {
  const send = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const data = new FormData(form)
    const saved = await onSubmit(String(data.get('name')), data.getAll('permission').map(String))
    if (saved && !onCancel) form.reset()
  }
  return (
    <form class="role-form" onSubmit={send} aria-label={label}>
      <label>
        Name
        <input name="name" required maxLength={200} defaultValue={name} />
      </label>
      <fieldset>
        <legend>Permissions</legend>
        {choices.map((permission) =>
          permission === 'org.read' ? (
            <label class="check" key={permission}>
              <input type="checkbox" checked disabled /> org.read (every role)
            </label>
          ) : (
            <label class="check" key={permission}>
              <input type="checkbox" name="permission" value={permission} defaultChecked={permissions.includes(permission)} />{' '}
              {permission}
            </label>
          ),
        )}
      </fieldset>
      <div class="row-actions">
        <button type="submit">{submit}</button>
        {onCancel && (
          <button type="button" class="quiet" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  )
}

/** The built-in roles and the organisation's custom ones; custom roles are made and changed on the Enterprise tier. */
export function Roles({ orgId, can }: PageProps) {
  const path = rolesPath(orgId)
  const { items: roles, error, change } = useList<Role>(path)
  const [entitlement, setEntitlement] = useState<Entitlement>()
  const [editing, setEditing] = useState<string>()
  useEffect(() => {
    api<Entitlement>('GET', `${path}/entitlement`)
      .then(setEntitlement)
      .catch(() => setEntitlement(undefined))
  }, [path])
  const canWrite = can('org.members.write')
  const canChange = canWrite && entitlement?.customRoles === true
  // What a custom role may hold is what Admin holds: every permission but `ownership`.
  const choices = roles?.find((role) => role.id === 'admin')?.permissions ?? []

  const create = (name: string, permissions: string[]) => change(() => api('POST', path, { name, permissions }))
  const update = async (role: Role, name: string, permissions: string[]) => {
    const saved = await change(() => api('PATCH', `${path}/${encodeURIComponent(role.id)}`, { name, permissions }))
    if (saved) setEditing(undefined)
    return saved
  }
  const archive = (role: Role) => change(() => api('POST', `${path}/${encodeURIComponent(role.id)}/archive`))
  const columns = canChange ? 4 : 3

  return (
    <section class="people" aria-labelledby="roles">
      <h1 id="roles">Roles</h1>
      <p class="muted">What each role may do. Built-in roles never change; a member holds one role.</p>
      <ErrorNote error={error} />
      {canWrite && entitlement && !entitlement.customRoles && (
        <p class="card note">
          Custom roles need the {entitlement.requiredTier} tier; this organization is on {entitlement.tier}.
        </p>
      )}
      {canChange && roles && <RoleForm label="New custom role" choices={choices} submit="Create role" onSubmit={create} />}
      {!roles && !error && <p class="muted">Loading…</p>}
      {roles && (
        <table class="stack">
          <thead>
            <tr>
              <th scope="col">Role</th>
              <th scope="col">Permissions</th>
              <th scope="col">Created</th>
              {canChange && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {roles.map((role) =>
              editing === role.id ? (
                <tr key={role.id}>
                  <td colSpan={columns}>
                    <RoleForm
                      label={`Edit ${role.name}`}
                      choices={choices}
                      name={role.name}
                      permissions={role.permissions}
                      submit="Save role"
                      onSubmit={(name, permissions) => update(role, name, permissions)}
                      onCancel={() => setEditing(undefined)}
                    />
                  </td>
                </tr>
              ) : (
                <tr key={role.id}>
                  <td data-label="Role">
                    <strong>{role.builtIn ? roleName(role.id, undefined) : role.name}</strong>
                    <div class="muted">
                      {role.builtIn
                        ? 'built-in'
                        : role.archivedAt
                          ? `archived ${new Date(role.archivedAt).toLocaleString()}`
                          : 'custom'}
                    </div>
                  </td>
                  <td data-label="Permissions">
                    <PermissionList permissions={role.permissions} />
                  </td>
                  <td data-label="Created">{role.createdAt ? new Date(role.createdAt).toLocaleString() : '-'}</td>
                  {canChange && (
                    <td data-label="Actions">
                      {!role.builtIn && !role.archivedAt && (
                        <div class="row-actions">
                          <button
                            type="button"
                            class="quiet"
                            onClick={() => setEditing(role.id)}
                            aria-label={`Edit ${role.name}`}
                          >
                            Edit
                          </button>
                          <button type="button" class="quiet" onClick={() => archive(role)} aria-label={`Archive ${role.name}`}>
                            Archive
                          </button>
                        </div>
                      )}
                    </td>
                  )}
                </tr>
              ),
            )}
          </tbody>
        </table>
      )}
    </section>
  )
}
