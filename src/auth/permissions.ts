/**
 * The permission catalogue of spec section 5.3 and the three built-in roles of section 2.4.
 * Everything that decides "may this principal do that" reads these constants.
 */
export const PERMISSIONS = [
  'org.read',
  'traffic.read',
  'traffic.annotate',
  'org.settings.write',
  'org.members.write',
  'spend_controls.write',
  'gateway_config.write',
  'keys.write',
  'provider_keys.write',
  'egress.write',
  'governance.write',
  'reports.read',
  'audit.read',
  'billing.write',
  'playground.use',
  'ownership',
] as const

export type Permission = (typeof PERMISSIONS)[number]

/**
 * Permissions whose routes only read, whatever their method: their POST routes carry filters in the
 * body, and change nothing, so they are not audited as writes (they would flood the audit log).
 */
export const READ_ONLY_PERMISSIONS: ReadonlySet<Permission> = new Set(['traffic.read', 'reports.read', 'audit.read'])

export const isPermission = (value: string): value is Permission => (PERMISSIONS as readonly string[]).includes(value)

export const BUILT_IN_ROLES = ['owner', 'admin', 'member'] as const
export type BuiltInRole = (typeof BUILT_IN_ROLES)[number]

export const isBuiltInRole = (value: string): value is BuiltInRole => (BUILT_IN_ROLES as readonly string[]).includes(value)

/** Member's set is also exactly what an API key may ever hold (spec 5.3 rule 1). */
export const MEMBER_PERMISSIONS: readonly Permission[] = ['org.read', 'traffic.read', 'traffic.annotate']

export const BUILT_IN_ROLE_PERMISSIONS: Record<BuiltInRole, readonly Permission[]> = {
  owner: PERMISSIONS,
  admin: PERMISSIONS.filter((p) => p !== 'ownership'),
  member: MEMBER_PERMISSIONS,
}

/**
 * The permissions a custom role really grants: `ownership` can be given to no role, and `org.read`
 * is held by every role whatever it was saved with (spec 2.4).
 */
export function customRolePermissions(saved: readonly string[]): Permission[] {
  const granted = new Set<Permission>(['org.read'])
  for (const p of saved) if (isPermission(p) && p !== 'ownership') granted.add(p)
  return PERMISSIONS.filter((p) => granted.has(p))
}
