import { auditEntry } from '../../audit/entry'
import { userForEmail } from '../../auth/accounts'
import type { Authenticator } from '../../auth/authenticator'
import type { CredentialIssuer } from '../../auth/issuer'
import { hashPassword } from '../../auth/passwords'
import { isBuiltInRole } from '../../auth/permissions'
import type { Principal } from '../../auth/principal'
import { badRequest, conflict, forbidden, notFound } from '../../errors'
import type { Store } from '../../store/store'

export interface AddMemberInput {
  orgId: string
  email: string
  role: string
  password?: string
}

/** The roles `add_member` and `update_member` may give: never `owner`, which moves only by transfer. */
async function assignableRole(store: Store, orgId: string, role: string): Promise<string> {
  if (role === 'owner') throw badRequest('ownership moves only by transfer (POST /v1/organization/{id}/update_owner)')
  if (isBuiltInRole(role)) return role
  const custom = await store.roles.get(orgId, role)
  if (!custom || custom.archivedAt !== null)
    throw badRequest(`role ${role} is not admin, member or a custom role of this organization`)
  return role
}

export class MembersService {
  constructor(
    private readonly store: Store,
    private readonly issuer: CredentialIssuer,
    private readonly authenticator: Authenticator,
  ) {}

  /**
   * `add_member`: a person joins with a role. Someone new (or without a password yet) gets a one-time
   * invite token, shown once, that POST /v1/auth/accept-invite turns into a password and a session.
   */
  async invite(principal: Principal, input: { email: string; role: string }) {
    const role = await assignableRole(this.store, principal.orgId, input.role)
    return this.store.transaction(async (tx) => {
      const userId = await userForEmail(tx, input.email)
      if (await tx.memberships.get(principal.orgId, userId))
        throw conflict(`${input.email} is already a member of this organization`)
      await tx.memberships.add({ orgId: principal.orgId, userId, role, createdAt: new Date() })
      const user = await tx.users.get(userId)
      const invite = user?.passwordHash ? undefined : await this.issuer.invite(tx, userId, principal.orgId)
      return {
        id: userId,
        userId,
        role,
        ...(invite ? { inviteToken: invite.inviteToken, inviteExpiresAt: invite.expiresAt.toISOString() } : {}),
      }
    })
  }

  /** `update_member`: a new role, in force on the member's next request. */
  async updateRole(principal: Principal, input: { userId: string; role: string }) {
    await this.guard(principal, input.userId, 'change the role of')
    const role = await assignableRole(this.store, principal.orgId, input.role)
    await this.store.memberships.setRole(principal.orgId, input.userId, role)
    await this.authenticator.forgetSessions(await this.store.sessions.listLiveInOrg(principal.orgId, input.userId))
    return { id: input.userId, userId: input.userId, role }
  }

  /** `remove_member`: the membership goes, and every session the person had here ends at once. */
  async remove(principal: Principal, userId: string) {
    const target = await this.store.memberships.get(principal.orgId, userId)
    if (!target) throw notFound('member')
    if (target.role === 'owner') throw forbidden('the Owner cannot be removed; transfer ownership first')
    const ended = await this.store.transaction(async (tx) => {
      await tx.memberships.remove(principal.orgId, userId)
      return tx.sessions.revokeAllInOrg(principal.orgId, userId, new Date())
    })
    await this.authenticator.forgetSessions(ended)
    return { id: userId, userId, removed: true }
  }

  /** The invariants of spec 2.4 that concern one member: no one changes their own role; the Owner's moves only by transfer. */
  private async guard(principal: Principal, userId: string, what: string): Promise<void> {
    const target = await this.store.memberships.get(principal.orgId, userId)
    if (!target) throw notFound('member')
    if (principal.userId === userId) throw forbidden(`nobody can ${what} themselves`)
    if (target.role === 'owner') throw forbidden(`nobody can ${what} the Owner; ownership moves only by transfer`)
  }

  /** Adds a person to an organisation with a role and opens a session for them (the CLI's `member add`). */
  async add(input: AddMemberInput): Promise<{ userId: string; sessionToken: string }> {
    const org = await this.store.organizations.get(input.orgId)
    if (!org) throw notFound('organization')
    // The CLI may seat an Owner, but only where there is none: there is exactly one (spec 2.4).
    if (input.role === 'owner') {
      if (await this.store.memberships.ownerOf(org.id))
        throw conflict('the organization already has an owner; ownership moves only by transfer')
    } else {
      await assignableRole(this.store, org.id, input.role)
    }
    const passwordHash = input.password ? await hashPassword(input.password) : undefined
    return this.store.transaction(async (tx) => {
      const userId = await userForEmail(tx, input.email)
      if (await tx.memberships.get(org.id, userId)) throw conflict(`${input.email} is already a member of this organization`)
      if (passwordHash) await tx.users.setPasswordHash(userId, passwordHash)
      await tx.memberships.add({ orgId: org.id, userId, role: input.role, createdAt: new Date() })
      const session = await this.issuer.session(tx, userId, org.id)
      await tx.audit.append(
        auditEntry({ kind: 'cli', id: null, orgId: org.id }, 'member.add', `user:${userId}`, { detail: { role: input.role } }),
      )
      return { userId, sessionToken: session.sessionToken }
    })
  }
}
